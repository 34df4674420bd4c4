// Readiness is "this replica answers the scheduler": the leader, not shutting down, with a valid
// configuration in force. Started on an invalid floatingip-config, floatip says why it is not ready
// (/readyz, the verbs' answer and a Warning Event) until the ConfigMap is fixed.
import { connect } from 'node:net';
import { eventually } from './helpers.js';
import { World } from './world.js';

const A = '10.0.1.0/24';
const VALID = [
  { nodeSubnets: [A], ips: ['10.0.100.10~10.0.100.20'], subnet: '10.0.100.0/24', gateway: '10.0.100.1' },
];

let world: World;
afterEach(() => world.stop());

const readyz = async () => {
  const res = await fetch(`${world.floatip.extenderUrl}/readyz`);
  return [res.status, await res.text()];
};

test('13: an invalid configuration at start: not ready, and why; ready once it is fixed', async () => {
  world = await World.start({ config: [{ ...VALID[0], gateway: '10.0.200.1' }] });
  const why =
    'ConfigMap kube-system/floatingip-config is invalid: invalid floating IP configuration: floatingips[0].gateway "10.0.200.1": gateway is not in subnet 10.0.100.0/24';
  expect(await readyz()).toEqual([503, `not ready: ${why}`]);
  await world.node('a1', '10.0.1.11');
  const pod = await world.pod({ name: 'p1' });
  const filter = await world.post('filter', { Pod: pod, NodeNames: ['a1'] });
  expect([filter.status, filter.json]).toEqual([503, { Error: `not serving: ${why}` }]);
  await world.floatip.events.flush();
  const events = await world.core.listNamespacedEvent({ namespace: 'kube-system' });
  expect(
    events.items.filter((e) => e.reason === 'InvalidFloatingIPConfig').map((e) => [e.type, e.message]),
  ).toEqual([
    [
      'Warning',
      'invalid floating IP configuration: floatingips[0].gateway "10.0.200.1": gateway is not in subnet 10.0.100.0/24; no configuration is in force, so floatip is not ready',
    ],
  ]);
  await world.core.replaceNamespacedConfigMap({
    name: 'floatingip-config',
    namespace: 'kube-system',
    body: { metadata: { name: 'floatingip-config' }, data: { floatingips: JSON.stringify(VALID) } },
  });
  await eventually('floatip to be ready', async () => (await readyz())[0] === 200);
  expect(await world.bind(pod, 'a1')).toBe('');
  expect(await world.addressesOf('p1')).toEqual(['10.0.100.10']);
});

test('13: a valid configuration at start: ready', async () => {
  world = await World.start({ config: VALID });
  expect(await readyz()).toEqual([200, 'ok']);
});

test('CONNECT, which no port offers, is a 405 on the extender and REST ports, not a dropped connection', async () => {
  world = await World.start({ config: VALID });
  for (const url of [world.floatip.extenderUrl, world.floatip.apiUrl!]) {
    const { hostname, port } = new URL(url);
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), hostname, () =>
        socket.write(`CONNECT ${hostname}:1 HTTP/1.1\r\nHost: x\r\n\r\n`),
      );
      let text = '';
      socket.on('data', (d: Buffer) => (text += d.toString()));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 405 Method Not Allowed');
    expect(answer.endsWith('method not allowed: CONNECT')).toBe(true);
    expect(await readyz()).toEqual([200, 'ok']);
  }
});

test('a request node’s parser refuses gets a body naming the problem, and the connection closes', async () => {
  world = await World.start({ config: VALID });
  const cases: [string, string, string][] = [
    ['GET /v1/ip/é HTTP/1.1\r\nHost: x\r\n\r\n', '400 Bad Request', 'bad request: Invalid char in url path'],
    [
      'POST /v1/bind HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab',
      '400 Bad Request',
      'bad request: Duplicate Content-Length',
    ],
    [
      'POST /v1/bind HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
      '400 Bad Request',
      "bad request: Transfer-Encoding can't be present with Content-Length",
    ],
    [
      `GET /readyz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(17 * 1024)}\r\n\r\n`,
      '431 Request Header Fields Too Large',
      'request header fields too large: over 16384 bytes',
    ],
    // node answered these two itself: a status line and nothing else
    ['GET /readyz HTTP/1.1\r\n\r\n', '400 Bad Request', 'bad request: missing required Host header'],
    [
      'POST /v1/bind HTTP/1.1\r\nHost: x\r\nExpect: 200-ok\r\nContent-Length: 2\r\n\r\n{}',
      '417 Expectation Failed',
      'expectation failed: only 100-continue is understood, not "200-ok"',
    ],
    // node kept the first Host, and took a body still gzipped for the JSON it was to be
    [
      'GET /readyz HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n',
      '400 Bad Request',
      'bad request: too many Host headers',
    ],
    [
      'POST /v1/bind HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: gzip, chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n',
      '501 Not Implemented',
      'not implemented: Transfer-Encoding "gzip, chunked"; only chunked is',
    ],
  ];
  for (const url of [world.floatip.extenderUrl, world.floatip.apiUrl!]) {
    const { hostname, port } = new URL(url);
    for (const [request, status, body] of cases) {
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = connect(Number(port), hostname, () => socket.write(request));
        let text = '';
        socket.on('data', (d: Buffer) => (text += d.toString()));
        socket.on('end', () => resolve(text));
        socket.on('error', reject);
      });
      expect(answer.split('\r\n')[0]).toBe(`HTTP/1.1 ${status}`);
      expect(answer).toContain('Connection: close\r\n');
      expect(answer.split('\r\n\r\n')[1]).toBe(body);
    }
  }
  expect(await readyz()).toEqual([200, 'ok']);
});
