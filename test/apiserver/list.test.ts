// Lists: label and field selectors, limit/continue paging, and the revision a list reports.
import { CoreV1Api } from '@kubernetes/client-node';
import type { EmbeddedApiServer } from '../../src/apiserver/index.js';
import { failure, http, withServer } from './helpers.js';

let server: EmbeddedApiServer;
let core: CoreV1Api;

const podNames = async (opts: {
  labelSelector?: string;
  fieldSelector?: string;
  namespace?: string;
}): Promise<string[]> => {
  const list = opts.namespace
    ? await core.listNamespacedPod({ namespace: opts.namespace, ...opts })
    : await core.listPodForAllNamespaces(opts);
  return list.items.map((p) => p.metadata?.name ?? '').sort();
};

beforeAll(async () => {
  server = await withServer({ seed: 'none' });
  core = server.kubeConfig().makeApiClient(CoreV1Api);
  const pods: [string, string, Record<string, string>, string | undefined, string][] = [
    ['a1', 'default', { app: 'web', tier: 'front' }, 'node-1', 'Running'],
    ['a2', 'default', { app: 'web', tier: 'back' }, 'node-2', 'Pending'],
    ['a3', 'default', { app: 'db' }, undefined, 'Pending'],
    ['b1', 'other', { app: 'web', version: '3' }, 'node-1', 'Running'],
    ['b2', 'other', {}, undefined, 'Failed'],
  ];
  server.createObjects(
    pods.map(([name, namespace, labels, nodeName, phase]) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace, labels },
      spec: { containers: [{ name: 'c', image: 'i' }], ...(nodeName ? { nodeName } : {}) },
      status: { phase },
    })),
  );
});
afterAll(() => server.close());

describe('label selectors', () => {
  test.each([
    ['app=web', ['a1', 'a2', 'b1']],
    ['app==web', ['a1', 'a2', 'b1']],
    ['app!=web', ['a3', 'b2']],
    ['app in (db, web),tier', ['a1', 'a2']],
    ['app notin (web)', ['a3', 'b2']],
    ['tier', ['a1', 'a2']],
    ['!tier', ['a3', 'b1', 'b2']],
    ['app=web,!tier', ['b1']],
    ['version>2', ['b1']],
    ['version<3', []],
    ['', ['a1', 'a2', 'a3', 'b1', 'b2']],
  ])('%s', async (labelSelector, expected) => {
    expect(await podNames({ labelSelector })).toEqual(expected);
  });

  test.each(['app=', 'app in web', 'app=(x', '=web', 'app=web,', 'a b'])(
    'bad selector %j',
    async (labelSelector) => {
      if (labelSelector === 'app=') {
        // An empty value is valid: it selects objects whose label is empty.
        expect(await podNames({ labelSelector })).toEqual([]);
        return;
      }
      const res = await failure(core.listPodForAllNamespaces({ labelSelector }));
      expect(res.code).toBe(400);
      expect(res.status.reason).toBe('BadRequest');
    },
  );
});

describe('field selectors', () => {
  test.each([
    ['metadata.name=a2', ['a2']],
    ['metadata.namespace=other', ['b1', 'b2']],
    ['metadata.namespace!=other', ['a1', 'a2', 'a3']],
    ['spec.nodeName=node-1', ['a1', 'b1']],
    ['spec.nodeName=', ['a3', 'b2']],
    ['status.phase=Pending', ['a2', 'a3']],
    ['status.phase!=Pending,spec.nodeName==node-1', ['a1', 'b1']],
  ])('%s', async (fieldSelector, expected) => {
    expect(await podNames({ fieldSelector })).toEqual(expected);
  });

  test('both selectors together, within a namespace', async () => {
    expect(
      await podNames({
        namespace: 'default',
        labelSelector: 'app=web',
        fieldSelector: 'status.phase=Running',
      }),
    ).toEqual(['a1']);
  });

  test('an unsupported field is 400, as kube-apiserver answers', async () => {
    const res = await failure(core.listPodForAllNamespaces({ fieldSelector: 'spec.hostname=x' }));
    expect(res.code).toBe(400);
    expect(res.status.message).toContain('field label not supported: spec.hostname');
  });
});

describe('paging', () => {
  test('limit/continue walks every object once, in key order, and keeps the first page revision', async () => {
    const more = Array.from({ length: 25 }, (_, i) => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: `page-${String(i).padStart(2, '0')}`, namespace: i % 2 ? 'ns-odd' : 'ns-even' },
    }));
    server.createObjects(more);
    const seen: string[] = [];
    let token: string | undefined;
    let firstRevision: string | undefined;
    let pages = 0;
    do {
      const page = await core.listConfigMapForAllNamespaces({
        limit: 4,
        ...(token ? { _continue: token } : {}),
      });
      pages++;
      firstRevision ??= page.metadata?.resourceVersion;
      expect(page.metadata?.resourceVersion).toBe(firstRevision);
      seen.push(...page.items.map((c) => `${c.metadata?.namespace}/${c.metadata?.name}`));
      token = page.metadata?._continue;
      // A write between pages does not disturb the walk.
      if (pages === 2)
        await core.createNamespacedConfigMap({ namespace: 'zz-late', body: { metadata: { name: 'late' } } });
    } while (token);
    expect(pages).toBe(7);
    expect(seen).toEqual([...seen].sort());
    expect(new Set(seen).size).toBe(26);
    expect(seen).toContain('zz-late/late');
  });

  test('paging within a namespace and with a selector', async () => {
    const first = await core.listNamespacedConfigMap({ namespace: 'ns-odd', limit: 5 });
    expect(first.items).toHaveLength(5);
    expect(first.items.every((c) => c.metadata?.namespace === 'ns-odd')).toBe(true);
    const rest = await core.listNamespacedConfigMap({
      namespace: 'ns-odd',
      limit: 100,
      _continue: first.metadata?._continue,
    });
    expect(rest.items).toHaveLength(7);
    expect(rest.metadata?._continue).toBeUndefined();
    const selected = await core.listConfigMapForAllNamespaces({
      fieldSelector: 'metadata.name=page-07',
      limit: 1,
    });
    expect(selected.items.map((c) => c.metadata?.name)).toEqual(['page-07']);
  });

  test('a malformed continue token is 400; one from before the retained history is 410', async () => {
    expect(
      (await failure(core.listNamespacedConfigMap({ namespace: 'ns-odd', _continue: 'garbage' }))).code,
    ).toBe(400);
    const first = await core.listNamespacedConfigMap({ namespace: 'ns-odd', limit: 2 });
    // A change after the first page, then a compaction past it: the page's revision is gone from history.
    await core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'after-first-page' } },
    });
    server.faults.expireHistory();
    const expired = await failure(
      core.listNamespacedConfigMap({ namespace: 'ns-odd', _continue: first.metadata?._continue }),
    );
    expect(expired.code).toBe(410);
  });

  test('a list reports the current revision', async () => {
    const res = await http(server, 'GET', '/api/v1/pods');
    expect(res.json).toMatchObject({
      kind: 'PodList',
      apiVersion: 'v1',
      metadata: { resourceVersion: String(server.revision()) },
    });
  });
});
