import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  GALAXY_DEFAULTS,
  GalaxyConfigError,
  loadGalaxyConfigFile,
  parseGalaxyConfig,
} from '../../../src/config/galaxy-config.js';

test("galaxy's shipped file gives the defaults (storageDriver is ignored)", () => {
  expect(parseGalaxyConfig('{"schedule_plugin": {"storageDriver": "k8s-crd"}}')).toEqual(GALAXY_DEFAULTS);
});

test('every key of docs/galaxy.md#configuration-file is read', () => {
  const config = parseGalaxyConfig(
    JSON.stringify({
      schedule_plugin: {
        floatingips: [
          {
            nodeSubnets: ['10.0.0.0/16'],
            ips: ['10.0.70.2~10.0.70.241'],
            subnet: '10.0.70.0/24',
            gateway: '10.0.70.1',
          },
        ],
        resyncInterval: 5,
        configMapName: 'cm',
        configMapNamespace: 'ns',
        floatingipKey: 'fips',
        cloudProviderGrpcAddr: '127.0.0.2:80',
      },
    }),
  );
  expect(config.floatingips?.entries).toHaveLength(1);
  expect(config).toMatchObject({
    resyncIntervalMinutes: 5,
    configMapName: 'cm',
    configMapNamespace: 'ns',
    floatingipKey: 'fips',
    cloudProviderGrpcAddr: '127.0.0.2:80',
  });
});

test('a resync interval below 1 minute becomes 1, as galaxy', () => {
  expect(parseGalaxyConfig('{"schedule_plugin":{"resyncInterval":0}}').resyncIntervalMinutes).toBe(1);
});

test.each([
  ['{', /^bad config \{: /],
  ['[]', /^bad config \[\]: not a JSON object$/],
  ['{"schedule_plugin":{"resyncInterval":"1m"}}', /resyncInterval must be a whole number of minutes$/],
  ['{"schedule_plugin":{"configMapName":7}}', /configMapName must be a string$/],
  [
    '{"schedule_plugin":{"floatingips":[{"nodeSubnets":[],"subnet":"10.0.0.0/24","gateway":"10.0.0.1"}]}}',
    /floatingips\[0\]\.nodeSubnets \[\]: node subnet is empty$/,
  ],
  // integers written as Go's decoder refuses them for an int or a uint16
  [
    '{"schedule_plugin":{"resyncInterval":5.0}}',
    /: schedule_plugin\.resyncInterval must be an integer, not 5\.0$/,
  ],
  [
    '{"Schedule_Plugin":{"floatingips":[{"nodeSubnets":["10.0.0.0/24"],"subnet":"10.0.0.0/24","gateway":"10.0.0.1","Vlan":2e0}]}}',
    /: Schedule_Plugin\.floatingips\[0\]\.Vlan must be an integer, not 2e0$/,
  ],
])('%s is refused: %s', (text, message) => {
  expect(() => parseGalaxyConfig(text)).toThrow(GalaxyConfigError);
  expect(() => parseGalaxyConfig(text)).toThrow(message);
});

test('files are read; a missing one says so', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'floatip-'));
  const file = path.join(dir, 'galaxy-ipam.json');
  await writeFile(file, '{"schedule_plugin":{"configMapNamespace":"other"}}');
  expect((await loadGalaxyConfigFile(file)).configMapNamespace).toBe('other');
  await expect(loadGalaxyConfigFile(path.join(dir, 'missing.json'))).rejects.toThrow(
    /^read json config: ENOENT/,
  );
});

test('keys are matched as galaxy’s Go decoder matches them: case-insensitively, the last naming a field', () => {
  const config = parseGalaxyConfig(
    '{"Schedule_Plugin":{"ConfigMapName":"a","configmapname":"cm","FloatingIPs":[{"NodeSubnets":["10.0.0.0/16"],"IPs":["10.0.70.2"],"Subnet":"10.0.70.0/24","Gateway":"10.0.70.1","VLAN":4}]}}',
  );
  expect(config.configMapName).toBe('cm');
  expect(config.floatingips?.entries[0]).toMatchObject({ nodeSubnets: ['10.0.0.0/16'], vlan: 4 });
});
