// The test harness's freePort: a port it hands out can't be taken by the next process that binds
// port 0 (the race that failed E2E-D3: a replica's extender took the health port just handed out).
import { readFileSync } from 'node:fs';
import { type AddressInfo, createServer, type Server } from 'node:net';
import { freePort } from './free-port.js';

const listen = (port: number) =>
  new Promise<Server>((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });

test('ports handed out are distinct, free, off the control plane, and never what bind(0) gives', async () => {
  const ports: number[] = [];
  for (let i = 0; i < 30; i++) ports.push(await freePort());
  expect(new Set(ports).size).toBe(ports.length);
  const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').split(/\s+/)[0]);
  for (const port of ports) {
    expect(port).toBeLessThan(low);
    expect(port >= 23_000 && port <= 27_000).toBe(false);
  }
  // every one of them binds; 200 port-0 binds held at the same time land on none of them
  const held = await Promise.all([
    ...ports.map((p) => listen(p)),
    ...Array.from({ length: 200 }, () => listen(0)),
  ]);
  try {
    const picked = held.slice(ports.length).map((s) => (s.address() as AddressInfo).port);
    expect(picked.filter((p) => ports.includes(p))).toEqual([]);
  } finally {
    await Promise.all(held.map((s) => new Promise((r) => s.close(r))));
  }
});
