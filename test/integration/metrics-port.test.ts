// /metrics on the REST port is answered beside the REST app (src/api/metrics-port.ts) as the app
// answered it: the paths express routed there, GET and HEAD, Prometheus's text format; every other
// request to that path is the REST app's, as before.
import { World } from './world.js';

const CONFIG = [
  {
    nodeSubnets: ['10.0.1.0/24'],
    ips: ['10.0.100.10~10.0.100.12'],
    subnet: '10.0.100.0/24',
    gateway: '10.0.100.1',
  },
];

let world: World;
beforeAll(async () => {
  world = await World.start({ config: CONFIG });
});
afterAll(async () => world.stop());

test('GET and HEAD /metrics in any case, with one trailing slash or a query: the metrics, with their length', async () => {
  for (const path of ['/metrics', '/METRICS/', '/Metrics?name[]=floatip_leader']) {
    const got = await world.rest('GET', path);
    expect([path, got.status, got.headers.get('content-type')]).toEqual([
      path,
      200,
      'text/plain; version=0.0.4; charset=utf-8',
    ]);
    expect(got.text).toMatch(/^floatip_leader 1$/m);
    expect(Number(got.headers.get('content-length'))).toBe(Buffer.byteLength(got.text));
  }
  const head = await world.rest('HEAD', '/metrics');
  expect([head.status, head.text, Number(head.headers.get('content-length')) > 0]).toEqual([200, '', true]);
});

test('other methods and paths near /metrics are the REST app’s answers, in its envelope', async () => {
  const post = await world.rest('POST', '/metrics', {});
  expect([post.status, post.json, post.headers.get('allow')]).toEqual([
    405,
    { code: 405, message: 'method not allowed: POST /metrics' },
    'GET',
  ]);
  const deeper = await world.rest('GET', '/metrics/x');
  expect([deeper.status, deeper.json]).toEqual([
    404,
    { code: 404, message: 'not found: no route GET /metrics/x' },
  ]);
});
