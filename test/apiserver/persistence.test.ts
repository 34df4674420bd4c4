// The state file: objects and the revision survive a restart; writes are atomic and coalesced.
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { startApiServer } from '../../src/apiserver/index.js';
import { withServer } from './helpers.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'floatip-state-'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

const FIP = { group: 'galaxy.k8s.io', version: 'v1alpha1', plural: 'floatingips' };

test('objects survive a restart and the resourceVersion keeps going up', async () => {
  const stateFile = join(dir, 'state.json');
  const first = await withServer({ stateFile, seed: 'demo' });
  const created = (await first
    .kubeConfig()
    .makeApiClient(CustomObjectsApi)
    .createClusterCustomObject({
      ...FIP,
      body: {
        apiVersion: 'galaxy.k8s.io/v1alpha1',
        kind: 'FloatingIP',
        metadata: { name: '10.0.100.99' },
        spec: {
          key: 'sts_default_web_web-0',
          attribute: '{"NodeName":"demo-node-1","Uid":"u"}',
          policy: 1,
          updateTime: '2026-01-01T00:00:00Z',
        },
      },
    })) as { metadata: { uid: string; resourceVersion: string } };
  const lastRevision = first.revision();
  await first.close();
  expect((await readdir(dir)).filter((f) => f.endsWith('.tmp'))).toEqual([]);

  const second = await withServer({ stateFile, seed: 'none' });
  try {
    expect(second.revision()).toBe(lastRevision);
    const custom = second.kubeConfig().makeApiClient(CustomObjectsApi);
    const loaded = (await custom.getClusterCustomObject({ ...FIP, name: '10.0.100.99' })) as {
      metadata: { uid: string; resourceVersion: string };
    };
    expect(loaded.metadata).toMatchObject({
      uid: created.metadata.uid,
      resourceVersion: created.metadata.resourceVersion,
    });
    // The seed was not applied again, and the demo objects are the saved ones.
    const core = second.kubeConfig().makeApiClient(CoreV1Api);
    expect((await core.listNode()).items).toHaveLength(4);
    const next = await core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'after-restart' } },
    });
    expect(Number(next.metadata?.resourceVersion)).toBe(lastRevision + 1);
  } finally {
    await second.close();
  }
});

test('writes are debounced, and flush writes what changed', async () => {
  const stateFile = join(dir, 'nested', 'state.json');
  const server = await withServer({ stateFile, seed: 'none', persistDebounceMs: 60_000 });
  try {
    await server.flush();
    const empty = JSON.parse(await readFile(stateFile, 'utf8')) as { format: string; objects: unknown[] };
    expect(empty).toMatchObject({ format: 'floatip-dev-apiserver/v1', revision: 0, objects: [] });
    server.createObjects([
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'default' } },
    ]);
    // Within the debounce window nothing is written yet.
    await new Promise((r) => setTimeout(r, 50));
    expect(JSON.parse(await readFile(stateFile, 'utf8'))).toMatchObject({ objects: [] });
    await server.flush();
    expect(JSON.parse(await readFile(stateFile, 'utf8'))).toMatchObject({
      revision: 1,
      objects: [{ metadata: { name: 'c' } }],
    });
  } finally {
    await server.close();
  }
});

test('a watch from before the restart gets 410, since the history is not saved', async () => {
  const stateFile = join(dir, 'state.json');
  const first = await withServer({ stateFile, seed: 'demo' });
  await first.close();
  const second = await withServer({ stateFile });
  try {
    const res = await fetch(`${second.url}/api/v1/nodes?watch=1&resourceVersion=1`);
    expect(await res.text()).toContain('"code":410');
  } finally {
    await second.close();
  }
});

test('an unreadable state file stops the start with a clear error, and is left alone', async () => {
  const stateFile = join(dir, 'state.json');
  await writeFile(stateFile, '{ not json');
  await expect(startApiServer({ stateFile })).rejects.toThrow(/state file .*state\.json is not valid JSON/);
  await writeFile(stateFile, JSON.stringify({ format: 'something-else' }));
  await expect(startApiServer({ stateFile })).rejects.toThrow(/is not a floatip-dev-apiserver\/v1 document/);
  expect(await readFile(stateFile, 'utf8')).toBe(JSON.stringify({ format: 'something-else' }));
});
