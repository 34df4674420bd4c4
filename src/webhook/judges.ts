// What the webhook refuses, per kind. Each judgement reuses the decoder or validator the rest of
// floatip applies to the same object after the fact, so a write refused here is exactly one the
// watcher or the store would have refused (or ignored) later, in the same words.
import { clipQuoted } from '../clip.js';
import { CNI_ARGS_ANNOTATION, type IPInfo, parseCniArgs, repeatedCommon } from '../cni/args.js';
import type { GalaxyConfig } from '../config/galaxy-config.js';
import { judgeConfigMap } from '../controller/pool-config.js';
import {
  type Allocation,
  AllocationKey,
  Allocator,
  POOL_KEY_PREFIX,
  jsonPathText,
  ofMainFamily,
  parseAddress,
} from '../ipam/index.js';
import { GROUP, fromFloatingIPObject } from '../store/floating-ip-object.js';
import { decodePool } from '../store/pool-store.js';
import {
  type AdmissionRequest,
  BadReviewError,
  type ReviewedObject,
  clipped,
  type Verdict,
} from './admission-review.js';

/** On the floatingip-config ConfigMap: keep allocations a change leaves outside the configuration. */
export const ALLOW_ORPHANS_ANNOTATION = 'floatip.io/allow-orphans';

/** How many addresses a message names before it says "and N more". */
const NAMED = 20;

export interface JudgeDeps {
  /** Which ConfigMap is the configuration, and under which key (galaxy's config file). */
  readonly settings: GalaxyConfig;
  /** floatip's own cache of the FloatingIP objects: what is in use, and the configuration in force. */
  readonly allocator: Allocator;
  /** Where Pool objects count (galaxy: kube-system); Pools elsewhere are not floatip's. */
  readonly poolNamespace: string;
  /** Whether the pod `key` names runs with `ip` (floatip's pod cache; keyRunsWith). */
  readonly keyRunsWith?: (ip: string, key: string) => boolean;
}

const ALLOW: Verdict = { allowed: true };
const refuse = (message: string): Verdict => ({ allowed: false, message });

const metadataOf = (o: ReviewedObject | undefined): Record<string, unknown> => {
  const m = o?.metadata;
  return typeof m === 'object' && m !== null ? (m as Record<string, unknown>) : {};
};
const nameOf = (req: AdmissionRequest): string => {
  const name = metadataOf(req.object).name;
  return typeof name === 'string' && name !== '' ? name : req.name;
};

const listed = (items: readonly string[]): string =>
  `${items.slice(0, NAMED).join(', ')}${items.length > NAMED ? ` and ${items.length - NAMED} more` : ''}`;

/** The verdict on one request; throws BadReviewError for a kind floatip does not judge. */
export function judge(deps: JudgeDeps, req: AdmissionRequest): Verdict {
  const { group, version, kind } = req.kind;
  const judged =
    group === '' && kind === 'ConfigMap'
      ? configMap
      : group === GROUP && kind === 'FloatingIP'
        ? floatingIP
        : group === GROUP && kind === 'Pool'
          ? pool
          : group === '' && kind === 'Pod'
            ? podAddresses
            : undefined;
  if (!judged) {
    throw new BadReviewError(
      `floatip judges ConfigMap, FloatingIP, Pool and Pod objects, not ${clipped(group || 'core')}/${clipped(version)} ${clipped(kind)} (check the webhook's rules)`,
    );
  }
  // deleting is never refused: floatip's caches follow deletions as they follow every change
  if (req.operation !== 'CREATE' && req.operation !== 'UPDATE') return ALLOW;
  return judged(deps, req);
}

function configMap(deps: JudgeDeps, req: AdmissionRequest): Verdict {
  const { settings, allocator } = deps;
  // a static list in the config file means the ConfigMap is never read
  if (settings.floatingips) return ALLOW;
  if (req.namespace !== settings.configMapNamespace || nameOf(req) !== settings.configMapName) return ALLOW;
  const judged = judgeConfigMap(settings, { data: req.object?.data as Record<string, string> | undefined });
  if (!judged.ok) return refuse(judged.problem);
  const proposed = new Allocator(judged.config);
  // addresses in use that the change makes a gateway, network or broadcast address: kept, as the
  // watcher keeps them (its Event UnusableFloatingIPsInUse), and said now, where it can be undone
  const excludedBefore = new Set(allocator.excludedInUse().map((h) => h.allocation.ip));
  const excluded = proposed
    .excludedHeldBy((ip) => allocator.get(ip))
    .filter((h) => !excludedBefore.has(h.allocation.ip))
    .map(
      ({ allocation, entry, why }) =>
        `${allocation.ip} (the ${why} of floatingips[${entry}]) held by ${allocation.key}`,
    );
  const warnings = excluded.length
    ? [
        `the change makes ${excluded.length === 1 ? 'an address in use one' : `${excluded.length} addresses in use ones`} no pod gets: ${listed(excluded)}; kept for their keys, but never handed out again once released`,
      ]
    : [];
  // only addresses this change pushes out: ones already outside do not hold every later edit hostage
  const leaving: Allocation[] = [];
  for (const a of allocator.all())
    if (allocator.isConfigured(a.ip) && !proposed.isConfigured(a.ip)) leaving.push(a);
  if (leaving.length === 0) return warnings.length ? { allowed: true, warnings } : ALLOW;
  const left = leaving.sort(byAddress).map((a) => `${a.ip} (${a.key})`);
  const what = `the change leaves ${left.length} addresses in use outside the configuration: ${listed(left)}`;
  const annotations = metadataOf(req.object).annotations as Record<string, unknown> | undefined;
  if (annotations?.[ALLOW_ORPHANS_ANNOTATION] === 'true') {
    return {
      allowed: true,
      warnings: [`${what}; kept as orphans (${ALLOW_ORPHANS_ANNOTATION}: "true")`, ...warnings],
    };
  }
  return refuse(
    `${what}; release them first, or annotate the ConfigMap ${ALLOW_ORPHANS_ANNOTATION}="true" to keep them as orphans`,
  );
}

/** IPv4 before IPv6, then numerically: the order every list of addresses floatip prints is in. */
function byAddress(a: Allocation, b: Allocation): number {
  const x = parseAddress(a.ip);
  const y = parseAddress(b.ip);
  return x.family - y.family || (x.value < y.value ? -1 : x.value > y.value ? 1 : 0);
}

/** A key floatip can act on: a pod's (`dp_ns_app_pod`), an app's parking key (`dp_ns_app_`), or a pool's (`pool__P_`). */
function keyProblem(text: string): string | undefined {
  const key = AllocationKey.parse(text);
  if (key.typePrefix !== '' || (key.pool !== '' && text === `${POOL_KEY_PREFIX}${key.pool}_`))
    return undefined;
  // the key is the writer's, of any length (the CRD bounds none): a denial quotes its start
  return `spec.key ${clipQuoted(text, 200)} is not an allocation key (<type>_<namespace>_<app>_<pod>, optionally after pool__<pool>_, or pool__<pool>_)`;
}

function floatingIP(deps: JudgeDeps, req: AdmissionRequest): Verdict {
  // the name as messages quote it: the writer's, of any length (the reason may quote it too)
  const name = clipped(nameOf(req));
  const decoded = fromFloatingIPObject(req.object);
  if (!decoded.ok) return refuse(`FloatingIP ${name}: ${clipped(decoded.reason, 1000)}`);
  // a name other than the address's canonical one is refused by fromFloatingIPObject
  const { ip, key, reserved } = decoded.record;
  const bad = keyProblem(key);
  if (bad) return refuse(`FloatingIP ${name}: ${bad}`);
  // an update of an address the configuration no longer covers is floatip keeping an orphan, and
  // so is a create for the pod that runs with it (its object written again, or its adoption)
  if (
    req.operation === 'CREATE' &&
    !reserved &&
    !deps.allocator.isConfigured(ip) &&
    !deps.keyRunsWith?.(ip, key)
  ) {
    return refuse(
      `FloatingIP ${name}: ${ip} is in no range of the floating IP configuration; add it to the ConfigMap, or label the object reserved to set it aside`,
    );
  }
  return ALLOW;
}

function pool(deps: JudgeDeps, req: AdmissionRequest): Verdict {
  const name = nameOf(req);
  // in messages: the writer's, of any length
  const where = clipped(req.namespace);
  const named = `${where}/${clipped(name)}`;
  // the API server always fills it (generateName included): only a hand-made review lacks it
  if (!name) return refuse(`Pool in ${where}: metadata.name is missing`);
  const decoded = decodePool({ ...req.object, metadata: { name } });
  // the Pool store's own words for an object it would ignore
  if (!decoded) return refuse(`Pool ${named}: size must be a whole number >= 0`);
  if (req.namespace !== deps.poolNamespace) return ALLOW;
  // in pods' worth, as the size counts: a dual-stack pod holds two addresses
  const held = ofMainFamily(deps.allocator.byPool(name), (a) => a.family).length;
  if (decoded.size >= held) return ALLOW;
  return {
    allowed: true,
    warnings: [
      `Pool ${named}: size ${decoded.size} is below what the pool holds (addresses for ${held} ${held === 1 ? 'pod' : 'pods'}); none is taken away (surplus is never released), and pods beyond the size are refused at bind (reached pool ${clipped(name)} size limit of ${decoded.size})`,
    ],
  };
}

const isJson = (text: string): boolean => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

/** An object's CNI args annotation, when it has one. */
function cniArgsTextOf(o: ReviewedObject | undefined): string | undefined {
  const text = (metadataOf(o).annotations as Record<string, unknown> | undefined)?.[CNI_ARGS_ANNOTATION];
  return typeof text === 'string' ? text : undefined;
}

/** The ipinfos of an object's CNI args annotation; none when it has none or it does not parse. */
function ipinfosOf(o: ReviewedObject | undefined): readonly IPInfo[] {
  const text = cniArgsTextOf(o);
  if (text === undefined) return [];
  try {
    return parseCniArgs(text).ipinfos;
  } catch {
    // floatip's bind refuses such a pod in the decoder's words; nothing here for a node to read
    return [];
  }
}

/**
 * A pod's addresses are written into its annotation by floatip's bind, through the Binding (a
 * subresource this webhook is not asked about); a pod written with addresses of its creator's
 * choosing would be adopted (a free address, at the next resync) or configured on a node by a CNI
 * that trusts the annotation. `request_ip_range`, what a pod asks for, stays the creator's.
 */
function podAddresses(_deps: JudgeDeps, req: AdmissionRequest): Verdict {
  const pod = `${clipped(req.namespace)}/${clipped(nameOf(req)) || '(generated name)'}`;
  // floatip's decoder refuses it, so its ipinfos read as none here; galaxy's daemon decodes it with
  // Go, which merges the two and finds the first's ipinfos: refused unless it was already there
  const text = cniArgsTextOf(req.object);
  // only JSON can name common twice to Go, which refuses any other text whole (and repeatedCommon
  // reads JSON: a key broken off after a backslash threw, answered 500)
  const repeated = text === undefined || !isJson(text) ? undefined : repeatedCommon(text);
  if (repeated && !(req.operation === 'UPDATE' && cniArgsTextOf(req.oldObject) === text)) {
    return refuse(
      `pod ${pod}: annotation ${CNI_ARGS_ANNOTATION} names common twice (${jsonPathText(repeated)}), which Go's decoder merges into addresses floatip cannot see: write common once, without ipinfos`,
    );
  }
  const written = ipinfosOf(req.object);
  if (written.length === 0) return ALLOW;
  const same = (a: IPInfo, b: IPInfo | undefined) =>
    b !== undefined && a.ip === b.ip && a.vlan === b.vlan && a.gateway === b.gateway;
  const before = req.operation === 'UPDATE' ? ipinfosOf(req.oldObject) : [];
  if (written.length === before.length && written.every((info, i) => same(info, before[i]))) return ALLOW;
  const ips = listed(written.map((info) => info.ip));
  return refuse(
    `pod ${pod}: annotation ${CNI_ARGS_ANNOTATION} ${req.operation === 'CREATE' ? 'sets' : 'changes'} common.ipinfos (${ips}); a pod's addresses are written by floatip's bind alone: leave common.ipinfos out (request_ip_range may stay)`,
  );
}
