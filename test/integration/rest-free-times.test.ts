// The `updateTime` of a free address in GET /v1/ip, as galaxy shows it ("last allocate or release
// time of this ip"): the moment it was released, or, for one not released since, the moment the
// configuration in force was applied (galaxy stamps every free address then; its TestConfigurePool
// checks it). Never Go's zero time for a configured address.
import { eventually } from './helpers.js';
import { World } from './world.js';

const CONFIG = [
  {
    nodeSubnets: ['10.0.1.0/24'],
    ips: ['10.0.100.2~10.0.100.5'],
    subnet: '10.0.100.0/24',
    gateway: '10.0.100.1',
  },
];

let world: World;
afterEach(() => world.stop());

type Item = { ip: string; updateTime: string; namespace?: string };
const list = async (): Promise<Item[]> =>
  ((await world.rest('GET', '/v1/ip')).json as { content: Item[] }).content;
const one = async (ip: string): Promise<Item> =>
  ((await world.rest('GET', `/v1/ip/${ip}`)).json as { content: Item }).content;
const ms = (item: Item): number => Date.parse(item.updateTime);

/** Runs `step` and returns the window of wall-clock time it ran in. */
async function during(step: () => Promise<unknown>): Promise<[number, number]> {
  const from = Date.now();
  await step();
  return [from, Date.now()];
}

test('a free address is stamped when the configuration is applied, then when it is released; a new configuration restamps all', async () => {
  const [startFrom, startTo] = await during(async () => {
    world = await World.start({ config: CONFIG });
  });
  await world.node('a1', '10.0.1.11');
  const fresh = await list();
  expect(fresh.map((i) => i.ip)).toEqual(['10.0.100.2', '10.0.100.3', '10.0.100.4', '10.0.100.5']);
  for (const item of fresh) {
    expect(ms(item)).toBeGreaterThanOrEqual(startFrom);
    expect(ms(item)).toBeLessThanOrEqual(startTo);
  }

  const pod = await world.pod({ name: 'web-0', owner: { kind: 'StatefulSet', name: 'web' } });
  expect(await world.bind(pod, 'a1')).toBe('');
  const [bound] = await world.addressesOf('web-0');
  expect(bound).toBe('10.0.100.2');
  const [goneFrom, goneTo] = await during(async () => {
    await world.deletePod('web-0');
    await world.settle();
  });
  const released = await one('10.0.100.2');
  expect(released.namespace).toBeUndefined();
  expect(ms(released)).toBeGreaterThanOrEqual(goneFrom);
  expect(ms(released)).toBeLessThanOrEqual(goneTo);
  // the others keep the configuration's time, in the list and one by one
  const after = await list();
  expect(after[0]).toEqual({ ip: '10.0.100.2', policy: 0, updateTime: released.updateTime });
  expect(after.slice(1)).toEqual(fresh.slice(1));
  expect(await one('10.0.100.3')).toMatchObject(fresh[1]!);

  const [editFrom] = await during(async () => {
    await world.core.replaceNamespacedConfigMap({
      name: 'floatingip-config',
      namespace: 'kube-system',
      body: {
        metadata: { name: 'floatingip-config' },
        data: { floatingips: JSON.stringify([{ ...CONFIG[0], ips: ['10.0.100.2~10.0.100.6'] }]) },
      },
    });
  });
  let edited: Item[] = [];
  await eventually('the new configuration in the list', async () => (edited = await list()).length === 5);
  expect(edited.map((i) => i.ip)).toEqual([
    '10.0.100.2',
    '10.0.100.3',
    '10.0.100.4',
    '10.0.100.5',
    '10.0.100.6',
  ]);
  for (const item of edited) expect(ms(item)).toBeGreaterThanOrEqual(editFrom);
});
