// What a caller sends comes back in a refusal clipped (README: a value quoted in a message is
// clipped to its first 100 characters): a megabyte in CNI_ARGS is not echoed into the line kubelet
// logs and the pod's events. Refused before any namespace is entered, so run outside any.
import { rmSync } from 'node:fs';
import type { EmbeddedApiServer } from '../../src/apiserver/index.js';
import { cniEnv, createPod, kubeconfigFor, podArgs, startPodSource, stateDir, underlay } from './helpers.js';
import { runPlugin } from './netns.js';
import { buildPlugin } from './setup.js';

let build: string | undefined;
let server: EmbeddedApiServer;
let kubeconfig: string;
let state: string;

const config = (extra: Record<string, unknown> = {}) => underlay(state, 'eth9', { kubeconfig, ...extra });

beforeAll(async () => {
  build = await buildPlugin();
  server = await startPodSource();
  kubeconfig = kubeconfigFor(server.url);
  state = stateDir();
}, 300_000);

afterAll(async () => {
  if (build) rmSync(build, { recursive: true, force: true });
  rmSync(state, { recursive: true, force: true });
  await server?.close();
});

const long = (n: number) => 'a'.repeat(n);

test('a 100,000-character K8S_POD_UID is quoted clipped (code 103 echoed it whole)', async () => {
  const uid = createPod(server, 'clipped-uid', {
    common: { ipinfos: [{ ip: '198.51.100.80/24', vlan: 0, gateway: '198.51.100.1' }] },
  });
  const run = await runPlugin(cniEnv('ADD', 'c1', 'x', podArgs('clipped-uid', long(100_000))), config());
  expect(run.out).toEqual({
    cniVersion: '1.0.0',
    code: 103,
    msg: `pod default/clipped-uid has UID ${uid}, not ${long(100)}... (100000 characters): the pod this sandbox is for is gone`,
  });
});

test('a 100,000-character ipinfo ip is quoted clipped (code 102 echoed it whole)', async () => {
  const ipinfos = JSON.stringify([{ ip: long(100_000), vlan: 0, gateway: '198.51.100.1' }]);
  const run = await runPlugin(cniEnv('ADD', 'c1', 'x', { ipinfos }), config({ kubeconfig: undefined }));
  expect(run.out).toEqual({
    cniVersion: '1.0.0',
    code: 102,
    msg: `ipinfo {"ip":"${long(100)}... (100000 characters)","vlan":0,"gateway":"198.51.100.1"} is not an address/prefix with a gateway of its family and a VLAN id 0-4094`,
  });
});

test('a 300-character K8S_POD_NAME is quoted clipped at 100 (it was at 300)', async () => {
  const run = await runPlugin(
    cniEnv('ADD', 'c1', 'x', { K8S_POD_NAMESPACE: 'default', K8S_POD_NAME: `A${long(299)}` }),
    config(),
  );
  expect(run.out).toEqual({
    cniVersion: '1.0.0',
    code: 4,
    msg: `CNI_ARGS names no pod a Kubernetes name can name: "default/A${long(91)}..."`,
  });
});
