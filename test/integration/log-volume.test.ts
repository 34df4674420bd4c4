// What a caller can make floatip write, on the real binary: names and annotations are the caller's,
// and a line of the log or an Event must not grow with them (a bind's 64 KiB body made a 120 KB log
// line and a 60 KB Event on the pod, a filter's pod with a megabyte request_ip_range a megabyte
// line, up to the 256 MiB limit).
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { freePort } from '../harness/free-port.js';

/** Lines of the log longer than this are a caller's doing (the longest of start-up is under 1 KB). */
const MOST = 16 * 1024;

let child: ChildProcess;
let exited: Promise<unknown>;
let stdout = '';
let extender: string;
let api: string;
let kube: string;

beforeAll(async () => {
  await promisify(execFile)('npm', ['run', 'build', '--silent']);
  const [port, apiPort, embedded] = [await freePort(), await freePort(), await freePort()];
  [extender, api, kube] = [port, apiPort, embedded].map((p) => `http://127.0.0.1:${p}`) as [
    string,
    string,
    string,
  ];
  child = spawn(
    'node',
    [
      'dist/src/main.js',
      'serve',
      '--leader-elect=false',
      '--bind',
      '127.0.0.1',
      ...['--port', String(port), '--api-port', String(apiPort), '--embedded-port', String(embedded)],
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  exited = new Promise((resolve) => child.on('exit', resolve));
  for (let i = 0; !/^REST API: http/m.test(stdout); i++) {
    if (i > 400) throw new Error(`floatip did not start:\n${stdout}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}, 120_000);

afterAll(async () => {
  child.kill('SIGTERM');
  await exited;
});

const post = (url: string, body: unknown) =>
  fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  }).then(async (res) => [res.status, await res.text()] as const);

const big = 'x'.repeat(60_000);

test('L1 names a caller sends in a bind, a filter and a release reach the log clipped, each line a few KB', async () => {
  const logged = stdout.length;
  // a pod name no pod can have, and a namespace
  await post(`${extender}/v1/bind`, {
    PodName: big,
    PodNamespace: 'default',
    PodUID: 'u',
    Node: 'demo-node-1',
  });
  await post(`${extender}/v1/bind`, { PodName: 'p', PodNamespace: big, PodUID: 'u', Node: 'demo-node-1' });
  // a pod whose request_ip_range is 2 MB of one range
  const range = JSON.stringify({ request_ip_range: [['y'.repeat(2 * 2 ** 20)]] });
  const pod = {
    metadata: {
      name: 'p',
      namespace: 'default',
      uid: 'u',
      annotations: { 'k8s.v1.cni.galaxy.io/args': range },
    },
    spec: { containers: [{ name: 'a', resources: { limits: { 'tke.cloud.tencent.com/eni-ip': '1' } } }] },
  };
  const [status, answer] = await post(`${extender}/v1/filter`, { Pod: pod, NodeNames: ['demo-node-1'] });
  expect(status).toBe(200);
  // the caller's own answer is clipped too: kube-scheduler copies it into its log and the pod's
  // status at every attempt (README, "Error texts")
  expect(answer.length).toBeLessThan(5000);
  expect(answer).toMatch(/\.\.\. \(\d+ characters\)"\}$/);
  // a release naming a pod by three long names
  const entry = { ip: '10.0.100.10', namespace: big, podName: big, appName: big, appType: 'NULL' };
  expect((await post(`${api}/v1/ip`, { ips: [entry] }))[0]).toBe(202);
  await new Promise((r) => setTimeout(r, 500));

  const lines = stdout
    .slice(logged)
    .split('\n')
    .filter((line) => line.startsWith('{'));
  const parsed = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  // the filter and the release were logged, and say what they are about (the binds name no pod
  // there can be, and are answered without a line)
  const filtered = parsed.find((l) => l.msg === 'filter: no node can serve the pod');
  const err = String(filtered?.err);
  expect(err.length).toBeLessThan(5000);
  expect(err).toMatch(/^bad IPRange format "y{4000}.*\.\.\. \(\d+ characters\)$/);
  expect(parsed.some((l) => l.msg === 'release through POST /v1/ip answered')).toBe(true);
  expect(
    lines.filter((line) => line.length > MOST).map((line) => `${line.slice(0, 200)}... (${line.length})`),
  ).toEqual([]);
}, 60_000);

test('L2 a bind of a real pod to a node named by 60,000 characters leaves an Event of a few KB on the pod', async () => {
  const created = await fetch(`${kube}/api/v1/namespaces/default/pods`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'l2', namespace: 'default' },
      spec: {
        containers: [
          { name: 'a', image: 'x', resources: { limits: { 'tke.cloud.tencent.com/eni-ip': '1' } } },
        ],
      },
    }),
  });
  expect(created.status).toBe(201);
  const uid = ((await created.json()) as { metadata: { uid: string } }).metadata.uid;
  const logged = stdout.length;
  const [, answer] = await post(`${extender}/v1/bind`, {
    PodName: 'l2',
    PodNamespace: 'default',
    PodUID: uid,
    Node: big,
  });
  // the caller is told which node, clipped as every Error is (README, "Error texts")
  expect(answer).toContain(`nodes \\"${big.slice(0, 4000)}`);
  expect(answer).toMatch(new RegExp(`\\.\\.\\. \\(${big.length + 18} characters\\)"\\}$`));
  type Events = { items: { involvedObject: { name: string }; message: string }[] };
  let events: Events['items'] = [];
  for (let i = 0; i < 100 && events.length === 0; i++) {
    await new Promise((r) => setTimeout(r, 50));
    const list = (await (await fetch(`${kube}/api/v1/namespaces/default/events`)).json()) as Events;
    events = list.items.filter((e) => e.involvedObject.name === 'l2');
  }
  expect(events).toHaveLength(1);
  const failed = stdout
    .slice(logged)
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .find((l) => l.msg === 'bind failed');
  expect(failed?.pod).toBe('default/l2');
  expect(JSON.stringify(failed).length).toBeLessThan(MOST);
  expect(events[0]!.message.length).toBeLessThan(5000);
  expect(events[0]!.message).toMatch(/^node x{100}.*\.\.\. \(\d+ characters\)$/);
}, 30_000);
