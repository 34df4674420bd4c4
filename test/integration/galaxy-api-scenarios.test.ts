// galaxy's unit-test scenarios of its API and constant packages (tkestack/galaxy, pkg/api) where
// their effect is only visible over the wire: the `k8s.v1.cni.galaxy.io/args` annotation bind
// writes (constant_test.go TestFormatParseIPInfo, constant.go MarshalCniArgs), filter's and bind's
// refusal of an annotation galaxy cannot decode (UnmarshalCniArgs), and the release policy a
// pod's annotation gives its FloatingIP object (ConvertReleasePolicy). The pure decoders' side is
// test/unit/galaxy-api-scenarios.test.ts.
import type { V1Pod } from '@kubernetes/client-node';
import { CNI_ARGS_ANNOTATION } from '../../src/cni/args.js';
import { RELEASE_POLICY_ANNOTATION } from '../../src/pods/pod-facts.js';
import { World } from './world.js';

// TestFormatParseIPInfo's addresses: 192.168.0.2 (VLAN 2) and 192.168.0.3 (VLAN 3), mask
// 255.255.0.0, gateway 192.168.0.1; the first pool has more addresses for the other scenarios
const CONFIG = [
  {
    nodeSubnets: ['10.1.0.0/24'],
    ips: ['192.168.0.2', '192.168.0.10~192.168.0.20'],
    subnet: '192.168.0.0/16',
    gateway: '192.168.0.1',
    vlan: 2,
  },
  {
    nodeSubnets: ['10.1.0.0/24'],
    ips: ['192.168.0.3'],
    subnet: '192.168.0.0/16',
    gateway: '192.168.0.1',
    vlan: 3,
  },
];
const NODE = 'node1';

let world: World;

beforeEach(async () => {
  world = await World.start({ config: CONFIG });
  await world.node(NODE, '10.1.0.5');
});

afterEach(() => world.checkAndStop({ settle: true }));

/** A StatefulSet's pod with its annotations as given, once floatip has it. */
const stsPod = (name: string, annotations: Record<string, string> = {}): Promise<V1Pod> =>
  world.rawPod(name, { annotations, owner: { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'sts' } });

/** filter passes the node, bind succeeds; the annotation bind wrote, as written. */
async function bound(pod: V1Pod): Promise<string> {
  const filtered = await world.filter(pod, [NODE]);
  expect({ passed: filtered.passed, error: filtered.error ?? '' }).toEqual({ passed: [NODE], error: '' });
  expect(await world.bind(pod, NODE)).toBe('');
  const read = await world.readPod(pod.metadata!.name!);
  return read.metadata?.annotations?.[CNI_ARGS_ANNOTATION] ?? '';
}

async function policyOfObject(ip: string): Promise<number> {
  const obj = (await world.custom.getClusterCustomObject({
    group: 'galaxy.k8s.io',
    version: 'v1alpha1',
    plural: 'floatingips',
    name: ip,
  })) as { spec: { policy: number } };
  return obj.spec.policy;
}

test('TestFormatParseIPInfo: bind writes the two ipinfos (VLANs 2 and 3, /16, one gateway) as galaxy formats them', async () => {
  const pod = await stsPod('sts-0', {
    [CNI_ARGS_ANNOTATION]: JSON.stringify({ request_ip_range: [['192.168.0.2'], ['192.168.0.3']] }),
  });
  expect(await bound(pod)).toBe(
    '{"request_ip_range":[["192.168.0.2"],["192.168.0.3"]],"common":{"ipinfos":[' +
      '{"ip":"192.168.0.2/16","vlan":2,"gateway":"192.168.0.1"},' +
      '{"ip":"192.168.0.3/16","vlan":3,"gateway":"192.168.0.1"}]}}',
  );
});

test('MarshalCniArgs: a pod without the annotation gets `{"common":{"ipinfos":[...]}}` alone, compact', async () => {
  const written = await bound(await stsPod('sts-0'));
  const ip = /"ip":"([\d.]+)\/16"/.exec(written)?.[1];
  const vlan = ip === '192.168.0.3' ? 3 : 2;
  expect(written).toBe(`{"common":{"ipinfos":[{"ip":"${ip}/16","vlan":${vlan},"gateway":"192.168.0.1"}]}}`);
});

test('UnmarshalCniArgs: bind re-serialises the request: `a~a` written `a`, unknown keys and common keys dropped', async () => {
  const pod = await stsPod('sts-0', {
    [CNI_ARGS_ANNOTATION]:
      '{"zzz":1, "request_ip_range": [["192.168.0.2~192.168.0.2"]], "common": {"other": "x"}}',
  });
  expect(await bound(pod)).toBe(
    '{"request_ip_range":[["192.168.0.2"]],"common":{"ipinfos":[{"ip":"192.168.0.2/16","vlan":2,"gateway":"192.168.0.1"}]}}',
  );
});

test('UnmarshalCniArgs: filter and bind refuse an annotation that is not JSON with "unmarshal pod cni args: "', async () => {
  const pod = await stsPod('sts-0', { [CNI_ARGS_ANNOTATION]: '{"request_ip_range":' });
  const filtered = await world.filter(pod, [NODE]);
  expect(filtered.passed).toEqual([]);
  expect(filtered.error).toMatch(/^unmarshal pod cni args: /);
  expect(await world.bind(pod, NODE)).toMatch(/unmarshal pod cni args: /);
  expect(world.held('sts_ns1_sts_sts-0')).toEqual([]);
});

test('UnmarshalCniArgs: an annotation carrying terminal escapes comes back written out, in the Error and the bind’s Event', async () => {
  const pod = await stsPod('sts-0', {
    [CNI_ARGS_ANNOTATION]: '{"request_ip_range":\u001b]0;pwned\u0007\u001b[2J\u202e<script>',
  });
  // kube-scheduler logs both and writes them into the pod's status; kubectl before v1.27 prints raw
  // eslint-disable-next-line no-control-regex -- control characters are what it looks for
  const steering = /[\u0000-\u001f\u007f-\u009f\u202e]/;
  const filtered = await world.filter(pod, [NODE]);
  expect(filtered.error).toMatch(/^unmarshal pod cni args: .*\\u001b/);
  expect(steering.test(filtered.error)).toBe(false);
  const bound = await world.bind(pod, NODE);
  expect(bound).toMatch(/unmarshal pod cni args: .*\\u001b/);
  expect(steering.test(bound)).toBe(false);
  await world.floatip.events.flush();
  const events = await world.core.listNamespacedEvent({ namespace: 'ns1' });
  const failed = events.items.filter((e) => e.reason === 'FloatingIPBindFailed').map((e) => e.message ?? '');
  expect(failed).toEqual([expect.stringMatching(/unmarshal pod cni args: .*\\u001b/)]);
  expect(steering.test(failed[0]!)).toBe(false);
});

test.each([
  ['never', 2],
  ['immutable', 1],
  ['Never', 0],
  ['IMMUTABLE', 0],
  ['', 0],
])('ConvertReleasePolicy: release-policy %j gives the FloatingIP object policy %d', async (value, policy) => {
  const pod = await stsPod('sts-0', { [RELEASE_POLICY_ANNOTATION]: value });
  await bound(pod);
  const [ip] = await world.addressesOf('sts-0');
  expect(await policyOfObject(ip!)).toBe(policy);
});
