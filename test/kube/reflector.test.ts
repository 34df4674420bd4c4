// A watch that goes silent without closing (a blackholed path: no event, no FIN, no RST) is given
// up on within a bound and watched again, so the cache does not stay behind the API server forever.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CoreV1Api, KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { Reflector, SILENCE_GRACE_MS } from '../../src/kube/reflector.js';
import { MAX_EVENT_BYTES } from '../../src/kube/watch-lines.js';
import { silentLogger } from '../../src/log.js';
import { localKubeConfig } from './stub-api-server.js';

const pod = (name: string, resourceVersion: string): V1Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default', resourceVersion, uid: `uid-${name}` },
});

/**
 * A tiny API server: the pod list is empty; watches are answered by `watches[i]` in turn (the
 * last one for every later watch). Records each watch's query.
 */
async function apiServer(watches: ((res: ServerResponse) => void)[], listed: ListAnswer = { items: [] }) {
  const queries: URLSearchParams[] = [];
  const lists: number[] = [];
  const open = new Set<ServerResponse>();
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.searchParams.get('watch') !== 'true') {
      lists.push(Date.now());
      if (listed.failing) {
        res.writeHead(500, { 'content-type': 'application/json' }).end('{"kind":"Status","code":500}');
        return;
      }
      // the list as it is when asked, answered after the delay
      const answer = JSON.stringify({
        kind: 'PodList',
        items: listed.items,
        metadata: { resourceVersion: listed.version ?? '1' },
      });
      setTimeout(
        () => res.writeHead(200, { 'content-type': 'application/json' }).end(answer),
        listed.delayMs ?? 0,
      );
      return;
    }
    queries.push(url.searchParams);
    open.add(res);
    res.on('close', () => open.delete(res));
    watches[Math.min(queries.length, watches.length) - 1]!(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const kc = localKubeConfig(port);
  return {
    kc,
    queries,
    lists,
    async close() {
      for (const res of open) res.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** What the server's pod list answers, changed by a test as it goes. */
interface ListAnswer {
  items: V1Pod[];
  version?: string;
  failing?: boolean;
  delayMs?: number;
}

/** Headers sent, then nothing: the stream stays open and silent. */
const silentStream = (res: ServerResponse) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.flushHeaders();
};
/** Not even headers: the request hangs. */
const noAnswer = () => undefined;
const oneEvent = (res: ServerResponse) => {
  silentStream(res);
  res.write(`${JSON.stringify({ type: 'ADDED', object: pod('p', '2') })}\n`);
};

async function cacheHas(reflector: Reflector<V1Pod>, name: string, withinMs: number): Promise<number> {
  const start = Date.now();
  while (!reflector.get('default', name)) {
    if (Date.now() - start > withinMs) throw new Error(`pod ${name} not in the cache after ${withinMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return Date.now() - start;
}

function podReflector(kc: KubeConfig, watchTimeoutSeconds = 1): Reflector<V1Pod> {
  const core = kc.makeApiClient(CoreV1Api);
  return new Reflector<V1Pod>({
    name: 'pods',
    path: '/api/v1/pods',
    list: (page) => core.listPodForAllNamespaces(page),
    kubeConfig: kc,
    log: silentLogger(),
    watchTimeoutSeconds,
  });
}

describe('Reflector and a silent watch', () => {
  test.each([
    ['an open stream that says nothing', silentStream],
    ['a watch request that is never answered', noAnswer],
  ])(
    '%s is watched again within timeoutSeconds + the grace, and the event then reaches the cache',
    async (_what, first) => {
      const api = await apiServer([first, oneEvent]);
      const reflector = podReflector(api.kc);
      try {
        const started = Date.now();
        await reflector.start();
        await cacheHas(reflector, 'p', 1000 + SILENCE_GRACE_MS + 3000);
        const elapsed = Date.now() - started;
        expect(elapsed).toBeGreaterThanOrEqual(1000 + SILENCE_GRACE_MS - 100);
        expect(api.queries.length).toBe(2);
        // the server is asked to end every watch, so that a healthy one is never open that long
        expect(api.queries.map((q) => q.get('timeoutSeconds'))).toEqual(['1', '1']);
        // the second watch resumes after the relist (version 1), so nothing in between is missed
        expect(api.queries[1]!.get('resourceVersion')).toBe('1');
      } finally {
        await reflector.stop();
        await api.close();
      }
    },
    15_000,
  );

  test('a watch the server ends at its timeout is resumed from its version, without a silence', async () => {
    let n = 0;
    const api = await apiServer([
      (res) => {
        n++;
        oneEvent(res);
        res.end(); // the server's timeoutSeconds ran out
      },
      (res) => {
        n++;
        silentStream(res);
        res.write(`${JSON.stringify({ type: 'ADDED', object: pod('q', '3') })}\n`);
      },
    ]);
    const reflector = podReflector(api.kc);
    try {
      await reflector.start();
      await cacheHas(reflector, 'q', 2000);
      expect(n).toBe(2);
      expect(api.queries[1]!.get('resourceVersion')).toBe('2');
      expect(reflector.get('default', 'p')).toBeDefined();
    } finally {
      await reflector.stop();
      await api.close();
    }
  });

  test('stop() while a watch waits for its response returns at once', async () => {
    const api = await apiServer([noAnswer]);
    const reflector = podReflector(api.kc);
    try {
      const starting = reflector.start();
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(api.queries.length).toBe(1);
      const before = Date.now();
      await reflector.stop();
      await starting;
      // the watch's answer never comes: waiting for it would never end
      expect(Date.now() - before).toBeLessThan(2000);
    } finally {
      await api.close();
    }
  });
});

describe('Reflector reading the watch stream', () => {
  test('an event cut anywhere, inside a multi-byte character too, reaches the cache whole', async () => {
    const name = 'pöd-名前';
    const line = Buffer.from(`${JSON.stringify({ type: 'ADDED', object: pod(name, '2') })}\n`);
    const cutInside = line.indexOf(Buffer.from('名')) + 1; // between the bytes of one character
    const api = await apiServer([
      (res) => {
        silentStream(res);
        res.write(line.subarray(0, 3));
        setTimeout(() => res.write(line.subarray(3, cutInside)), 20);
        setTimeout(() => res.write(line.subarray(cutInside)), 40);
      },
    ]);
    const reflector = podReflector(api.kc);
    try {
      await reflector.start();
      await cacheHas(reflector, name, 2000);
      expect(reflector.get('default', name)?.metadata?.uid).toBe(`uid-${name}`);
    } finally {
      await reflector.stop();
      await api.close();
    }
  });

  test.each([
    ['a line that is not JSON', 'not json at all'],
    ['JSON that is not an event', '{"kind":"Status"}'],
  ])('%s ends the watch and the reflector lists again (not skipped in silence)', async (_what, bad) => {
    const api = await apiServer([
      (res) => {
        silentStream(res);
        res.write(`${bad}\n`);
      },
      oneEvent,
    ]);
    const reflector = podReflector(api.kc);
    try {
      await reflector.start();
      await cacheHas(reflector, 'p', 3000);
      expect(api.lists.length).toBe(2); // the first list, and one after the bad line
      expect(api.queries.length).toBe(2);
    } finally {
      await reflector.stop();
      await api.close();
    }
  });

  test('a line longer than any event (no newline in sight) ends the watch: memory stays bounded', async () => {
    const api = await apiServer([
      (res) => {
        silentStream(res);
        const junk = Buffer.alloc(1 << 20, 0x20);
        for (let sent = 0; sent <= MAX_EVENT_BYTES; sent += junk.length) res.write(junk);
      },
      oneEvent,
    ]);
    const reflector = podReflector(api.kc);
    try {
      await reflector.start();
      await cacheHas(reflector, 'p', 5000);
      expect(api.lists.length).toBe(2);
    } finally {
      await reflector.stop();
      await api.close();
    }
  });

  test.each([
    [
      'a 410 answer to the watch',
      (res: ServerResponse) =>
        res.writeHead(410, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            kind: 'Status',
            code: 410,
            reason: 'Expired',
            message: 'too old resource version',
          }),
        ),
    ],
    [
      'an ERROR event of code 410',
      (res: ServerResponse) => {
        silentStream(res);
        res.write(
          `${JSON.stringify({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired', message: 'too old' } })}\n`,
        );
      },
    ],
  ])('%s: the history is gone, so it lists again at once, without a backoff', async (_what, first) => {
    const api = await apiServer([first, oneEvent]);
    const reflector = podReflector(api.kc);
    try {
      await reflector.start();
      await cacheHas(reflector, 'p', 3000);
      expect(api.lists.length).toBe(2);
      // the shortest backoff after a failure is 200 ms; a 410 relists without one
      expect(api.lists[1]! - api.lists[0]!).toBeLessThan(150);
    } finally {
      await reflector.stop();
      await api.close();
    }
  });
});

/**
 * A reflector on a server whose watches stay silent (the reflector itself would notice only after
 * 30 s and the grace), started, handed to `body`, then stopped; `listed` is what the lists answer.
 */
async function withSilentWatch(
  listed: ListAnswer,
  body: (reflector: Reflector<V1Pod>, api: Awaited<ReturnType<typeof apiServer>>) => Promise<void>,
): Promise<void> {
  const api = await apiServer([silentStream], listed);
  const reflector = podReflector(api.kc, 30);
  try {
    await reflector.start();
    await body(reflector, api);
  } finally {
    await reflector.stop();
    await api.close();
  }
}

describe('Reflector.catchUp: the cache as the API server has it now, whatever the watch missed', () => {
  test('a silent watch is given up at once: catchUp lists again, reports what changed, and watches from there', async () => {
    const listed: ListAnswer = { items: [pod('gone', '1')] };
    const api = await apiServer([silentStream, silentStream], listed);
    // a watch that the reflector itself would find silent only after 30 s and the grace
    const reflector = podReflector(api.kc, 30);
    const seen: string[] = [];
    reflector.on('add', (p) => seen.push(`add ${p.metadata?.name}`));
    reflector.on('delete', (p) => seen.push(`delete ${p.metadata?.name}`));
    try {
      await reflector.start();
      expect(reflector.get('default', 'gone')).toBeDefined();
      // meanwhile at the API server, unseen through the silent watch: one pod deleted, one created
      listed.items = [pod('new', '5')];
      listed.version = '5';
      const before = Date.now();
      await reflector.catchUp();
      expect(Date.now() - before).toBeLessThan(2000);
      expect(reflector.get('default', 'new')).toBeDefined();
      expect(reflector.get('default', 'gone')).toBeUndefined();
      expect(seen).toEqual(['add gone', 'delete gone', 'add new']);
      expect(api.lists.length).toBe(2);
      // and it follows on from that list's version, on a new watch
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(api.queries.length).toBe(2);
      expect(api.queries[1]!.get('resourceVersion')).toBe('5');
    } finally {
      await reflector.stop();
      await api.close();
    }
  });

  test('a list that fails is tried again: catchUp resolves only once one has worked', async () => {
    const listed: ListAnswer = { items: [] };
    await withSilentWatch(listed, async (reflector, api) => {
      listed.failing = true;
      let done = false;
      const caughtUp = reflector.catchUp().then(() => (done = true));
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(done).toBe(false);
      expect(api.lists.length).toBeGreaterThanOrEqual(3); // the first, and at least two tries
      listed.failing = false;
      listed.items = [pod('p', '7')];
      await caughtUp;
      expect(reflector.get('default', 'p')).toBeDefined();
    });
  });

  test('callers who ask while a catch-up list is under way wait for a list begun after they asked', async () => {
    const listed: ListAnswer = { items: [], delayMs: 300 };
    await withSilentWatch(listed, async (reflector, api) => {
      const first = reflector.catchUp();
      // the catch-up list is asked; its answer (the list as it was then) comes 300 ms later
      while (api.lists.length < 2) await new Promise((resolve) => setTimeout(resolve, 10));
      listed.items = [pod('later', '9')];
      const second = reflector.catchUp();
      await first;
      expect(reflector.get('default', 'later')).toBeUndefined();
      await second;
      expect(reflector.get('default', 'later')).toBeDefined();
      expect(api.lists.length).toBe(3);
    });
  });

  test('stop() ends every wait: a catch-up that cannot happen is rejected, not left hanging', async () => {
    const listed: ListAnswer = { items: [] };
    const api = await apiServer([silentStream], listed);
    const reflector = podReflector(api.kc, 30);
    try {
      await reflector.start();
      listed.failing = true;
      const caughtUp = reflector.catchUp();
      await new Promise((resolve) => setTimeout(resolve, 100));
      await reflector.stop();
      await expect(caughtUp).rejects.toThrow('pods: stopped before it caught up');
      await expect(reflector.catchUp()).rejects.toThrow('pods: stopped');
    } finally {
      await api.close();
    }
  });
});
