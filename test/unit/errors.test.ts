// Every error floatip raises has a kind of the one taxonomy (src/ipam/errors.ts), so each edge can
// map it once: the REST API to a status, bind to an Event reason, the release queue to retry or not.
import { BindError } from '../../src/extender/binding.js';
import { WireError } from '../../src/extender/wire-fields.js';
import { CniArgsError } from '../../src/cni/args.js';
import { GalaxyConfigError } from '../../src/config/galaxy-config.js';
import * as ipam from '../../src/ipam/index.js';
import { KubeApiError } from '../../src/kube/custom-resources.js';
import { NotLeaderError } from '../../src/kube/leader-election.js';
import { ListenError } from '../../src/ports.js';
import { StaleDecisionError } from '../../src/store/floating-ip-store.js';

const { kindOf } = ipam;

test.each<[string, unknown, ipam.ErrorKind]>([
  ['InvalidAddressError', new ipam.InvalidAddressError('x'), 'validation'],
  ['InvalidRangeError', new ipam.InvalidRangeError('x'), 'validation'],
  ['InvalidConfigError', new ipam.InvalidConfigError([]), 'validation'],
  ['NoFreeIPError', new ipam.NoFreeIPError('k', 's', 'none'), 'wait'],
  ['NotInConfigError', new ipam.NotInConfigError('10.0.0.1'), 'validation'],
  ['NotAllocatedError', new ipam.NotAllocatedError('10.0.0.1'), 'conflict'],
  ['AlreadyAllocatedError', new ipam.AlreadyAllocatedError('10.0.0.1', 'k'), 'conflict'],
  ['OwnerConflictError', new ipam.OwnerConflictError('10.0.0.1', 'a', 'b'), 'conflict'],
  ['ReservedIPError', new ipam.ReservedIPError('10.0.0.1', 'k'), 'conflict'],
  ['NoParkedIPError', new ipam.NoParkedIPError('k', 's'), 'conflict'],
  ['UnsupportedAppTypeError', new ipam.UnsupportedAppTypeError('ns/p'), 'validation'],
  ['NodeSubnetError', new ipam.NodeSubnetError('FloatingIPPlugin:UnknowNode', []), 'validation'],
  ['PolicyNotSupportedError', new ipam.PolicyNotSupportedError('x'), 'validation'],
  ['AppLimitError', new ipam.AppLimitError('x', 'dp_ns_app_'), 'wait'],
  ['WaitingForDeleteError', new ipam.WaitingForDeleteError('k'), 'wait'],
  ['StaleDecisionError', new StaleDecisionError('10.0.0.1', 1n), 'conflict'],
  ['NotLeaderError', new NotLeaderError('kube-system/galaxy-ipam', 'me', undefined, 'x'), 'unavailable'],
  ['KubeApiError 409', new KubeApiError(409, 'Conflict', 'x'), 'conflict'],
  ['KubeApiError 404', new KubeApiError(404, 'NotFound', 'x'), 'conflict'],
  ['KubeApiError 422', new KubeApiError(422, 'Invalid', 'x'), 'validation'],
  ['KubeApiError 403', new KubeApiError(403, 'Forbidden', 'x'), 'unavailable'],
  ['KubeApiError 503', new KubeApiError(503, '', 'x'), 'transient'],
  ['KubeApiError unreachable', new KubeApiError(0, '', 'x'), 'transient'],
  ['WireError', new WireError('x'), 'validation'],
  ['CniArgsError', new CniArgsError('x'), 'validation'],
  ['GalaxyConfigError', new GalaxyConfigError('x'), 'validation'],
  ['ListenError', new ListenError('x'), 'unavailable'],
  ['BindError', new BindError('x', 'conflict'), 'conflict'],
])('%s is %s', (_name, err, kind) => {
  expect(kindOf(err)).toBe(kind);
});

test('an error nobody classified has no kind: the edges answer it as a server error', () => {
  expect(kindOf(new Error('x'))).toBeUndefined();
  expect(kindOf({ kind: 'made-up' })).toBeUndefined();
  expect(kindOf(undefined)).toBeUndefined();
});
