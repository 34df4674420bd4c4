// kubectl fip release's pure parts: the entries sent to POST /v1/ip, the plan by floatip's release
// rule, and the verdicts read from floatip's answer.
import { entryOf, formatVerdicts, plan, targets, verdicts } from '../../../src/fip/release.js';
import { fipObject, pod, snapshot } from './world.js';

test('each key is sent as the owner galaxy reads back from the entry', () => {
  expect(entryOf('10.2.0.10', 'dp_ns_web_web-a')).toEqual({
    ip: '10.2.0.10',
    namespace: 'ns',
    appName: 'web',
    podName: 'web-a',
    appType: 'deployment',
  });
  expect(entryOf('10.2.0.10', 'dp_ns_web_')).toEqual({
    ip: '10.2.0.10',
    namespace: 'ns',
    appName: 'web',
    appType: 'deployment',
  });
  expect(entryOf('10.2.0.10', 'pool__p_')).toEqual({ ip: '10.2.0.10', poolName: 'p' });
  expect(entryOf('10.2.0.10', 'pool__p_sts_ns_db_db-0')).toEqual({
    ip: '10.2.0.10',
    namespace: 'ns',
    appName: 'db',
    podName: 'db-0',
    poolName: 'p',
    appType: 'statefulset',
  });
  expect(entryOf('10.2.0.10', 'garbage')).toBeUndefined();
});

const world = () =>
  snapshot({
    floatingIPs: [
      fipObject('10.2.0.10', 'NULL_ns_NULL_a', { node: 'n1', uid: 'uid-a' }),
      fipObject('10.2.0.11', 'NULL_ns_NULL_gone', { node: 'n1', uid: 'uid-gone' }),
      fipObject('10.2.0.12', 'dp_ns_web_', { policy: 2 }),
      fipObject('10.2.0.13', 'pool__p_', { reserved: true }),
    ],
    pods: [pod('ns', 'a', { ips: ['10.2.0.10'] })],
  });

test("the plan: running pods and reserved addresses refused with the REST API's reasons, the rest released", () => {
  const s = world();
  const list = targets(s, {
    ips: ['10.2.0.10', '10.2.0.11', '10.2.0.12', '10.2.0.13', '10.2.0.18', '10.9.0.1'],
    namespace: 'ns',
  });
  expect(plan(s, list).map((v) => [v.ip, v.release, v.why])).toEqual([
    [
      '10.2.0.10',
      false,
      'releasable is false, pod status Running (pod ns_a (uid uid-a) has not finished (phase Running))',
    ],
    ['10.2.0.11', true, ''],
    ['10.2.0.12', true, ''],
    [
      '10.2.0.13',
      false,
      'releasable is false: 10.2.0.13 is reserved (its FloatingIP 10.2.0.13 has the label "reserved"; remove the label or the object to free it)',
    ],
    ['10.2.0.18', false, '10.2.0.18 is not allocated (no FloatingIP object)'],
    ['10.9.0.1', false, '10.9.0.1 is not in any configured range and has no FloatingIP object'],
  ]);
  expect(() => targets(s, { ips: ['nope'], namespace: 'ns' })).toThrow('"nope" is not an IP address');
});

test('--pod and --app select by key within the namespace, parked keys included', () => {
  const s = world();
  expect(targets(s, { ips: [], namespace: 'ns', app: 'web' }).map((t) => t.ip)).toEqual(['10.2.0.12']);
  expect(targets(s, { ips: [], namespace: 'ns', pod: 'gone' }).map((t) => t.ip)).toEqual(['10.2.0.11']);
  expect(targets(s, { ips: [], namespace: 'other', pod: 'gone' })).toEqual([]);
});

test("floatip's answer decides the outcome: what it left carries its reason", () => {
  const s = world();
  const list = targets(s, { ips: ['10.2.0.11', '10.2.0.12'], namespace: 'ns' });
  const done = verdicts(list, {
    code: 202,
    message: '',
    unreleased: ['10.2.0.12'],
    reasons: ['ip allocated to another pod dp_ns_web_web-b'],
    details: ['the request names dp_ns_web_'],
  });
  expect(formatVerdicts(done, true)).toBe(
    'IP          KEY                 VERDICT        WHY\n' +
      '10.2.0.11   NULL_ns_NULL_gone   released\n' +
      '10.2.0.12   dp_ns_web_          not released   ip allocated to another pod dp_ns_web_web-b (the request names dp_ns_web_)\n',
  );
});
