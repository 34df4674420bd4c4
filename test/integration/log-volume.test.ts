// What a caller can make floatip write to its log, on the real binary: names and annotations are
// the caller's, and a line of the log must not grow with them (a bind's 64 KiB body made a 120 KB
// line, a filter's pod with a megabyte request_ip_range a megabyte one, up to the 256 MiB limit).
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { freePort } from '../harness/free-port.js';

beforeAll(async () => {
  await promisify(execFile)('npm', ['run', 'build', '--silent']);
}, 120_000);

/** Lines of the log longer than this are a caller's doing (the longest of start-up is under 1 KB). */
const MOST = 16 * 1024;

test('L1 names a caller sends in a bind, a filter and a release reach the log clipped, each line a few KB', async () => {
  const [port, apiPort, embedded] = [await freePort(), await freePort(), await freePort()];
  const child = spawn(
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
  let stdout = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  const exited = new Promise((resolve) => child.on('exit', resolve));
  try {
    for (let i = 0; !/^REST API: http/m.test(stdout); i++) {
      if (i > 400) throw new Error(`floatip did not start:\n${stdout}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const post = (url: string, body: unknown) =>
      fetch(url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      }).then(async (res) => [res.status, await res.text()] as const);
    const big = 'x'.repeat(60_000);
    const extender = `http://127.0.0.1:${port}/v1`;
    // a pod name no pod can have, and a namespace
    await post(`${extender}/bind`, {
      PodName: big,
      PodNamespace: 'default',
      PodUID: 'u',
      Node: 'demo-node-1',
    });
    await post(`${extender}/bind`, { PodName: 'p', PodNamespace: big, PodUID: 'u', Node: 'demo-node-1' });
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
    const [status, answer] = await post(`${extender}/filter`, { Pod: pod, NodeNames: ['demo-node-1'] });
    expect(status).toBe(200);
    // the caller's own answer still says all of it
    expect(answer.length).toBeGreaterThan(2 * 2 ** 20);
    // a release naming a pod by three long names
    const entry = { ip: '10.0.100.10', namespace: big, podName: big, appName: big, appType: 'NULL' };
    expect((await post(`http://127.0.0.1:${apiPort}/v1/ip`, { ips: [entry] }))[0]).toBe(202);
    await new Promise((r) => setTimeout(r, 500));
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
  const lines = stdout.split('\n').filter((line) => line.startsWith('{'));
  const logged = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  // each of the four was logged, and says what it is about
  expect(logged.filter((l) => l.msg === 'bind failed')).toHaveLength(2);
  const filtered = logged.find((l) => l.msg === 'filter: no node can serve the pod');
  const err = String(filtered?.err);
  expect(err.length).toBeLessThan(5000);
  expect(err).toMatch(/^bad IPRange format "y{4000}.*\.\.\. \(\d+ characters\)$/);
  expect(logged.some((l) => l.msg === 'release through POST /v1/ip answered')).toBe(true);
  expect(
    lines.filter((line) => line.length > MOST).map((line) => `${line.slice(0, 200)}... (${line.length})`),
  ).toEqual([]);
}, 60_000);
