// kubectl fip check on hand-built clusters: each finding, the report a person reads, and exit 1's rule.
import { check, formatCheck, problems } from '../../../src/fip/check.js';
import { fipObject, pod, snapshot } from './world.js';

const kinds = (s: ReturnType<typeof snapshot>) => check(s).map((f) => `${f.kind} ${f.ip}`);

test('a consistent cluster has no findings', () => {
  const s = snapshot({
    floatingIPs: [fipObject('10.2.0.10', 'NULL_ns_NULL_a', { node: 'n1', uid: 'uid-a' })],
    pods: [pod('ns', 'a', { ips: ['10.2.0.10'] })],
  });
  expect(check(s)).toEqual([]);
  expect(formatCheck(check(s))).toBe('no problems found\n');
});

test('two pods naming one address: a duplicate, and the copy disagrees with the object', () => {
  const s = snapshot({
    floatingIPs: [
      fipObject('10.2.0.10', 'NULL_ns_NULL_a', { node: 'n1', uid: 'uid-a' }),
      fipObject('10.2.0.11', 'NULL_ns_NULL_b', { node: 'n1', uid: 'uid-b' }),
    ],
    pods: [pod('ns', 'a', { ips: ['10.2.0.10'] }), pod('ns', 'b', { ips: ['10.2.0.10'] })],
  });
  expect(kinds(s).sort()).toEqual(['disagree 10.2.0.10', 'disagree 10.2.0.11', 'duplicate 10.2.0.10']);
  const dup = check(s).find((f) => f.kind === 'duplicate')!;
  expect(dup.what).toBe(
    'pods ns/a, ns/b all name 10.2.0.10 in their annotation; its object is held by NULL_ns_NULL_a (pod ns/a)',
  );
  expect(dup.fix).toContain('kubectl -n ns delete pod b');
  expect(dup.fix).not.toContain('delete pod a');
});

test("a gone pod's object is a leak candidate, with its policy and what floatip will do", () => {
  const s = snapshot({
    floatingIPs: [fipObject('10.2.0.12', 'sts_ns_db_db-1', { node: 'n1', uid: 'uid-old', policy: 1 })],
    statefulSets: [{ metadata: { namespace: 'ns', name: 'db' }, spec: { replicas: 1 } as never }],
  });
  const [leak] = check(s);
  expect(leak).toMatchObject({ kind: 'leaked', ip: '10.2.0.12', problem: true });
  expect(leak!.what).toBe(
    "10.2.0.12 (sts_ns_db_db-1, policy immutable, node n1): pod ns/db-1 (uid uid-old) no longer exists; floatip's resync will release it (deletedAndScaledDownAppPod: index 1 >= replicas 1)",
  );
});

test('an address kept on its key by policy for a pod that is gone is a note, not a problem', () => {
  const s = snapshot({
    floatingIPs: [fipObject('10.2.0.12', 'sts_ns_db_db-0', { policy: 1 })],
    statefulSets: [{ metadata: { namespace: 'ns', name: 'db' }, spec: { replicas: 1 } as never }],
  });
  const findings = check(s);
  expect(findings.map((f) => [f.kind, f.problem])).toEqual([['kept', false]]);
  expect(problems(findings)).toEqual([]);
  expect(formatCheck(findings)).toMatch(
    /^no problems found\n\nkept by their policy for a pod that is gone \(not a problem\) \(1\)\n/,
  );
});

test('an annotation naming an address without an object, inside and outside the configuration', () => {
  const s = snapshot({
    pods: [pod('ns', 'a', { ips: ['10.2.0.15'] }), pod('ns', 'b', { ips: ['10.9.9.9'] })],
  });
  const [inside, outside] = check(s);
  expect(inside).toMatchObject({ kind: 'no-object', ip: '10.2.0.15' });
  expect(inside!.fix).toContain('floatip adopts');
  expect(outside!.what).toBe(
    "pod ns/b's annotation names 10.9.9.9, which has no FloatingIP object, and it is outside the configuration",
  );
});

test('a finished pod names nothing any more', () => {
  const s = snapshot({ pods: [pod('ns', 'a', { ips: ['10.2.0.15'], phase: 'Succeeded' })] });
  expect(check(s)).toEqual([]);
});

test('an object outside the configuration, one that cannot be read, and a missing configuration', () => {
  const s = snapshot({
    floatingIPs: [
      fipObject('10.7.0.1', 'pool__old_'),
      { metadata: { name: 'not-an-ip' }, spec: { key: 'k' } },
    ],
    configText: undefined,
    configProblem: 'ConfigMap kube-system/floatingip-config not found',
  });
  expect(kinds(s)).toEqual(['configuration ', 'invalid-object ', 'outside 10.7.0.1']);
  const report = formatCheck(check(s));
  expect(report).toMatch(
    /^3 problems found\n\nconfiguration \(1\)\n {2}ConfigMap kube-system\/floatingip-config not found\n {4}fix: /,
  );
  expect(report).toContain('FloatingIP not-an-ip: FloatingIP name is not an IP address: "not-an-ip"');
});

test('an object under another spelling of an address is one floatip cannot read, not its holder', () => {
  const configText = JSON.stringify([
    { nodeSubnets: ['10.1.0.0/24'], ips: ['10.2.0.1~10.2.0.5'], subnet: '10.2.0.0/24', gateway: '10.2.0.1' },
  ]);
  const alias = { ...fipObject('10.2.0.2', 'NULL_evil_NULL_intruder'), metadata: { name: '0--ffff-a02-2' } };
  const s = snapshot({
    configText,
    floatingIPs: [fipObject('10.2.0.2', 'NULL_ns_NULL_a', { node: 'n1', uid: 'uid-a' }), alias],
    pods: [pod('ns', 'a', { ips: ['10.2.0.2'] })],
  });
  expect(kinds(s)).toEqual(['invalid-object ']);
  expect(formatCheck(check(s))).toContain(
    'FloatingIP 0--ffff-a02-2: the name must be the address in canonical form: 10.2.0.2',
  );
});

test('the gateway held by a key, inside a range, is an address no pod should get', () => {
  const configText = JSON.stringify([
    { nodeSubnets: ['10.1.0.0/24'], ips: ['10.2.0.1~10.2.0.5'], subnet: '10.2.0.0/24', gateway: '10.2.0.1' },
  ]);
  const s = snapshot({ configText, floatingIPs: [fipObject('10.2.0.1', 'pool__p_')] });
  const [f] = check(s);
  expect(f).toMatchObject({ kind: 'unusable', ip: '10.2.0.1', problem: true });
  expect(f!.what).toBe('10.2.0.1 is the gateway of entry 0 but is held by pool__p_');
});

test('a pod not on a node yet has no annotation to disagree with its object: its binding brings it', () => {
  const s = snapshot({
    floatingIPs: [fipObject('10.2.0.18', 'NULL_ns_NULL_p1', { node: 'n1', uid: 'uid-p1' })],
    pods: [pod('ns', 'p1', { node: '', phase: 'Pending' })],
  });
  expect(check(s)).toEqual([]);
  // bound without it, it disagrees as before
  const bound = snapshot({
    floatingIPs: [fipObject('10.2.0.18', 'NULL_ns_NULL_p1', { node: 'n1', uid: 'uid-p1' })],
    pods: [pod('ns', 'p1', { phase: 'Pending' })],
  });
  expect(kinds(bound)).toEqual(['disagree 10.2.0.18']);
});
