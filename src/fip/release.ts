// `kubectl fip release`: which addresses a request names (IPs, a pod's, an app's), the entries
// floatip's POST /v1/ip takes for them (each naming the owner the object records, so an address
// that changed hands since is left alone), and the verdicts as a table. The plan shown first is
// the REST API's own rule (src/api/releasability.ts) on what was read: floatip's `?dryRun=true`
// cannot be used, since kube-apiserver refuses a `dryRun` parameter on every proxy request
// ("dryRun is not supported"). floatip then decides again on the real request, under its locks,
// and whatever it leaves is reported with its reason.
import { judge } from '../api/releasability.js';
import { clipQuoted } from '../clip.js';
import { AllocationKey, canonicalAddress } from '../ipam/index.js';
import { byAddress } from './holders.js';
import { type Snapshot, podOfAllocation, podsByName } from './snapshot.js';
import { ARGUMENT_LIMIT, formatTable } from './table.js';

/** An entry of POST /v1/ip's `ips`. */
export interface ReleaseEntry {
  ip: string;
  namespace?: string;
  appName?: string;
  podName?: string;
  poolName?: string;
  appType?: string;
}

export interface Target {
  readonly ip: string;
  /** The key its object records; "" when there is no object. */
  readonly key: string;
  /** The entry to send, or why none can be sent. */
  readonly entry: ReleaseEntry | undefined;
  readonly refusal?: string;
}

export interface Selector {
  readonly ips: readonly string[];
  readonly namespace: string;
  readonly pod?: string;
  readonly app?: string;
}

/** The entry naming an object's owner as galaxy's NewKeyObj reads it back. */
export function entryOf(ip: string, keyText: string): ReleaseEntry | undefined {
  const key = AllocationKey.parse(keyText);
  if (key.pool && !key.appName) return { ip, poolName: key.pool };
  if (!key.appName || !key.namespace) return undefined;
  return {
    ip,
    namespace: key.namespace,
    appName: key.appName,
    ...(key.podName ? { podName: key.podName } : {}),
    ...(key.pool ? { poolName: key.pool } : {}),
    appType: key.appType,
  };
}

export function targets(snapshot: Snapshot, s: Selector): Target[] {
  const { allocator } = snapshot;
  const out: Target[] = [];
  const seen = new Set<string>();
  const add = (ip: string) => {
    if (seen.has(ip)) return;
    seen.add(ip);
    const a = allocator.get(ip);
    if (!a) {
      const refusal = allocator.isConfigured(ip)
        ? `${ip} is not allocated (no FloatingIP object)`
        : `${ip} is not in any configured range and has no FloatingIP object`;
      out.push({ ip, key: '', entry: undefined, refusal });
      return;
    }
    const entry = entryOf(ip, a.key);
    out.push(
      entry
        ? { ip, key: a.key, entry }
        : {
            ip,
            key: a.key,
            entry: undefined,
            refusal: `key ${JSON.stringify(a.key)} names no pod, app or pool`,
          },
    );
  };
  for (const text of s.ips) {
    let ip: string;
    try {
      ip = canonicalAddress(text);
    } catch {
      throw new Error(`${clipQuoted(text, ARGUMENT_LIMIT)} is not an IP address`);
    }
    add(ip);
  }
  if (s.pod || s.app) {
    const matching = [...allocator.all()].filter((a) => {
      const key = AllocationKey.parse(a.key);
      return (
        key.namespace === s.namespace &&
        (!s.pod || key.podName === s.pod) &&
        (!s.app || key.appName === s.app)
      );
    });
    for (const a of matching.sort(byAddress)) add(a.ip);
  }
  return out;
}

/** POST /v1/ip's answer (ReleaseIPResp). */
export interface ReleaseAnswer {
  readonly code: number;
  readonly message: string;
  readonly released?: readonly string[];
  readonly unreleased?: readonly string[];
  readonly reasons?: readonly string[];
  readonly details?: readonly string[];
}

export interface Verdict {
  readonly ip: string;
  readonly key: string;
  readonly release: boolean;
  readonly why: string;
}

/**
 * Each target's verdict from an answer: unreleased ones carry floatip's reason (and detail), the
 * rest of what was sent is released; those never sent carry the local refusal.
 */
export function verdicts(list: readonly Target[], answer: ReleaseAnswer | undefined): Verdict[] {
  const why = new Map<string, string>();
  (answer?.unreleased ?? []).forEach((ip, i) => {
    const detail = answer?.details?.[i];
    why.set(ip, `${answer?.reasons?.[i] ?? 'not released'}${detail ? ` (${detail})` : ''}`);
  });
  return list.map((t) => {
    if (!t.entry) return { ip: t.ip, key: t.key, release: false, why: t.refusal ?? 'not sent' };
    const reason = why.get(t.ip);
    return reason === undefined
      ? { ip: t.ip, key: t.key, release: true, why: '' }
      : { ip: t.ip, key: t.key, release: false, why: reason };
  });
}

/** What floatip's release rule says of each target now. */
export function plan(snapshot: Snapshot, list: readonly Target[]): Verdict[] {
  const pods = podsByName(snapshot);
  return list.map((t) => {
    if (!t.entry) return { ip: t.ip, key: t.key, release: false, why: t.refusal ?? 'not sent' };
    const a = snapshot.allocator.get(t.ip)!;
    const judged = judge(a, podOfAllocation(a, pods)?.object);
    if (judged.releasable) return { ip: t.ip, key: t.key, release: true, why: '' };
    const detail = judged.detail ? ` (${judged.detail})` : '';
    return { ip: t.ip, key: t.key, release: false, why: `${judged.reason ?? 'not releasable'}${detail}` };
  });
}

export function formatVerdicts(list: readonly Verdict[], done: boolean): string {
  const yes = done ? 'released' : 'would release';
  const no = done ? 'not released' : 'would refuse';
  return formatTable(
    ['IP', 'KEY', 'VERDICT', 'WHY'],
    list.map((v) => [v.ip, v.key || '-', v.release ? yes : no, v.why]),
  );
}
