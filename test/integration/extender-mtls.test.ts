// The extender port with --extender-client-ca-file, over real TLS: a client whose certificate that
// CA signed is answered; one without a certificate, or with another CA's, is refused in the TLS
// handshake, before any HTTP. Two replicas: a follower forwards a bind to the leader over the same
// mutual TLS. The certificates are the documented recipe's (scripts/extender-certs.sh).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CoreV1Api } from '@kubernetes/client-node';
import type { EmbeddedApiServer } from '../../src/apiserver/index.js';
import type { Floatip } from '../../src/server.js';
import { eventually } from './helpers.js';
import { type HaCluster, startHaCluster } from './replicas.js';

let dir: string;
const pem = (name: string) => readFileSync(join(dir, name), 'utf8');
let other: { cert: string; key: string };
let cluster: HaCluster;
let server: EmbeddedApiServer;
let core: CoreV1Api;
let replicas: Floatip[] = [];

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'floatip-mtls-'));
  execFileSync('scripts/extender-certs.sh', [join(dir, 'ours')]);
  execFileSync('scripts/extender-certs.sh', [join(dir, 'theirs')]);
  other = {
    cert: readFileSync(join(dir, 'theirs/scheduler.crt'), 'utf8'),
    key: readFileSync(join(dir, 'theirs/scheduler.key'), 'utf8'),
  };
  dir = join(dir, 'ours');
});
afterAll(() => rmSync(join(dir, '..'), { recursive: true, force: true }));

beforeEach(async () => {
  cluster = await startHaCluster();
  ({ server, core } = cluster);
});
afterEach(async () => {
  await Promise.all(replicas.map((r) => r.close()));
  replicas = [];
  await server.close();
});

const replica = (identity: string) =>
  cluster.replica(identity, {
    healthPort: 0,
    tls: { cert: pem('floatip.crt'), key: pem('floatip.key') },
    extenderClientCa: pem('ca.crt'),
  });

/** One POST over TLS as `client` (no certificate when undefined): the answer, or how the connection failed. */
function post(
  url: string,
  body: unknown,
  client: { cert: string; key: string } | undefined,
): Promise<{ status: number; json: unknown } | { refused: string }> {
  return new Promise((resolve) => {
    const req = request(
      url,
      { method: 'POST', ca: pem('ca.crt'), ...client, headers: { 'content-type': 'application/json' } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode!, json: JSON.parse(Buffer.concat(chunks).toString()) }),
        );
      },
    );
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ refused: err.code ?? err.message }));
    req.end(JSON.stringify(body));
  });
}

const scheduler = () => ({ cert: pem('scheduler.crt'), key: pem('scheduler.key') });

test('a client with a certificate of the CA is answered; without one, or with another CA’s, the handshake refuses it', async () => {
  replicas = [await replica('r1')];
  const [r] = replicas;
  await eventually('the replica to lead', async () => r!.isLeader(), 5000);
  const filter = `${r!.extenderUrl}/v1/filter`;
  expect(r!.extenderUrl).toMatch(/^https:/);
  const body = { Pod: { metadata: { name: 'x', namespace: 'ns1' }, spec: {} }, NodeNames: ['a1'] };
  expect(await post(filter, body, scheduler())).toMatchObject({ status: 200, json: { NodeNames: ['a1'] } });
  // TLS 1.3: the server's "certificate required" alert arrives as the client's first read fails
  expect(await post(filter, body, undefined)).toEqual({
    refused: 'ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED',
  });
  // the "unknown CA" alert, or the reset that follows it when it loses the race with the write
  expect(await post(filter, body, other)).toEqual({
    refused: expect.stringMatching(/^(ERR_SSL_TLSV1_ALERT_UNKNOWN_CA|ECONNRESET)$/),
  });
  // kubelet's probes carry no certificate: the plain health port answers them
  expect((await fetch(`${r!.healthUrl}/readyz`)).status).toBe(200);
  expect(await (await fetch(`${r!.healthUrl}/healthz`)).text()).toBe('ok');
  expect((await fetch(`${r!.healthUrl}/v1/filter`, { method: 'POST', body: '{}' })).status).toBe(404);
});

test('a follower forwards a bind to the leader over the same mutual TLS', async () => {
  replicas = await Promise.all(['r1', 'r2'].map(replica));
  await eventually('a leader', async () => replicas.filter((r) => r.isLeader()).length === 1, 5000);
  const follower = replicas.find((r) => !r.isLeader())!;
  await eventually(
    'the follower to know the leader',
    async () => follower.elector!.leaderAddress() !== undefined,
  );
  const pod = await cluster.pod('p1', replicas);
  const bound = await post(
    `${follower.extenderUrl}/v1/bind`,
    { PodName: 'p1', PodNamespace: 'ns1', PodUID: pod.metadata!.uid, Node: 'a1' },
    scheduler(),
  );
  expect(bound).toEqual({ status: 200, json: { Error: '' } });
  const read = await core.readNamespacedPod({ namespace: 'ns1', name: 'p1' });
  expect(read.spec?.nodeName).toBe('a1');
  expect(read.metadata?.annotations?.['k8s.v1.cni.galaxy.io/args']).toContain('10.0.100.10/24');
});

test('a client CA without a serving certificate is refused at start', async () => {
  await expect(replicaWithoutCert()).rejects.toThrow(
    'a client CA for the extender port needs its serving certificate and key',
  );
});

const replicaWithoutCert = () =>
  cluster.replica('r1', { leaderElection: undefined, extenderClientCa: pem('ca.crt') });
