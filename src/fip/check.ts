// `kubectl fip check`, in the spirit of `calicoctl ipam check`: what in the cluster contradicts
// itself, each finding with what to do about it. Problems make the command exit 1; notes (an
// address kept by its policy for a pod that is gone) are printed but are not problems.
import { printable } from '../clip.js';
import { describeAction, whenPodGoes } from './fate.js';
import { type Holder, holders, policyName } from './holders.js';
import { type PodView, type Snapshot, podRef } from './snapshot.js';

export type FindingKind =
  | 'configuration'
  | 'invalid-object'
  | 'duplicate'
  | 'leaked'
  | 'no-object'
  | 'disagree'
  | 'outside'
  | 'unusable'
  | 'kept';

export interface Finding {
  readonly kind: FindingKind;
  /** The address it is about ("" when none). */
  readonly ip: string;
  readonly what: string;
  readonly fix: string;
  /** A note is not a problem. */
  readonly problem: boolean;
}

/** Section titles, in the order the report prints them. */
export const TITLES: Record<FindingKind, string> = {
  configuration: 'configuration',
  'invalid-object': 'FloatingIP objects floatip cannot read',
  duplicate: 'two pods with one address',
  leaked: 'objects whose pod is gone (leak candidates)',
  'no-object': 'annotations naming an address without an object',
  disagree: 'object and annotation disagree',
  outside: 'addresses outside the configuration',
  unusable: 'addresses no pod should get, held',
  kept: 'kept by their policy for a pod that is gone (not a problem)',
};

const live = (p: PodView) => !p.finished;

export function check(snapshot: Snapshot): Finding[] {
  const out: Finding[] = [];
  const { allocator } = snapshot;
  const found = (kind: FindingKind, ip: string, what: string, fix: string, problem = true) =>
    out.push({ kind, ip, what, fix, problem });

  if (snapshot.configProblem) {
    found(
      'configuration',
      '',
      snapshot.configProblem,
      'fix the floatingip-config ConfigMap; until then floatip is not ready and every address counts as outside the configuration',
    );
  }
  for (const r of snapshot.rejected) {
    found(
      'invalid-object',
      '',
      `FloatingIP ${r.name}: ${r.reason}`,
      `fix or delete it: kubectl delete fip ${r.name}`,
    );
  }

  // every address each live pod's annotation names
  const namedBy = new Map<string, PodView[]>();
  for (const pod of snapshot.pods.filter(live)) {
    for (const ip of pod.addresses) namedBy.set(ip, [...(namedBy.get(ip) ?? []), pod]);
  }
  for (const [ip, pods] of namedBy) {
    const a = allocator.get(ip);
    if (pods.length > 1) {
      const owner = pods.find((p) => p.key === a?.key && p.uid === a?.podUid);
      const others = pods.filter((p) => p !== owner);
      found(
        'duplicate',
        ip,
        `pods ${pods.map((p) => podRef(p.namespace, p.name)).join(', ')} all name ${ip} in their annotation; ` +
          (a
            ? `its object is held by ${a.key}${owner ? ` (pod ${podRef(owner.namespace, owner.name)})` : ''}`
            : 'it has no object'),
        `delete the pods that do not hold it (${others.map((p) => `kubectl -n ${p.namespace} delete pod ${p.name}`).join('; ')}); ` +
          'their controllers re-create them and floatip gives them their own addresses',
      );
    }
    for (const pod of pods) {
      const who = podRef(pod.namespace, pod.name);
      if (!a) {
        const outside = allocator.isConfigured(ip) ? '' : ', and it is outside the configuration';
        found(
          'no-object',
          ip,
          `pod ${who}'s annotation names ${ip}, which has no FloatingIP object${outside}`,
          outside
            ? `delete the pod (kubectl -n ${pod.namespace} delete pod ${pod.name}) so it is scheduled again with an address floatip gives`
            : `floatip adopts a free configured address for a running pod at its next resync; if it does not, delete the pod (kubectl -n ${pod.namespace} delete pod ${pod.name})`,
        );
      } else if (pod.key && a.key !== pod.key) {
        found(
          'disagree',
          ip,
          `pod ${who}'s annotation names ${ip}, but its object is held by ${a.key} (the pod's key is ${pod.key})`,
          `delete the pod (kubectl -n ${pod.namespace} delete pod ${pod.name}) so it gets an address of its own; its annotation was edited or copied by hand`,
        );
      }
    }
  }

  for (const h of holders(snapshot)) {
    const { allocation: a } = h;
    // a pod not on a node yet has no annotation to agree with: the binding brings it
    if (h.state === 'in-use' && h.pod?.node && !h.pod.addresses.includes(a.ip)) {
      const who = podRef(h.pod.namespace, h.pod.name);
      const listed = h.pod.annotationError
        ? `cannot be read (${h.pod.annotationError})`
        : `names ${h.pod.addresses.join(', ') || 'no address'}`;
      found(
        'disagree',
        a.ip,
        `object ${a.ip} is held by pod ${who} (uid ${a.podUid}), but the pod's annotation ${listed}`,
        `the pod uses what its annotation says: delete the pod (kubectl -n ${h.pod.namespace} delete pod ${h.pod.name}) to have both agree again`,
      );
    }
    if (h.state === 'leaked') leakFinding(snapshot, h, found);
    if (h.state === 'kept' && !h.pod) {
      const fate = whenPodGoes(snapshot, a);
      const why = `${a.ip} (${a.key}, policy ${policyName(a.policy)}): pod ${h.key.namespace}/${h.key.podName} does not exist; floatip would ${describeAction(fate)}`;
      if (fate.kind === 'release') {
        found(
          'leaked',
          a.ip,
          why,
          `wait for floatip's resync, or release it now: kubectl fip release ${a.ip}`,
        );
      } else {
        found(
          'kept',
          a.ip,
          why,
          `release it if the workload is gone for good: kubectl fip release ${a.ip}`,
          false,
        );
      }
    }
  }

  const orphans = allocator.orphaned();
  for (const a of orphans) {
    found(
      'outside',
      a.ip,
      `${a.ip} is held by ${a.key || 'an empty key'} but lies in no configured range; floatip keeps it and never hands it out`,
      `add it back to the floatingip-config ConfigMap, or release it once no pod uses it: kubectl fip release ${a.ip}`,
    );
  }
  for (const x of allocator.excludedInUse()) {
    found(
      'unusable',
      x.allocation.ip,
      `${x.allocation.ip} is the ${x.why} of entry ${x.entry} but is held by ${x.allocation.key}`,
      'it is kept for its key and never handed out again once released; move the pod off it by deleting the pod',
    );
  }
  return out;
}

function leakFinding(
  snapshot: Snapshot,
  h: Holder,
  found: (k: FindingKind, ip: string, what: string, fix: string) => void,
) {
  const a = h.allocation;
  const fate = whenPodGoes(snapshot, a);
  found(
    'leaked',
    a.ip,
    `${a.ip} (${a.key}, policy ${policyName(a.policy)}, node ${a.nodeName || 'none'}): ${h.why}; floatip's resync will ${describeAction(fate)}`,
    fate.kind === 'release'
      ? `wait for floatip's resync (two passes), or release it now: kubectl fip release ${a.ip}`
      : `nothing, unless the workload is gone for good: kubectl fip release ${a.ip}`,
  );
}

export const problems = (findings: readonly Finding[]) => findings.filter((f) => f.problem);

/**
 * The report a person reads: a summary line, then each kind's findings with what to do, each one
 * line whatever its object data holds (a newline in a key would otherwise forge findings).
 */
export function formatCheck(findings: readonly Finding[]): string {
  const n = problems(findings).length;
  const lines = [n === 0 ? 'no problems found' : `${n} problem${n === 1 ? '' : 's'} found`];
  for (const kind of Object.keys(TITLES) as FindingKind[]) {
    const of = findings.filter((f) => f.kind === kind);
    if (of.length === 0) continue;
    lines.push('', `${TITLES[kind]} (${of.length})`);
    for (const f of of) lines.push(`  ${printable(f.what)}`, `    fix: ${printable(f.fix)}`);
  }
  return lines.join('\n') + '\n';
}
