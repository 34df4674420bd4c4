// GET /v1/ip's selection and order over a real allocator (no server): galaxy's answers where its
// rules work, and the fixes of docs/galaxy.md#list-filters-and-sort where they did not.
import { type IPPage, listIPs, parseSort } from '../../../src/api/ip-list.js';
import type { IPFilters } from '../../../src/api/ip-query.js';
import { Allocator, ReleasePolicy, parsePoolConfig } from '../../../src/ipam/index.js';

const CONFIG = parsePoolConfig([
  { nodeSubnets: ['10.0.1.0/24'], ips: ['10.0.0.2~10.0.0.20'], subnet: '10.0.0.0/24', gateway: '10.0.0.1' },
  { nodeSubnets: ['10.0.1.0/24'], ips: ['fd00::2~fd00::4'], subnet: 'fd00::/64', gateway: 'fd00::1' },
]);

const none: IPFilters = { keyword: '', poolName: '', appName: '', podName: '', namespace: '', appType: '' };
const attrs = (policy = ReleasePolicy.PodDelete) => ({ policy, nodeName: '', podUid: '' });

function world(): Allocator {
  const a = new Allocator(CONFIG, { clock: () => 1000 });
  a.allocateIP('10.0.0.10', 'sts_ns1_web_web-1', attrs(ReleasePolicy.Immutable));
  a.allocateIP('10.0.0.9', 'sts_ns1_web_web-10', attrs());
  a.allocateIP('10.0.0.3', 'dp_ns2_api_api-7d9-x1', attrs(ReleasePolicy.Never));
  a.allocateIP('fd00::3', 'dp_ns2_api_', attrs(ReleasePolicy.Never)); // parked
  a.allocateIP('10.0.0.4', 'pool__p1_dp_ns1_front_front-1', attrs(ReleasePolicy.Never));
  a.allocateIP('10.0.0.5', 'pool__p1_', attrs(ReleasePolicy.Never));
  a.allocateIP('10.0.0.6', 'tapp_ns1_game_game-0', attrs());
  return a;
}

const ips = (page: IPPage) => page.items.map((i) => i.ip);
const list = (filters: Partial<IPFilters>, sort = '', page = 0, size = 100) =>
  listIPs(world(), { ...none, ...filters }, page, size, parseSort(sort));

describe('selection', () => {
  test('no filter: every configured address, free ones included, in numeric order', async () => {
    const page = await list({});
    expect(page.window.totalElements).toBe(22n);
    expect(ips(page).slice(0, 10)).toEqual([
      '10.0.0.2',
      '10.0.0.3',
      '10.0.0.4',
      '10.0.0.5',
      '10.0.0.6',
      '10.0.0.7',
      '10.0.0.8',
      '10.0.0.9',
      '10.0.0.10',
      '10.0.0.11',
    ]);
    expect(page.items[0]!.allocation).toBeUndefined();
    expect(page.items[1]!.allocation?.key).toBe('dp_ns2_api_api-7d9-x1');
    expect(ips(page).slice(-3)).toEqual(['fd00::2', 'fd00::3', 'fd00::4']);
  });

  test('keyword: substring of allocated keys only; other filters ignored', async () => {
    expect(ips(await list({ keyword: 'web', namespace: 'nope' }))).toEqual(['10.0.0.9', '10.0.0.10']);
    expect(ips(await list({ keyword: 'api' }))).toEqual(['10.0.0.3', 'fd00::3']);
  });

  test('poolName alone: the whole pool, parked and in use (namespace ignored, as galaxy)', async () => {
    expect(ips(await list({ poolName: 'p1' }))).toEqual(['10.0.0.4', '10.0.0.5']);
    expect(ips(await list({ poolName: 'p1', namespace: 'other' }))).toEqual(['10.0.0.4', '10.0.0.5']);
  });

  test('namespace + appName: the app by its exact prefix, appType defaulting to statefulset', async () => {
    expect(ips(await list({ namespace: 'ns1', appName: 'web' }))).toEqual(['10.0.0.9', '10.0.0.10']);
    expect(ips(await list({ namespace: 'ns2', appName: 'api' }))).toEqual([]);
    expect(ips(await list({ namespace: 'ns2', appName: 'api', appType: 'deployment' }))).toEqual([
      '10.0.0.3',
      'fd00::3',
    ]);
    expect(ips(await list({ namespace: 'ns2', appName: 'ap', appType: 'deployment' }))).toEqual([]);
    expect(
      ips(await list({ namespace: 'ns1', appName: 'front', appType: 'Deployment', poolName: 'p1' })),
    ).toEqual(['10.0.0.4']);
  });

  test('podName matches the exact key: web-1 is not web-10 (galaxy matched the prefix)', async () => {
    expect(ips(await list({ namespace: 'ns1', appName: 'web', podName: 'web-1' }))).toEqual(['10.0.0.10']);
    expect(ips(await list({ namespace: 'ns1', appName: 'web', podName: 'web-10' }))).toEqual(['10.0.0.9']);
  });

  test('namespace alone: every IP whose key names it (galaxy: nothing)', async () => {
    expect(ips(await list({ namespace: 'ns1' }))).toEqual(['10.0.0.4', '10.0.0.6', '10.0.0.9', '10.0.0.10']);
    expect(ips(await list({ namespace: 'ns1', appType: 'statefulset' }))).toEqual(['10.0.0.9', '10.0.0.10']);
    expect(ips(await list({ namespace: 'ns2' }))).toEqual(['10.0.0.3', 'fd00::3']);
  });

  test('appName alone: that app in every namespace (galaxy: nothing)', async () => {
    expect(ips(await list({ appName: 'game' }))).toEqual(['10.0.0.6']);
    expect(ips(await list({ appName: 'game', appType: 'tapp' }))).toEqual(['10.0.0.6']);
    expect(ips(await list({ appName: 'game', appType: 'statefulset' }))).toEqual([]);
  });

  test('podName alone: that pod in any namespace (galaxy: every IP)', async () => {
    expect(ips(await list({ podName: 'web-1' }))).toEqual(['10.0.0.10']);
  });

  test('appType alone: that kind only (galaxy: every IP)', async () => {
    expect(ips(await list({ appType: 'deployment' }))).toEqual(['10.0.0.3', '10.0.0.4', 'fd00::3']);
  });
});

describe('sort', () => {
  test.each([
    ['', 'ip', false],
    ['ip', 'ip', false],
    ['ip asc', 'ip', false],
    ['IP DESC', 'ip', true],
    ['namespace', 'namespace', false],
    ['namespace desc', 'namespace', true],
    ['podname', 'podname', false],
    ['PodName Desc', 'podname', true],
    ['policy', 'policy', false],
    ['policy desc', 'policy', true],
    ['size', 'ip', false],
    ['ip sideways', 'ip', false],
    // galaxy's switch compares whole strings: other spacing is not the value
    ['ip  desc', 'ip', false],
    [' ip desc', 'ip', false],
    ['ip\tdesc', 'ip', false],
    ['policy desc ', 'ip', false],
    ['policy\ndesc', 'ip', false],
    // Go's ToLower maps U+0130 to a plain i, JavaScript's to i and a combining dot
    ['\u0130P DESC', 'ip', true],
  ])('%p sorts by %p (descending %p)', (text, field, descending) => {
    expect(parseSort(text)).toEqual({ field, descending });
  });

  const keyword = '_'; // every allocation
  test('ip desc is numeric', async () => {
    expect(ips(await list({ keyword }, 'ip desc'))).toEqual([
      'fd00::3',
      '10.0.0.10',
      '10.0.0.9',
      '10.0.0.6',
      '10.0.0.5',
      '10.0.0.4',
      '10.0.0.3',
    ]);
  });

  test('namespace asc and desc, ties to the lower IP', async () => {
    expect(ips(await list({ keyword }, 'namespace'))).toEqual([
      '10.0.0.5', // pool__p1_: no namespace
      '10.0.0.4',
      '10.0.0.6',
      '10.0.0.9',
      '10.0.0.10',
      '10.0.0.3',
      'fd00::3',
    ]);
    expect(ips(await list({ keyword }, 'namespace desc'))).toEqual([
      '10.0.0.3',
      'fd00::3',
      '10.0.0.4',
      '10.0.0.6',
      '10.0.0.9',
      '10.0.0.10',
      '10.0.0.5',
    ]);
  });

  test('podname and policy', async () => {
    expect(ips(await list({ keyword }, 'podname'))).toEqual([
      '10.0.0.5',
      'fd00::3',
      '10.0.0.3',
      '10.0.0.4',
      '10.0.0.6',
      '10.0.0.10',
      '10.0.0.9',
    ]);
    expect(ips(await list({ keyword }, 'policy desc'))).toEqual([
      '10.0.0.3',
      '10.0.0.4',
      '10.0.0.5',
      'fd00::3',
      '10.0.0.10',
      '10.0.0.6',
      '10.0.0.9',
    ]);
  });

  test('the unfiltered list sorted by a field: empty values (free addresses) first when ascending', async () => {
    const all = async (sort: string, page = 0, size = 100) =>
      ips(await listIPs(world(), none, page, size, parseSort(sort)));
    const asc = await all('namespace');
    expect(asc).toHaveLength(22);
    // free addresses and the pool's parked one, in IP order, then the rest by namespace
    expect(asc.slice(0, 4)).toEqual(['10.0.0.2', '10.0.0.5', '10.0.0.7', '10.0.0.8']);
    expect(asc.slice(-6)).toEqual(['10.0.0.4', '10.0.0.6', '10.0.0.9', '10.0.0.10', '10.0.0.3', 'fd00::3']);
    const desc = await all('namespace desc');
    expect(desc.slice(0, 6)).toEqual([
      '10.0.0.3',
      'fd00::3',
      '10.0.0.4',
      '10.0.0.6',
      '10.0.0.9',
      '10.0.0.10',
    ]);
    expect(desc.slice(6, 9)).toEqual(['10.0.0.2', '10.0.0.5', '10.0.0.7']);
    // pages agree with the whole
    for (const size of [1, 4, 7]) {
      const paged: string[] = [];
      for (let page = 0; page * size < 22; page++) paged.push(...(await all('namespace desc', page, size)));
      expect(paged).toEqual(desc);
    }
    expect((await all('policy')).slice(-5)).toEqual([
      '10.0.0.10',
      '10.0.0.3',
      '10.0.0.4',
      '10.0.0.5',
      'fd00::3',
    ]);
  });
});

test('100,000 allocations: a page of the unfiltered list and of a filter that selects them all', async () => {
  const big = parsePoolConfig([
    {
      nodeSubnets: ['10.0.1.0/24'],
      ips: ['10.1.0.0~10.2.255.255'],
      subnet: '10.0.0.0/8',
      gateway: '10.0.0.1',
    },
  ]);
  const a = new Allocator(big);
  for (let i = 0; i < 100_000; i++) {
    a.allocate({ key: `sts_ns${i % 100}_app_app-${i}`, nodeSubnet: '10.0.1.0/24', attrs: attrs() });
  }
  // no time is asserted (a loaded machine is no defect; `npm run bench rest` measures): an
  // accidental quadratic over 100,000 items would outlast jest's timeout instead
  const unfiltered = await listIPs(a, none, 500, 10, parseSort(''));
  expect(ips(unfiltered)[0]).toBe('10.1.19.136');
  const everyKey = await listIPs(a, { ...none, keyword: 'app' }, 0, 10, parseSort('ip desc'));
  expect(everyKey.window.totalElements).toBe(100_000n);
  expect(ips(everyKey)[0]).toBe('10.2.134.159');
  const byNamespace = await listIPs(a, { ...none, namespace: 'ns7' }, 3, 10, parseSort('podname'));
  expect(byNamespace.window.totalElements).toBe(1000n);
});
