// A randomized model test: 100,000+ random operations on the Allocator, each checked against a
// deliberately simple reference model that enumerates every address. After every step: never one
// address for two keys, every count consistent, nothing lost by reconfigure or restore, and the
// network, broadcast and gateway addresses inside ranges never handed out.
import {
  Allocator,
  type Attrs,
  IpamError,
  NoFreeIPError,
  NoParkedIPError,
  ReleasePolicy,
  parsePoolConfig,
  parseRange,
  type Family,
  type PoolConfig,
  type RangeGroup,
} from '../../../src/ipam/index.js';

const N1 = '192.168.1.0/24';
const N2 = '192.168.2.0/24';

interface EntrySpec {
  family: Family;
  gateway: string;
  subnet: string;
  /** [first, last] host numbers, written in the entry's family */
  ranges: [number, number][];
  nodeSubnets: string[];
}

const v4 = (net: string) => (n: number) => `${net}.${n}`;
const v6 = (n: number) => (n === 0 ? 'fd00::' : `fd00::${n.toString(16)}`);
const addr = (e: EntrySpec, n: number) =>
  e.family === 4 ? v4(e.subnet.split('.').slice(0, 3).join('.'))(n) : v6(n);

const CONFIGS: EntrySpec[][] = [
  [
    {
      family: 4,
      gateway: '10.0.0.1',
      subnet: '10.0.0.0/24',
      // the network address and the gateway are in the first range
      ranges: [
        [0, 12],
        [20, 25],
      ],
      nodeSubnets: [N1],
    },
    { family: 4, gateway: '10.0.1.1', subnet: '10.0.1.0/24', ranges: [[2, 10]], nodeSubnets: [N1, N2] },
    // the subnet-router anycast address and the gateway
    { family: 6, gateway: 'fd00::1', subnet: 'fd00::/64', ranges: [[0x0, 0x1f]], nodeSubnets: [N1] },
  ],
  [
    // the gateway inside the range, and the broadcast address
    {
      family: 4,
      gateway: '10.0.0.9',
      subnet: '10.0.0.0/24',
      ranges: [
        [5, 30],
        [250, 255],
      ],
      nodeSubnets: [N1],
    },
    { family: 6, gateway: 'fd00::1', subnet: 'fd00::/64', ranges: [[0x18, 0x2f]], nodeSubnets: [N1, N2] },
  ],
  [
    {
      family: 4,
      gateway: '10.0.1.1',
      subnet: '10.0.1.0/24',
      ranges: [
        [2, 6],
        [8, 9],
      ],
      nodeSubnets: [N2],
    },
    { family: 4, gateway: '10.0.0.1', subnet: '10.0.0.0/24', ranges: [[2, 40]], nodeSubnets: [N1, N2] },
  ],
];

const toConfig = (entries: EntrySpec[]): PoolConfig =>
  parsePoolConfig(
    entries.map((e) => ({
      nodeSubnets: e.nodeSubnets,
      subnet: e.subnet,
      gateway: e.gateway,
      ips: e.ranges.map(([a, b]) => (a === b ? addr(e, a) : `${addr(e, a)}~${addr(e, b)}`)),
    })),
  );

/** Every address of an entry, ascending. */
const addressesOf = (e: EntrySpec): string[] =>
  e.ranges.flatMap(([a, b]) => Array.from({ length: b - a + 1 }, (_, i) => addr(e, a + i)));

/** The addresses of an entry's /24 or /64 no pod may get: network, IPv4 broadcast, gateway. */
const unusableOf = (e: EntrySpec): Set<string> => {
  const gatewayHost =
    e.family === 4 ? Number(e.gateway.split('.')[3]) : parseInt(e.gateway.split('::')[1]!, 16);
  return new Set([0, gatewayHost, ...(e.family === 4 ? [255] : [])].map((n) => addr(e, n)));
};

interface ModelAllocation {
  key: string;
  updateTime: number;
  reserved: boolean;
  podUid: string;
}

/** The reference: entries in gateway order, each a plain list of its addresses. */
class Model {
  entries: { spec: EntrySpec; addresses: string[]; first: string; unusable: Set<string> }[] = [];
  /** address -> [entry rank, position in the entry] */
  where = new Map<string, [number, number]>();
  held = new Map<string, ModelAllocation>();

  configure(specs: EntrySpec[]): void {
    const order = (e: EntrySpec) => [e.family, e.family === 4 ? e.gateway.split('.').map(Number) : [1]];
    this.entries = [...specs]
      .map((spec, i) => ({ spec, i }))
      .sort((a, b) => {
        const [fa, ga] = order(a.spec) as [number, number[]];
        const [fb, gb] = order(b.spec) as [number, number[]];
        if (fa !== fb) return fa - fb;
        for (let k = 0; k < ga.length; k++) if (ga[k] !== gb[k]) return ga[k]! - gb[k]!;
        return a.i - b.i;
      })
      .map(({ spec }) => ({
        spec,
        addresses: addressesOf(spec),
        first: addressesOf(spec)[0]!,
        unusable: unusableOf(spec),
      }));
    this.where = new Map(
      this.entries.flatMap((e, rank) => e.addresses.map((ip, i) => [ip, [rank, i]] as const)),
    );
  }

  /** Whether an address may be handed out to a pod by allocation. */
  usable(ip: string): boolean {
    return this.entryOf(ip)?.unusable.has(ip) === false;
  }

  entryOf(ip: string) {
    const w = this.where.get(ip);
    return w ? this.entries[w[0]] : undefined;
  }

  serving(subnet: string) {
    return this.entries.filter((e) => e.spec.nodeSubnets.includes(subnet));
  }

  lowestFree(subnet: string, family: Family): string | undefined {
    for (const e of this.serving(subnet)) {
      if (e.spec.family !== family) continue;
      const free = e.addresses.find((a) => !this.held.has(a) && !e.unusable.has(a));
      if (free) return free;
    }
    return undefined;
  }

  /** Address order: entry rank, then position in the entry. */
  rank(ip: string): number {
    const [rank, i] = this.where.get(ip)!;
    return rank * 10_000 + i;
  }
}

function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const STEPS = 100_000;

test(`${STEPS} random operations agree with the reference model`, () => {
  const rnd = random(20261129);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rnd() * list.length)]!;
  let now = 1_000_000;
  const allocator = new Allocator(toConfig(CONFIGS[0]!), { clock: () => now });
  const model = new Model();
  model.configure(CONFIGS[0]!);
  let configIndex = 0;
  const apps = ['dp_ns_a_', 'dp_ns_b_', 'sts_ns_c_'];
  const keyFor = () => `${pick(apps)}pod-${Math.floor(rnd() * 12)}`;
  const attrs = (uid: string): Attrs => ({ policy: ReleasePolicy.Immutable, nodeName: 'n', podUid: uid });
  const counts: Record<string, number> = {};
  const count = (what: string) => (counts[what] = (counts[what] ?? 0) + 1);

  for (let step = 0; step < STEPS; step++) {
    now += rnd() < 0.3 ? 0 : Math.floor(rnd() * 5); // equal times happen: ties must be decided the same way
    const r = rnd();
    const context = `step ${step}`;
    if (r < 0.3) {
      // allocate, without groups: exactly the model's lowest free address per family, or nothing
      const key = keyFor();
      const subnet = pick([N1, N2, '10.9.9.0/24']);
      const families = [...new Set(model.serving(subnet).map((e) => e.spec.family))].sort();
      const expected = families.map((f) => model.lowestFree(subnet, f));
      try {
        const got = allocator.allocate({ key, nodeSubnet: subnet, attrs: attrs(`u${step}`) });
        same(
          context,
          'got',
          got.map((a) => a.ip),
          expected,
        );
        for (const a of got)
          model.held.set(a.ip, { key, updateTime: now, reserved: false, podUid: `u${step}` });
        count('allocate');
      } catch (err) {
        must(err instanceof NoFreeIPError, context, err);
        same(context, 'possible', families.length > 0 && expected.every(Boolean), false);
        count('allocate-exhausted');
      }
    } else if (r < 0.4) {
      // allocate with (possibly overlapping) groups: distinct, inside the groups, free before; or provably impossible
      const key = keyFor();
      const subnet = pick([N1, N2]);
      const pool = model.serving(subnet).flatMap((e) => (e.spec.family === 4 ? e.addresses : []));
      if (pool.length === 0) continue;
      const groups: string[][] = Array.from({ length: 1 + Math.floor(rnd() * 3) }, () => {
        const a = Math.floor(rnd() * pool.length);
        const b = Math.min(pool.length - 1, a + Math.floor(rnd() * 4));
        return pool.slice(a, b + 1);
      });
      const rangeGroups: RangeGroup[] = groups.map((g) => g.map((ip) => parseRange(ip)));
      const freeIn = groups.map((g) => g.filter((ip) => !model.held.has(ip) && model.usable(ip)));
      try {
        const got = allocator.allocate({
          key,
          nodeSubnet: subnet,
          attrs: attrs(`u${step}`),
          groups: rangeGroups,
        });
        const ipsGot = got.map((a) => a.ip);
        same(context, 'distinct', new Set(ipsGot).size, groups.length);
        ipsGot.forEach((ip, i) =>
          same(context, `group ${i} got a free address of its own`, freeIn[i]!.includes(ip), true),
        );
        for (const ip of ipsGot)
          model.held.set(ip, { key, updateTime: now, reserved: false, podUid: `u${step}` });
        count('allocate-groups');
      } catch (err) {
        must(err instanceof NoFreeIPError, context, err);
        same(context, 'possible', distinctChoiceExists(freeIn), false);
        count('allocate-groups-impossible');
      }
    } else if (r < 0.6) {
      // release, with the right owner or a stale one
      const held = [...model.held.entries()];
      if (held.length === 0) continue;
      const [ip, a] = pick(held);
      const owner = rnd() < 0.85 ? { key: a.key } : { key: a.key, podUid: 'stale' };
      const allowed = !a.reserved && owner.podUid === undefined;
      try {
        allocator.release(ip, owner);
        same(context, 'allowed', allowed, true);
        model.held.delete(ip);
        count('release');
      } catch (err) {
        must(err instanceof IpamError, context, err);
        same(context, 'allowed', allowed, false);
        count('release-refused');
      }
    } else if (r < 0.7) {
      // park: give a pod's address to its app prefix
      const held = [...model.held.entries()].filter(([, a]) => !a.reserved && !a.key.endsWith('_'));
      if (held.length === 0) continue;
      const [ip, a] = pick(held);
      const prefix = a.key.slice(0, a.key.lastIndexOf('_') + 1);
      allocator.rekey(ip, { key: a.key }, prefix, { policy: ReleasePolicy.Never, nodeName: '', podUid: '' });
      model.held.set(ip, { key: prefix, updateTime: now, reserved: false, podUid: '' });
      count('park');
    } else if (r < 0.8) {
      // unpark: the most recently parked address serving the subnet, ties to the lowest address
      const prefix = pick(apps);
      const subnet = pick([N1, N2]);
      const key = `${prefix}pod-${Math.floor(rnd() * 12)}`;
      const candidates = [...model.held.entries()]
        .filter(
          ([ip, a]) =>
            a.key === prefix && !a.reserved && model.entryOf(ip)?.spec.nodeSubnets.includes(subnet),
        )
        .sort(([ipA, a], [ipB, b]) => b.updateTime - a.updateTime || model.rank(ipA) - model.rank(ipB));
      try {
        const got = allocator.unpark(prefix, key, subnet, attrs(`u${step}`));
        same(context, 'ip', got.ip, candidates[0]?.[0]);
        model.held.set(got.ip, { key, updateTime: now, reserved: false, podUid: `u${step}` });
        count('unpark');
      } catch (err) {
        must(err instanceof NoParkedIPError, context, err);
        same(context, 'candidates', candidates.length, 0);
        count('unpark-none');
      }
    } else if (r < 0.85) {
      // reserve a specific address, as an operator's FloatingIP object with the `reserved` label does
      const all = model.entries.flatMap((e) => e.addresses);
      const ip = pick(all);
      try {
        allocator.allocateIP(
          ip,
          'pool__ops_',
          { policy: ReleasePolicy.Never, nodeName: '', podUid: '' },
          { reserved: true },
        );
        same(context, 'free', !model.held.has(ip), true);
        model.held.set(ip, { key: 'pool__ops_', updateTime: now, reserved: true, podUid: '' });
        count('reserve');
      } catch (err) {
        must(err instanceof IpamError, context, err);
        same(context, 'free', !model.held.has(ip), false);
        count('reserve-taken');
      }
    } else if (r < 0.87) {
      // an operator deletes a reservation
      const reserved = [...model.held.entries()].filter(([, a]) => a.reserved);
      if (reserved.length === 0) continue;
      const [ip] = pick(reserved);
      same(context, 'unloaded', allocator.unload(ip)?.ip, ip);
      model.held.delete(ip);
      count('unreserve');
    } else if (r < 0.93) {
      // reconfigure: nothing lost; what falls outside is kept and reported as orphaned
      configIndex = (configIndex + 1 + Math.floor(rnd() * 2)) % CONFIGS.length;
      const report = allocator.reconfigure(toConfig(CONFIGS[configIndex]!));
      model.configure(CONFIGS[configIndex]!);
      const outside = [...model.held.keys()].filter((ip) => !model.entryOf(ip)).sort();
      same(context, 'orphaned', report.orphaned.map((a) => a.ip).sort(), outside);
      count('reconfigure');
    } else if (r < 0.95) {
      // restore from the persisted records, into a fresh allocator and into this one
      const records = [...allocator.all()].map((a) => ({ ...a }));
      const fresh = new Allocator(allocator.configuration, { clock: () => now });
      const report = fresh.restore(records);
      same(context, 'rejected', report.rejected, []);
      same(context, 'loaded', report.loaded, records.length);
      same(context, 'restored state', sortedState(fresh), sortedState(allocator));
      allocator.restore(records);
      same(context, 'state after restore', sortedState(allocator), sortedState(fresh));
      count('restore');
    } else {
      // release everything of a key, as a pod's deletion under the default policy does
      const key = keyFor();
      for (const a of allocator.byKey(key)) {
        allocator.release(a.ip, { key });
        model.held.delete(a.ip);
      }
      count('release-key');
    }
    checkInvariants(allocator, model, context);
  }
  // every kind of operation, and every outcome, actually happened
  for (const what of [
    'allocate',
    'allocate-exhausted',
    'allocate-groups',
    'allocate-groups-impossible',
    'release',
    'release-refused',
    'park',
    'unpark',
    'unpark-none',
    'reserve',
    'reserve-taken',
    'unreserve',
    'reconfigure',
    'restore',
    'release-key',
  ]) {
    expect({ what, happened: (counts[what] ?? 0) > 0 }).toEqual({ what, happened: true });
  }
});

// jest's expect costs microseconds a call; these checks run millions of times
function must(ok: boolean, context: string, detail: unknown): void {
  if (!ok)
    throw new Error(`${context}: unexpected ${detail instanceof Error ? detail.stack : String(detail)}`);
}

function same(context: string, what: string, got: unknown, expected: unknown): void {
  const a = JSON.stringify(got);
  const b = JSON.stringify(expected);
  if (a !== b) throw new Error(`${context}: ${what} is ${a}, expected ${b}`);
}

function sortedState(allocator: Allocator) {
  return [...allocator.all()]
    .map((a) => `${a.ip} ${a.key} ${a.policy} ${a.nodeName} ${a.podUid} ${a.updateTime} ${a.reserved}`)
    .sort();
}

function distinctChoiceExists(options: string[][], used = new Set<string>(), i = 0): boolean {
  if (i === options.length) return true;
  return options[i]!.some((ip) => {
    if (used.has(ip)) return false;
    used.add(ip);
    const ok = distinctChoiceExists(options, used, i + 1);
    used.delete(ip);
    return ok;
  });
}

function checkInvariants(allocator: Allocator, model: Model, context: string): void {
  // the same owners for the same addresses
  same(context, 'size', allocator.size, model.held.size);
  for (const [ip, a] of model.held) {
    const got = allocator.get(ip);
    if (got?.key !== a.key || got.reserved !== a.reserved || got.family !== (ip.includes(':') ? 6 : 4)) {
      throw new Error(
        `${context}: ${ip} is ${got?.key}/${got?.reserved}/IPv${got?.family}, model says ${a.key}/${a.reserved}`,
      );
    }
  }
  // the key index partitions the allocations: no address under two keys, none missing
  const byKey = new Map<string, number>();
  for (const a of model.held.values()) byKey.set(a.key, (byKey.get(a.key) ?? 0) + 1);
  let total = 0;
  for (const [key, n] of byKey) {
    const list = allocator.byKey(key);
    if (list.length !== n || list.some((a) => a.key !== key))
      throw new Error(`${context}: byKey(${key}) is wrong`);
    total += n;
  }
  same(context, 'keyed total', total, allocator.size);
  same(context, 'countByPrefix("")', allocator.countByPrefix(''), allocator.size);
  // statistics agree with a count of the model
  for (const s of allocator.stats()) {
    const entry = model.entries.find((e) => e.spec.subnet === s.subnet && e.first === s.firstIP)!;
    const allocated = entry.addresses.filter((ip) => model.held.has(ip)).length;
    const reserved = entry.addresses.filter((ip) => model.held.get(ip)?.reserved).length;
    const unusable = entry.addresses.filter((ip) => entry.unusable.has(ip));
    const unusableFree = unusable.filter((ip) => !model.held.has(ip)).length;
    if (
      s.allocated !== allocated ||
      s.reserved !== reserved ||
      s.excluded !== unusable.length ||
      s.free !== BigInt(entry.addresses.length - allocated - unusableFree)
    ) {
      throw new Error(
        `${context}: stats of ${s.subnet} ${JSON.stringify({ ...s, total: 0, free: 0 })} disagree`,
      );
    }
  }
  const orphans = [...model.held.keys()].filter((ip) => !model.entryOf(ip)).length;
  same(context, 'orphans', allocator.orphanedCount, orphans);
}
