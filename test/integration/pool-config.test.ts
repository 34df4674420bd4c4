// The floating-IP configuration from the watched ConfigMap (and galaxy's static list), over HTTP.
import { CoreV1Api, type CoreV1Event } from '@kubernetes/client-node';
import { type EmbeddedApiServer, startApiServer } from '../../src/apiserver/index.js';
import { GALAXY_DEFAULTS, parseGalaxyConfig } from '../../src/config/galaxy-config.js';
import { PoolConfigSource } from '../../src/controller/pool-config.js';
import { Allocator, ReleasePolicy, serializePoolConfig } from '../../src/ipam/index.js';
import { KubeEventRecorder } from '../../src/kube/events.js';
import { silentLogger } from '../../src/log.js';
import { eventually, waitFor } from './helpers.js';

const NODES = '10.0.1.0/24';
const entry = (ips: string, gateway = '10.0.100.1') => ({
  nodeSubnets: [NODES],
  ips: [ips],
  subnet: '10.0.100.0/24',
  gateway,
});
const attrs = { policy: ReleasePolicy.PodDelete, nodeName: 'n', podUid: 'u' };

let server: EmbeddedApiServer;
let core: CoreV1Api;
let sources: PoolConfigSource[] = [];

beforeEach(async () => {
  server = await startApiServer({ port: 0, seed: 'none', log: () => undefined });
  core = server.kubeConfig().makeApiClient(CoreV1Api);
  await core.createNamespace({ body: { metadata: { name: 'kube-system' } } });
});

afterEach(async () => {
  await Promise.all(sources.map((s) => s.stop()));
  sources = [];
  await server.close();
});

const writeConfigMap = async (data: Record<string, string>, create = false) => {
  const body = { metadata: { name: 'floatingip-config', namespace: 'kube-system' }, data };
  if (create) await core.createNamespacedConfigMap({ namespace: 'kube-system', body });
  else await core.replaceNamespacedConfigMap({ name: 'floatingip-config', namespace: 'kube-system', body });
};

async function start(settings = GALAXY_DEFAULTS) {
  const allocator = new Allocator();
  const recorder = new KubeEventRecorder(server.kubeConfig(), silentLogger());
  const source = new PoolConfigSource(settings, allocator, silentLogger(), recorder);
  sources.push(source);
  const changes: string[] = [];
  source.onChange((c) => changes.push(serializePoolConfig(c)));
  await source.start(server.kubeConfig());
  return { allocator, source, recorder, changes };
}

async function events(reason: string): Promise<CoreV1Event[]> {
  const list = await core.listNamespacedEvent({ namespace: 'kube-system' });
  return list.items.filter((e) => e.reason === reason && e.involvedObject.name === 'floatingip-config');
}

test('the ConfigMap configures the allocator, and an edit takes effect without a restart', async () => {
  await writeConfigMap({ floatingips: JSON.stringify([entry('10.0.100.10~10.0.100.20')]) }, true);
  const { allocator, source, recorder, changes } = await start();
  expect(source.configured).toBe(true);
  expect(allocator.allocate({ key: 'a', nodeSubnet: NODES, attrs })[0]!.ip).toBe('10.0.100.10');
  await writeConfigMap({ floatingips: JSON.stringify([entry('10.0.100.50~10.0.100.60')]) });
  await waitFor('the edit to apply', () => changes.length === 2);
  expect(allocator.allocate({ key: 'b', nodeSubnet: NODES, attrs })[0]!.ip).toBe('10.0.100.50');
  await recorder.flush();
  expect(await events('FloatingIPConfigApplied')).toHaveLength(2);
  // the allocation outside the new range is kept and reported
  expect(allocator.get('10.0.100.10')?.key).toBe('a');
  const orphans = await events('OrphanedFloatingIPs');
  expect(orphans.map((e) => e.message)).toEqual([
    'kept, outside every configured range: 10.0.100.10; they are used by their keys until released',
  ]);
});

test('a bad edit is refused with an Event naming the error; the previous configuration stays', async () => {
  await writeConfigMap({ floatingips: JSON.stringify([entry('10.0.100.10~10.0.100.20')]) }, true);
  const { allocator, recorder, changes } = await start();
  await writeConfigMap({ floatingips: JSON.stringify([entry('10.0.100.50~10.0.100.60', '')]) });
  await eventually('the refusal Event', async () => (await events('InvalidFloatingIPConfig')).length > 0);
  await recorder.flush();
  const refused = await events('InvalidFloatingIPConfig');
  expect(refused).toHaveLength(1);
  expect(refused[0]!.type).toBe('Warning');
  expect(refused[0]!.message).toContain('floatingips[0].gateway "": gateway is empty');
  expect(changes).toHaveLength(1);
  expect(allocator.allocate({ key: 'a', nodeSubnet: NODES, attrs })[0]!.ip).toBe('10.0.100.10');
});

test('a ConfigMap without the key is refused with an Event, in galaxy’s words', async () => {
  await writeConfigMap({ other: '[]' }, true);
  const { source, recorder } = await start();
  expect(source.configured).toBe(false);
  await recorder.flush();
  const refused = await events('InvalidFloatingIPConfig');
  expect(refused[0]!.message).toBe(
    "configmap floatingip-config_kube-system doesn't have a key floatingips; no configuration is in force, so floatip is not ready",
  );
  expect(source.notReadyBecause).toBe(
    "ConfigMap kube-system/floatingip-config is invalid: configmap floatingip-config_kube-system doesn't have a key floatingips",
  );
});

test('13: an invalid ConfigMap at start leaves floatip unconfigured and says so, truthfully; a fix configures', async () => {
  await writeConfigMap({ floatingips: JSON.stringify([entry('10.0.100.10~10.0.100.20', '')]) }, true);
  const { source, recorder, changes } = await start();
  expect(source.configured).toBe(false);
  expect(source.notReadyBecause).toBe(
    'ConfigMap kube-system/floatingip-config is invalid: invalid floating IP configuration: floatingips[0].gateway "": gateway is empty',
  );
  await recorder.flush();
  const refused = await events('InvalidFloatingIPConfig');
  expect(refused.map((e) => e.message)).toEqual([
    'invalid floating IP configuration: floatingips[0].gateway "": gateway is empty; no configuration is in force, so floatip is not ready',
  ]);
  // nothing claims the ConfigMap is missing
  expect(await events('FloatingIPConfigMissing')).toEqual([]);
  // a later bad edit after a good one keeps the good one, and says that
  await writeConfigMap({ floatingips: JSON.stringify([entry('10.0.100.10~10.0.100.20')]) });
  await waitFor('the fix to apply', () => changes.length === 1);
  expect(source.notReadyBecause).toBeUndefined();
  await writeConfigMap({ floatingips: '[' });
  await eventually('the second refusal', async () => (await events('InvalidFloatingIPConfig')).length === 2);
  await recorder.flush();
  const second = (await events('InvalidFloatingIPConfig'))
    .map((e) => e.message)
    .find((m) => m?.includes('not JSON'));
  expect(second).toMatch(/; the last valid configuration stays in force$/);
  expect(source.configured).toBe(true);
});

test('the counts say how many addresses of the ranges are never handed out; held ones are listed', async () => {
  await writeConfigMap({ floatingips: JSON.stringify([entry('10.0.100.0~10.0.100.255')]) }, true);
  const { allocator, source, recorder } = await start();
  expect(allocator.stats()[0]).toMatchObject({ total: 256n, excluded: 3, free: 253n });
  // as galaxy may have written it: the gateway held by a pod
  allocator.load({
    ip: '10.0.100.1',
    key: 'sts_ns_web_web-0',
    policy: ReleasePolicy.Immutable,
    nodeName: 'n',
    podUid: 'u',
    updateTime: 1,
    reserved: false,
  });
  source.reportExcludedInUse();
  await recorder.flush();
  expect((await events('FloatingIPConfigApplied')).map((e) => e.message)).toEqual([
    '1 entries applied; 3 addresses of the ranges are never handed out (network, broadcast and gateway addresses)',
  ]);
  const warned = await events('UnusableFloatingIPsInUse');
  expect(warned.map((e) => [e.type, e.message])).toEqual([
    [
      'Warning',
      'kept, but never handed out again once released: 10.0.100.1 (the gateway of floatingips[0]) held by sts_ns_web_web-0',
    ],
  ]);
});

test('a missing ConfigMap is waited for, and said to be missing; its creation configures', async () => {
  const { source, allocator, changes, recorder } = await start();
  expect(source.configured).toBe(false);
  expect(source.notReadyBecause).toBe(
    'failed to get floatingip configmap floatingip-config_kube-system: not found',
  );
  await recorder.flush();
  expect((await events('FloatingIPConfigMissing')).map((e) => e.message)).toEqual([
    'failed to get floatingip configmap floatingip-config_kube-system: not found; floatip is not ready until it is created',
  ]);
  await writeConfigMap({ floatingips: JSON.stringify([entry('10.0.100.10~10.0.100.20')]) }, true);
  await waitFor('the ConfigMap to apply', () => changes.length === 1);
  expect(source.configured).toBe(true);
  expect(allocator.stats()[0]!.total).toBe(11n);
});

test('the galaxy config file’s static list is applied and the ConfigMap never read', async () => {
  await writeConfigMap({ floatingips: JSON.stringify([entry('10.0.100.10~10.0.100.20')]) }, true);
  const settings = parseGalaxyConfig(
    JSON.stringify({ schedule_plugin: { floatingips: [entry('10.0.100.70~10.0.100.71')] } }),
  );
  const { allocator, source } = await start(settings);
  expect(source.configured).toBe(true);
  expect(allocator.stats()[0]!.total).toBe(2n);
});
