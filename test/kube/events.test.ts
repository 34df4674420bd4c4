// Events go to the API server through the lean writer, with a bounded backlog: against a server that
// holds its answers, what is sent and what is dropped (and said) once the backlog is full.
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeEventRecorder } from '../../src/kube/events.js';
import { shareConnections } from '../../src/kube/shared-agent.js';
import { capturedLog } from '../integration/helpers.js';

test('an Event is a core/v1 Event in its object’s namespace; past the backlog’s bound Events are dropped and said, not queued', async () => {
  const held: ServerResponse[] = [];
  const bodies: { url: string; body: Record<string, unknown> }[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      bodies.push({
        url: req.url!,
        body: JSON.parse(Buffer.concat(chunks).toString()) as Record<string, unknown>,
      });
      held.push(res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [
      {
        name: 'c',
        server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        skipTLSVerify: true,
      },
    ],
    users: [{ name: 'u', token: 't' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  shareConnections(kc);
  const { log, lines } = capturedLog();
  try {
    const recorder = new KubeEventRecorder(kc, log, 2);
    const fip = { apiVersion: 'galaxy.k8s.io/v1alpha1', kind: 'FloatingIP', name: '10.0.0.1', namespace: '' };
    const pod = { apiVersion: 'v1', kind: 'Pod', name: 'web-0', namespace: 'ns1', uid: 'u1' };
    recorder.record(fip, 'Normal', 'FloatingIPReleased', 'released 10.0.0.1');
    recorder.record(pod, 'Warning', 'UnknownReleasePolicy', 'unknown release policy');
    for (let i = 0; i < 3; i++) recorder.record(pod, 'Normal', 'Dropped', `event ${i}`);
    while (held.length < 2) await new Promise((r) => setTimeout(r, 10));
    expect(bodies.map((b) => b.url)).toEqual([
      '/api/v1/namespaces/default/events',
      '/api/v1/namespaces/ns1/events',
    ]);
    expect(bodies[1]!.body).toMatchObject({
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { generateName: 'web-0.', namespace: 'ns1' },
      involvedObject: { apiVersion: 'v1', kind: 'Pod', name: 'web-0', namespace: 'ns1', uid: 'u1' },
      type: 'Warning',
      reason: 'UnknownReleasePolicy',
      source: { component: 'floatip' },
      count: 1,
    });
    expect(bodies[0]!.body.involvedObject).not.toHaveProperty('namespace');
    expect(lines.map((l) => l.msg)).toEqual([
      'Events dropped: the API server has not answered the ones before',
    ]);
    for (const res of held) res.writeHead(201, { 'Content-Type': 'application/json' }).end('{}');
    await recorder.flush();
    expect(lines.map((l) => l.msg)).toEqual([
      'Events dropped: the API server has not answered the ones before',
      '3 Events were dropped while writes were pending',
    ]);
    // the backlog drained: the next Event is written
    recorder.record(pod, 'Normal', 'Again', 'again');
    while (held.length < 3) await new Promise((r) => setTimeout(r, 10));
    held[2]!.writeHead(201).end('{}');
    await recorder.flush();
    expect(bodies.map((b) => b.body.reason)).toEqual(['FloatingIPReleased', 'UnknownReleasePolicy', 'Again']);
  } finally {
    server.closeAllConnections();
    server.close();
  }
});
