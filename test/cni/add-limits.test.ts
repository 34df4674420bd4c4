// What ADD is given at the edges of what it accepts, in real network namespaces: timeouts in
// fractions of a second, the longest container ID, interface names derived past 15 bytes. Each is
// either added or refused before any interface exists, and a failed ADD leaves no state behind (a
// state left refused every later ADD of the attachment, code 4).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cniEnv, handedOver, linksIn, stateDir, statesIn, underlay } from './helpers.js';
import { Lab, runPlugin } from './netns.js';
import { buildPlugin, CNI_BIN, ensureDebianPackages } from './setup.js';

const lab = new Lab();
let build: string | undefined;
let state: string;
let master: string;
let node: string;

const config = (extra: Record<string, unknown> = {}) => underlay(state, master, extra);

const ipinfo = (n: number) => ({ ip: `198.51.100.${n}/24`, vlan: 0, gateway: '198.51.100.1' });
const handed = handedOver;
const states = () => statesIn(state);
const links = linksIn;

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

test('delegateTimeoutSeconds with a fraction of a millisecond: ADD runs (it failed every ADD, code 100, and left its state, so that the next was refused with code 4)', async () => {
  const pod = await lab.addNamespace('fraction');
  // 0.1 ms is a limit of 1 ms: the delegate is killed, and the failed ADD leaves nothing
  const killed = await runPlugin(
    cniEnv('ADD', 'f1', pod, handed(ipinfo(11))),
    config({ delegateTimeoutSeconds: 0.0001 }),
    node,
  );
  expect({ code: killed.code, error: killed.out.code, msg: killed.out.msg }).toEqual({
    code: 1,
    error: 105,
    msg: expect.stringContaining('no answer within 0.001 s (delegateTimeoutSeconds); killed'),
  });
  expect(states()).toEqual([]);
  // a fraction of a millisecond past whole seconds, and seconds enough for a delegate on a busy machine
  const run = await runPlugin(
    cniEnv('ADD', 'f1', pod, handed(ipinfo(11))),
    config({ delegateTimeoutSeconds: 30.0005 }),
    node,
  );
  // the answer is shown when it is not a success
  expect([run.code, run.code === 0 ? '' : run.stdout]).toEqual([0, '']);
  expect(await links(pod)).toEqual(['eth0']);
  expect((await runPlugin(cniEnv('DEL', 'f1', pod), config(), node)).code).toBe(0);
  expect(await links(pod)).toEqual([]);
  expect(states()).toEqual([]);
});

test('the longest container ID with a 15-byte CNI_IFNAME: its state file name fits, and so does its temporary one (ADD failed, code 5 ENAMETOOLONG)', async () => {
  const pod = await lab.addNamespace('longid');
  const id = `c${'0123456789abcdef'.repeat(15)}`.slice(0, 234);
  const ifname = 'abcdefghijklmno';
  const run = await runPlugin(cniEnv('ADD', id, pod, handed(ipinfo(12)), ifname), config(), node);
  expect({ code: run.code, stdout: run.stdout }).toMatchObject({ code: 0 });
  expect(states()).toEqual([`${id}:${ifname}.json`]);
  expect(await links(pod)).toEqual([ifname]);
  expect((await runPlugin(cniEnv('DEL', id, pod, {}, ifname), config(), node)).code).toBe(0);
  expect(await links(pod)).toEqual([]);
  expect(states()).toEqual([]);
});

test('ipinfos of two VLANs (two interfaces) with a 15-byte CNI_IFNAME: the second name, 16 bytes, is refused before any interface is made (code 102; the delegate refused it, 105, after the first interface existed)', async () => {
  const pod = await lab.addNamespace('derived');
  const run = await runPlugin(
    cniEnv(
      'ADD',
      'd1',
      pod,
      handed({ ...ipinfo(13), vlan: 0 }, { ...ipinfo(14), vlan: 2 }),
      'abcdefghijklmn9',
    ),
    config(),
    node,
  );
  expect(run.out).toEqual({
    cniVersion: '1.0.0',
    code: 102,
    msg: '2 interfaces from CNI_IFNAME abcdefghijklmn9: the name abcdefghijklmn10 of interface 2 is no interface name (at most 15 bytes)',
  });
  expect(await links(pod)).toEqual([]);
  expect(states()).toEqual([]);
});

test('a failure of floatip-cni’s own after the delegates ran (a delegate answering `null`) undoes the ADD: no state is left to refuse the next ADD (code 4)', async () => {
  const pod = await lab.addNamespace('nullresult');
  const bin = mkdtempSync(join(tmpdir(), 'floatip-cni-bin-'));
  writeFileSync(join(bin, 'answers-null'), '#!/bin/sh\ncat >/dev/null\necho null\n', { mode: 0o755 });
  const env = { ...cniEnv('ADD', 'n1', pod, handed(ipinfo(15))), CNI_PATH: `${bin}:${CNI_BIN}` };
  const run = await runPlugin(env, config({ delegate: { type: 'answers-null' } }), node);
  expect({ code: run.code, error: run.out.code }).toEqual({ code: 1, error: 100 });
  expect(states()).toEqual([]);
  const again = await runPlugin(cniEnv('ADD', 'n1', pod, handed(ipinfo(15))), config(), node);
  expect({ code: again.code, stdout: again.stdout }).toMatchObject({ code: 0 });
  expect((await runPlugin(cniEnv('DEL', 'n1', pod), config(), node)).code).toBe(0);
  expect(states()).toEqual([]);
  rmSync(bin, { recursive: true, force: true });
});
