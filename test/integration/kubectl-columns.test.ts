// `kubectl get fip` on the embedded server after floatip bound a pod: the Node and Pod columns come
// from the labels floatip writes with the object, and go when the pod does (the address kept).
import { kubectlAvailable, kubectlFor, type Kubectl } from '../apiserver/helpers.js';
import { World } from './world.js';

const CONFIG = [
  {
    nodeSubnets: ['10.0.1.0/24'],
    ips: ['10.0.100.10~10.0.100.20'],
    subnet: '10.0.100.0/24',
    gateway: '10.0.100.1',
  },
];
const haveKubectl = kubectlAvailable();
let world: World;
let kubectl: Kubectl | undefined;

beforeAll(async () => {
  world = await World.start({ config: CONFIG });
  await world.node('a1', '10.0.1.11');
  if (haveKubectl) kubectl = await kubectlFor(world.server);
});
afterAll(async () => {
  await kubectl?.cleanup();
  await world.stop();
});

async function rows(): Promise<string[][]> {
  const res = await kubectl!.run(['get', 'fip', '-o', 'wide']);
  expect(res.stderr).toBe('');
  return res.stdout
    .trim()
    .split('\n')
    .map((line) => line.split(/\s{2,}/));
}

test('NODE and POD after a bind; empty once the pod is gone and the address kept for it', async () => {
  if (!kubectl) {
    console.log('kubectl case not run: no kubectl');
    return;
  }
  await world.statefulSet('web', 1);
  const pod = await world.pod({
    name: 'web-0',
    owner: { kind: 'StatefulSet', name: 'web' },
    policy: 'immutable',
  });
  expect(await world.bind(pod, 'a1')).toBe('');
  const [ip] = await world.addressesOf('web-0');
  const uid = pod.metadata!.uid!;
  expect(await rows()).toEqual([
    ['NAME', 'KEY', 'POLICY', 'NODE', 'POD', 'ATTRIBUTE', 'UPDATED', 'AGE'],
    [
      ip!,
      'sts_ns1_web_web-0',
      '1',
      'a1',
      'web-0',
      `{"NodeName":"a1","Uid":"${uid}"}`,
      expect.stringMatching(/^\d+s$/),
      expect.stringMatching(/^\d+s$/),
    ],
  ]);
  await world.deletePod('web-0');
  await world.settle();
  const [, row] = await rows();
  expect(row!.slice(0, 5)).toEqual([
    ip!,
    'sts_ns1_web_web-0',
    '1',
    '{"NodeName":"","Uid":""}',
    expect.stringMatching(/^\d+s$/),
  ]);
});
