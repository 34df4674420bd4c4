// DEL and GC keep to their own attachment, in real network namespaces: the spec names an attachment
// by container and interface, and what ADD configured is in its state file. A DEL that names
// another attachment's sandbox, or that has no state and is handed another attachment's eth0, leaves
// it; a state file of a shape no ADD writes is skipped and said so, never a TypeError (code 100).
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { cniEnv, stateDir, statesIn, underlay } from './helpers.js';
import { ip, Lab, runPlugin } from './netns.js';
import { buildPlugin, ensureDebianPackages } from './setup.js';

const lab = new Lab();
let build: string | undefined;
let state: string;
let master: string;
let node: string;

const config = (extra: Record<string, unknown> = {}) =>
  underlay(state, master, { cniVersion: '1.1.0', ...extra });

const handed = (n: number) => ({
  ipinfos: JSON.stringify([{ ip: `198.51.100.${n}/24`, vlan: 0, gateway: '198.51.100.1' }]),
});
const states = () => statesIn(state);
const hasEth0 = async (pod: string) => (await ip('-n', pod, '-o', 'link')).includes(' eth0@');

async function added(containerId: string, pod: string, n: number): Promise<void> {
  const run = await runPlugin(cniEnv('ADD', containerId, pod, handed(n)), config(), node);
  expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
}

beforeAll(async () => {
  [, build] = await Promise.all([ensureDebianPackages(), buildPlugin()]);
  state = stateDir();
  ({ node, master } = await lab.nodeWithMaster());
}, 300_000);

afterAll(async () => {
  await lab.destroy();
  if (build) rmSync(build, { recursive: true, force: true });
  rmSync(state, { recursive: true, force: true });
});

test('DEL naming another attachment’s sandbox acts where its own state says ADD configured it (it deleted the other pod’s eth0 and left its own)', async () => {
  const [q1, q2] = [await lab.addNamespace('q1'), await lab.addNamespace('q2')];
  await added('ctrA', q1, 21);
  await added('ctrB', q2, 22);
  const del = await runPlugin(cniEnv('DEL', 'ctrA', q2), config(), node);
  expect({ code: del.code, stdout: del.stdout }).toEqual({ code: 0, stdout: '' });
  expect(await hasEth0(q2)).toBe(true);
  expect(await hasEth0(q1)).toBe(false);
  expect(states()).toEqual(['ctrB:eth0.json']);
  expect((await runPlugin(cniEnv('DEL', 'ctrB', q2), config(), node)).code).toBe(0);
  expect(states()).toEqual([]);
});

test('the runtime’s DEL after an ADD refused because eth0 was there leaves the first attachment’s eth0, with or without a prevResult naming it', async () => {
  const pod = await lab.addNamespace('shared');
  await added('c1', pod, 31);
  const second = await runPlugin(cniEnv('ADD', 'c2', pod, handed(32)), config(), node);
  expect({ code: second.code, error: second.out.code }).toEqual({ code: 1, error: 105 });
  const del = await runPlugin(cniEnv('DEL', 'c2', pod), config(), node);
  expect({ code: del.code, stdout: del.stdout }).toEqual({ code: 0, stdout: '' });
  expect(del.stderr).toContain('interface eth0 in /var/run/netns/');
  expect(del.stderr).toContain('container c1 interface eth0');
  expect(await hasEth0(pod)).toBe(true);
  const prevResult = {
    cniVersion: '1.1.0',
    interfaces: [{ name: 'eth0', sandbox: `/var/run/netns/${pod}` }],
    ips: [],
  };
  expect((await runPlugin(cniEnv('DEL', 'c3', pod), config({ prevResult }), node)).code).toBe(0);
  expect(await hasEth0(pod)).toBe(true);
  expect(states()).toEqual(['c1:eth0.json']);
  expect((await runPlugin(cniEnv('DEL', 'c1', pod), config(), node)).code).toBe(0);
  expect(await hasEth0(pod)).toBe(false);
});

test('DEL without state still deletes CNI_IFNAME where no attachment claims it (an attachment from before floatip-cni)', async () => {
  const pod = await lab.addNamespace('older');
  await added('old', pod, 41);
  rmSync(`${state}/underlay/old:eth0.json`);
  const del = await runPlugin(cniEnv('DEL', 'old', pod), config(), node);
  expect({ code: del.code, stdout: del.stdout, stderr: del.stderr }).toEqual({
    code: 0,
    stdout: '',
    stderr: '',
  });
  expect(await hasEth0(pod)).toBe(false);
});

test.each([
  [
    'an interface without its delegate',
    { interfaces: [{ ifname: 'eth0' }] },
    'its interface 0 has no delegate with a type',
  ],
  ['interfaces that are no list', { interfaces: 'x' }, 'its interfaces are not a list'],
])(
  'a state file with %s: DEL and GC complete and say what they skipped (a TypeError, code 100, failed them for ever)',
  async (_, shape, why) => {
    const pod = await lab.addNamespace(`odd${why.length}`);
    await added('odd', pod, 50 + why.length);
    const file = `${state}/underlay/odd:eth0.json`;
    writeFileSync(
      file,
      JSON.stringify({ containerId: 'odd', ifname: 'eth0', netns: `/var/run/netns/${pod}`, ...shape }),
    );
    const gc = await runPlugin(
      { ...cniEnv('GC', '', ''), CNI_IFNAME: '' },
      config({ 'cni.dev/valid-attachments': [] }),
      node,
    );
    expect({ code: gc.code, stdout: gc.stdout }).toEqual({ code: 0, stdout: '' });
    expect(gc.stderr).toBe(
      `floatip-cni GC: state ${file} is unreadable (${why}): its file is removed, no interface deleted\n`,
    );
    expect(existsSync(file)).toBe(false);
    writeFileSync(
      file,
      JSON.stringify({ containerId: 'odd', ifname: 'eth0', netns: `/var/run/netns/${pod}`, ...shape }),
    );
    const del = await runPlugin(cniEnv('DEL', 'odd', pod), config(), node);
    expect({ code: del.code, stdout: del.stdout }).toEqual({ code: 0, stdout: '' });
    expect(del.stderr).toContain(
      `state ${file} is unreadable (${why}): DEL falls back to prevResult or CNI_IFNAME`,
    );
    // the fallback, CNI_IFNAME in the runtime's sandbox, which no other attachment claims
    expect(await hasEth0(pod)).toBe(false);
    expect(existsSync(file)).toBe(false);
  },
);
