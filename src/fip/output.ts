// kubectl fip's output: aligned tables for people, and for machines JSON or YAML of one stable
// shape per command (field names fixed, addresses in numeric order, times as RFC 3339).
import { stringify } from 'yaml';
import { clipQuoted } from '../clip.js';
import { formatCidr } from '../ipam/index.js';
import type { Finding } from './check.js';
import { type Holder, policyName } from './holders.js';
import type { Snapshot } from './snapshot.js';
import { ARGUMENT_LIMIT, formatTable, shortAge } from './table.js';
import { type UsageRow, formatDuration } from './usage.js';

export type Format = 'table' | 'wide' | 'json' | 'yaml';

export function parseFormat(text: string | undefined, allowed: readonly Format[]): Format {
  if (text === undefined || text === '') return 'table';
  if ((allowed as readonly string[]).includes(text) && text !== 'table') return text as Format;
  throw new Error(
    `-o ${clipQuoted(text, ARGUMENT_LIMIT)}: expected one of ${allowed.filter((f) => f !== 'table').join(', ')}`,
  );
}

export function machine(format: 'json' | 'yaml', value: unknown): string {
  return format === 'json' ? JSON.stringify(value, null, 2) + '\n' : stringify(value);
}

const iso = (ms: number | undefined) => (ms ? new Date(ms).toISOString() : null);

export function holderJson(snapshot: Snapshot, h: Holder) {
  const a = h.allocation;
  return {
    ip: a.ip,
    state: h.state,
    key: a.key,
    namespace: h.key.namespace,
    pod: h.key.podName,
    app: h.key.appName,
    appType: h.key.appType,
    pool: h.key.pool,
    node: a.nodeName,
    podUid: a.podUid,
    policy: a.policy,
    policyName: policyName(a.policy),
    reserved: a.reserved,
    updateTime: iso(a.updateTime),
    createdAt: iso(snapshot.createdAt.get(a.ip)),
    why: h.why,
  };
}

/** Since the object's updateTime; an object written without one (by hand) by its creation. */
function age(snapshot: Snapshot, ip: string, updateTime: number): string {
  const since = updateTime || snapshot.createdAt.get(ip);
  return since ? shortAge(snapshot.now - since) : '-';
}

/** `list`, filtered out of `held` addresses in all: an empty list says which of the two is empty. */
export function formatHolders(
  snapshot: Snapshot,
  list: readonly Holder[],
  wide: boolean,
  held = list.length,
): string {
  const headers = ['IP', 'STATE', 'POD', 'NODE', 'POLICY', 'AGE'];
  if (wide) headers.push('KEY', 'POOL', 'POD-UID', 'SUBNET');
  const rows = list.map((h) => {
    const a = h.allocation;
    const row = [
      a.ip,
      h.state,
      h.key.podName ? `${h.key.namespace}/${h.key.podName}` : '-',
      a.nodeName || '-',
      policyName(a.policy),
      age(snapshot, a.ip, a.updateTime),
    ];
    if (wide) {
      const net = snapshot.allocator.networkOf(a.ip);
      const entry = net
        ? snapshot.allocator.configuration.entries.find((e) => e.index === net.entry)
        : undefined;
      row.push(
        a.key || '""',
        h.key.pool || '-',
        a.podUid || '-',
        entry ? formatCidr(entry.subnet) : 'outside',
      );
    }
    return row;
  });
  if (list.length > 0) return formatTable(headers, rows);
  return held === 0 ? 'No addresses held.\n' : `No address matches (${held} held).\n`;
}

export function usageJson(rows: readonly UsageRow[], windowMs: number) {
  return {
    windowSeconds: windowMs / 1000,
    rate: 'addresses of the row whose FloatingIP object was created within the window and still exists, per window',
    rows: rows.map((r) => ({
      kind: r.kind,
      name: r.name,
      nodeSubnets: r.nodeSubnets,
      total: r.total.toString(),
      used: r.used,
      parked: r.parked,
      reserved: r.reserved,
      free: r.free.toString(),
      allocatedInWindow: r.recent,
      exhaustedInSeconds: r.exhaustedInMs === undefined ? null : Math.round(r.exhaustedInMs / 1000),
    })),
  };
}

export function formatUsage(rows: readonly UsageRow[], windowText: string): string {
  const window = windowText;
  const table = formatTable(
    [
      'KIND',
      'NAME',
      'NODE SUBNETS',
      'TOTAL',
      'USED',
      'PARKED',
      'RESERVED',
      'FREE',
      `NEW/${window}`,
      'EXHAUSTED IN',
    ],
    rows.map((r) => [
      r.kind,
      r.name,
      r.nodeSubnets || '-',
      r.total.toString(),
      String(r.used),
      String(r.parked),
      String(r.reserved),
      r.free.toString(),
      String(r.recent),
      formatDuration(r.exhaustedInMs),
    ]),
  );
  return (
    table +
    `\nNEW/${window}: addresses whose FloatingIP object was created in the last ${window} and still exists ` +
    `(released addresses leave no object, so this is what the row keeps, not all it handed out); ` +
    `EXHAUSTED IN = FREE / (NEW per ${window}).\n`
  );
}

export const findingJson = (f: Finding) => ({
  kind: f.kind,
  ip: f.ip,
  problem: f.problem,
  what: f.what,
  fix: f.fix,
});
