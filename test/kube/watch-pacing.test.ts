// Watch events read in batches (src/kube/watch-pacing.ts): a watch that has read rests, what comes
// meanwhile is read together at the next beat, and whoever must see what has already come (a bind's
// pod lookup) gets it at once, not a beat later.
import { createServer as createHttpServer, type ServerResponse } from 'node:http';
import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';
import { CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { ClusterPods } from '../../src/kube/pod-lookup.js';
import { Reflector } from '../../src/kube/reflector.js';
import { WatchPacing } from '../../src/kube/watch-pacing.js';
import { silentLogger } from '../../src/log.js';
import { localKubeConfig } from './stub-api-server.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A TCP server with one client. The test writes with `send` once the client has read what came
 * before, so a slow turn of a busy machine cannot join two writes into one read by itself.
 */
async function writer() {
  let accepted: (socket: Socket) => void;
  const serverSide = new Promise<Socket>((resolve) => (accepted = resolve));
  const server: Server = createServer((socket) => accepted(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const client = connect((server.address() as AddressInfo).port, '127.0.0.1');
  const socket = await serverSide;
  const reads: { at: number; text: string }[] = [];
  const start = Date.now();
  return {
    reads,
    send: (text: string) => socket.write(text),
    /** Resolves once the client has read `text` in all. */
    async readAll(text: string) {
      while (reads.map((r) => r.text).join('') !== text) await sleep(10);
    },
    watch(pacing: WatchPacing) {
      client.on('data', (chunk: Buffer) => {
        reads.push({ at: Date.now() - start, text: chunk.toString() });
        pacing.read(client, () => !client.destroyed);
      });
    },
    async close() {
      client.destroy();
      socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

describe('WatchPacing', () => {
  test('what comes while a watch rests after a read is read together at the next beat', async () => {
    const w = await writer();
    w.watch(new WatchPacing(1000));
    try {
      w.send('a');
      await w.readAll('a');
      for (const text of ['b', 'c', 'd']) {
        await sleep(30);
        w.send(text);
      }
      await w.readAll('abcd');
      // read as they came, these were four reads; resting, the three after the first are one
      expect(w.reads.map((r) => r.text)).toEqual(['a', 'bcd']);
      expect(w.reads[1]!.at - w.reads[0]!.at).toBeGreaterThanOrEqual(950);
    } finally {
      await w.close();
    }
  });

  test('without a pace every read is delivered as it comes', async () => {
    const w = await writer();
    w.watch(new WatchPacing(0));
    try {
      for (const sent of ['a', 'ab', 'abc']) {
        w.send(sent.at(-1)!);
        await w.readAll(sent);
      }
      expect(w.reads.map((r) => r.text)).toEqual(['a', 'b', 'c']);
    } finally {
      await w.close();
    }
  });

  test('readArrived() delivers what has come to a resting watch at once, not at the next beat', async () => {
    const w = await writer();
    const pacing = new WatchPacing(3000);
    w.watch(pacing);
    try {
      w.send('a');
      await w.readAll('a');
      w.send('b');
      await sleep(200);
      // 'b' is in the socket's buffer, the watch resting until 3 s after 'a'
      expect(w.reads.map((r) => r.text)).toEqual(['a']);
      await pacing.readArrived();
      expect(w.reads.map((r) => r.text)).toEqual(['a', 'b']);
      expect(w.reads[1]!.at - w.reads[0]!.at).toBeLessThan(2000);
    } finally {
      await w.close();
    }
  });
});

const pod = (name: string, resourceVersion: string, uid = `uid-${name}`): V1Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default', resourceVersion, uid },
});
const event = (type: string, object: V1Pod) => `${JSON.stringify({ type, object })}\n`;

/** An API server whose pod watch writes `first` at once and what `send` is given; counts single-pod GETs. */
async function apiServer(first: readonly string[]) {
  const gets: string[] = [];
  const open = new Set<ServerResponse>();
  const server = createHttpServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname.startsWith('/api/v1/namespaces/')) {
      gets.push(url.pathname);
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end('{"kind":"Status","code":404,"reason":"NotFound"}');
    } else if (url.searchParams.get('watch') !== 'true') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ kind: 'PodList', items: [], metadata: { resourceVersion: '1' } }));
    } else {
      open.add(res);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.flushHeaders();
      for (const line of first) res.write(line);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const kc = localKubeConfig((server.address() as AddressInfo).port);
  return {
    kc,
    gets,
    send: (line: string) => {
      for (const res of open) res.write(line);
    },
    async close() {
      for (const res of open) res.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

describe('a pod looked up while the pod watch rests', () => {
  test.each([
    ['a pod the cache has not seen yet', [event('ADDED', pod('web-0', '3'))], 'uid-web-0'],
    [
      'a pod re-created under its name',
      [event('DELETED', pod('web-0', '3', 'old')), event('ADDED', pod('web-0', '4', 'new'))],
      'new',
    ],
  ])(
    '%s: its event, already sent, is read, not the pod asked of the API server',
    async (_what, lines, uid) => {
      const api = await apiServer([
        event('ADDED', pod('first', '2')),
        event('ADDED', pod('web-0', '2', 'old')),
      ]);
      const pacing = new WatchPacing(5000);
      const core = api.kc.makeApiClient(CoreV1Api);
      const reflector = new Reflector<V1Pod>({
        name: 'pods',
        path: '/api/v1/pods',
        list: (page) => core.listPodForAllNamespaces(page),
        kubeConfig: api.kc,
        log: silentLogger(),
        pacing,
      });
      const pods = new ClusterPods(api.kc, reflector);
      try {
        await reflector.start();
        while (!reflector.get('default', 'web-0')) await sleep(10);
        for (const line of lines) api.send(line);
        await sleep(300);
        // the later events wait in the socket: the watch rests for 5 s after its first read
        expect(reflector.get('default', 'web-0')?.metadata?.uid).not.toBe(uid);
        const found = await pods.find('default', 'web-0', uid);
        expect(found?.metadata?.uid).toBe(uid);
        expect(api.gets).toEqual([]);
      } finally {
        await reflector.stop();
        await api.close();
      }
    },
  );
});
