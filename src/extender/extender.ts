// The four extender verbs (spec §6), in the core's terms. Filter and prioritize only read: no
// address is taken before bind, so nothing leaks when a pod is filtered and never bound (galaxy
// reserves in filter, §12.16). Bind decides and writes under the pod's lock (and, for Deployments
// and Pools with a non-default policy, the app's lock, which is what keeps their count within
// bounds); if anything after the first write fails, every change it made is undone.
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { type CniArgs, CNI_ARGS_ANNOTATION, type IPInfo, formatCniArgs } from '../cni/args.js';
import {
  type Allocation,
  type AllocationKey,
  type Attrs,
  type Family,
  IpamError,
  type RangeGroup,
  ReleasePolicy,
  releasePolicyName,
} from '../ipam/index.js';
import { KubeApiError } from '../kube/custom-resources.js';
import type { EventRecorder } from '../kube/events.js';
import {
  RELEASE_POLICY_ANNOTATION,
  cniArgsOfPod,
  keyOfPod,
  podName,
  policyOfPod,
  unknownReleasePolicyOf,
  wantsFloatingIP,
} from '../kube/pod.js';
import type { Logger } from '../log.js';
import type { FloatingIPStore } from '../store/floating-ip-store.js';
import type { KeyedLock } from '../store/keyed-lock.js';
import type { NodeFacts, NodeList } from './node-subnets.js';
import type { FilterResult, HostPriority, MetaVictims } from './wire.js';

/** galaxy's reason for a node whose subnet cannot serve the pod. */
export const NO_FIP_LEFT = 'FloatingIPPlugin:NoFIPLeft';

/** What the extender needs to know about the cluster; the composition root wires the caches in. */
export interface ExtenderWorld {
  /** The pod as the cache has it, or undefined. */
  pod(namespace: string, name: string): V1Pod | undefined;
  /** The pod from the API server (the cache may lag behind the scheduler). */
  fetchPod(namespace: string, name: string): Promise<V1Pod | undefined>;
  node(name: string): V1Node | undefined;
  fetchNode(name: string): Promise<V1Node | undefined>;
  /** How many pods an app with a non-default policy may hold addresses for (see AppLimits). */
  appLimit(key: AllocationKey): AppLimit;
  /** Whether pods of this kind can keep addresses by name (StatefulSet-like, spec §5.2). */
  supportsReservation(key: AllocationKey, policy: ReleasePolicy): string | undefined;
  /** POSTs the pod's binding with these annotations. */
  bind(
    namespace: string,
    name: string,
    uid: string,
    node: string,
    annotations: Record<string, string>,
  ): Promise<void>;
}

export interface AppLimit {
  /** The most pods that may hold addresses at once. */
  readonly limit: number;
  /** Keys counted against the limit start with this. */
  readonly countPrefix: string;
  /** The message when the limit is reached (galaxy's wording). */
  readonly reached: (used: number) => string;
}

export class ExtenderError extends Error {}

/** The UID rule: a re-created pod waits until its previous incarnation's deletion was processed. */
export class WaitingForDeleteError extends ExtenderError {}

/** An app (Deployment or Pool) already holds as many addresses as it may: wait for one to come back. */
export class AppLimitError extends ExtenderError {
  constructor(
    message: string,
    /** Keys counted against the limit start with this. */
    readonly countPrefix: string,
  ) {
    super(message);
  }
}

/** Who is told about refusals that floatip itself will clear, so that the pod is retried then. */
export interface RefusalListener {
  /** The UID rule refused the pod. */
  refused(namespace: string, name: string, uid: string): void;
  /** The pod's app is at its limit. */
  refusedForApp(countPrefix: string, namespace: string, name: string, uid: string): void;
  /** No node could take the pod: these node subnets had no free address for it. */
  refusedForSubnets(namespace: string, name: string, uid: string, subnets: ReadonlySet<string>): void;
  bound(namespace: string, name: string): void;
}

export interface ExtenderOptions {
  /** The extended resource that marks pods wanting a floating IP. */
  readonly resource: string;
}

/** A change bind made, and how to undo it. */
type Undo = () => Promise<unknown>;

/**
 * Locks shared by everyone who decides about a pod's or an app's addresses (extender, lifecycle,
 * REST API), so that their decisions about one pod (or one Deployment/Pool) never interleave.
 * Order: a pod's lock before its app's.
 */
export interface DecisionLocks {
  /** By pod, "namespace/name". */
  readonly pods: KeyedLock;
  /** By app or pool parking key (AllocationKey.poolPrefix). */
  readonly apps: KeyedLock;
}

/** How many binds are remembered, to refuse binding a pod again before the pod cache shows it bound. */
const RECENT_BINDS = 10_000;

export class Extender {
  private readonly podLocks: KeyedLock;
  private readonly appLocks: KeyedLock;
  private readonly recentBinds = new Map<string, { uid: string; node: string }>();

  constructor(
    locks: DecisionLocks,
    private readonly store: FloatingIPStore,
    private readonly world: ExtenderWorld,
    private readonly nodes: NodeFacts,
    private readonly events: EventRecorder,
    private readonly log: Logger,
    private readonly options: ExtenderOptions,
    private readonly refusals?: RefusalListener,
  ) {
    this.podLocks = locks.pods;
    this.appLocks = locks.apps;
  }

  private get allocator() {
    return this.store.allocator;
  }

  // ---- filter

  filter(pod: V1Pod, nodes: V1Node[] | undefined, nodeNames: string[] | undefined): FilterResult {
    // a node named __proto__ must stay a node
    const failedNodes: Record<string, string> = Object.create(null) as Record<string, string>;
    if (!wantsFloatingIP(pod, this.options.resource)) {
      return { ...(nodes ? { nodes } : {}), ...(nodeNames ? { nodeNames } : {}), failedNodes, error: '' };
    }
    let allowed: Set<string>;
    try {
      allowed = this.allowedSubnets(pod);
    } catch (err) {
      const message = errorText(err);
      this.log.info({ pod: podName(pod), err: message }, 'filter: no node can serve the pod');
      const waiting = this.knownIncarnation(pod);
      if (err instanceof AppLimitError && waiting)
        this.refusals?.refusedForApp(err.countPrefix, waiting.namespace, waiting.name, waiting.uid);
      return {
        ...(nodes ? { nodes: [] } : {}),
        ...(nodeNames ? { nodeNames: [] } : {}),
        failedNodes,
        error: message,
      };
    }
    let result: FilterResult;
    let list: NodeList | undefined;
    if (nodes) {
      const passes = (node: V1Node): boolean => {
        const name = node.metadata?.name ?? '';
        const facts = this.nodes.subnetOfRequested(node, this.world.node(name));
        if ('reason' in facts) failedNodes[name] = facts.reason;
        else if (!allowed.has(facts.subnet)) failedNodes[name] = NO_FIP_LEFT;
        else return true;
        return false;
      };
      result = { nodes: nodes.filter(passes), failedNodes, error: '' };
    } else {
      list = this.nodes.listOf(nodeNames ?? [], (name) => this.world.node(name));
      result = this.filterNames(list, allowed);
    }
    if ((result.nodes ?? result.nodeNames ?? []).length === 0) this.waitForAddress(pod, allowed, nodes, list);
    return result;
  }

  /**
   * No node passed: if some failed only for want of a free address, the pod waits for one in their
   * node subnets (the scheduler is told to retry it when one is freed).
   */
  private waitForAddress(
    pod: V1Pod,
    allowed: ReadonlySet<string>,
    nodes: V1Node[] | undefined,
    list: NodeList | undefined,
  ): void {
    const waiting = this.knownIncarnation(pod);
    if (!this.refusals || !waiting) return;
    const candidates = list
      ? list.distinct
      : (nodes ?? []).flatMap((n) => {
          const facts = this.nodes.subnetOfRequested(n, this.world.node(n.metadata?.name ?? ''));
          return 'subnet' in facts ? [facts.subnet] : [];
        });
    const exhausted = new Set([...candidates].filter((s) => !allowed.has(s)));
    this.refusals.refusedForSubnets(waiting.namespace, waiting.name, waiting.uid, exhausted);
  }

  /**
   * The pod of a filter request, if the pod cache has that very incarnation: only such pods are
   * remembered as waiting (a request naming pods that do not exist must not fill memory, nor make
   * floatip write to pods).
   */
  private knownIncarnation(pod: V1Pod): { namespace: string; name: string; uid: string } | undefined {
    const namespace = pod.metadata?.namespace ?? 'default';
    const name = pod.metadata?.name ?? '';
    const uid = pod.metadata?.uid ?? '';
    const cached = this.world.pod(namespace, name);
    return uid && cached?.metadata?.uid === uid ? { namespace, name, uid } : undefined;
  }

  /**
   * The names-only filter over a resolved list. Pods differ in which node subnets they may use, not
   * in the list, so the answer for a list and a set of allowed subnets is worked out once and shared
   * (read-only) until a node's subnet changes.
   */
  private filterNames(list: NodeList, allowed: ReadonlySet<string>): FilterResult {
    const usable = [...list.distinct].filter((s) => allowed.has(s)).sort();
    const memoKey = usable.join(' ');
    const known = list.memo.get(memoKey) as FilterResult | undefined;
    if (known) return known;
    const nodeNames: string[] = [];
    const failedNodes: Record<string, string> = {};
    list.names.forEach((name, i) => {
      const subnet = list.subnets[i];
      if (subnet === undefined) failedNodes[name] = list.reasons[i]!;
      else if (!allowed.has(subnet)) failedNodes[name] = NO_FIP_LEFT;
      else nodeNames.push(name);
    });
    const result: FilterResult = { nodeNames, failedNodes, error: '' };
    // bounded: a few allowed-subnet sets are the rule, but a config may have many subnets
    if (list.memo.size >= 64) list.memo.clear();
    list.memo.set(memoKey, result);
    return result;
  }

  /**
   * The node subnets where this pod can get (or keep) its addresses now (spec §6.2 getSubnet,
   * without its side effects). Throws with the reason when there is none.
   */
  private allowedSubnets(pod: V1Pod): Set<string> {
    const key = keyOfPod(pod);
    const { groups } = cniArgsOfPod(pod);
    // addresses the pod already holds pin it to the node subnets that can use them all
    let pinned: Set<string> | undefined;
    let unmatched: readonly RangeGroup[] = groups;
    if (groups.length > 0) {
      const matched = this.allocator.matchHeld(key.text, groups);
      const held = matched.filter((a): a is Allocation => a !== undefined);
      if (held.length > 0) pinned = this.servingAll(held);
      unmatched = groups.filter((_, i) => matched[i] === undefined);
      if (unmatched.length === 0) return pinned ?? new Set();
    } else {
      const held = this.allocator.byKey(key.text);
      if (held.length > 0) return this.servingAll(held);
    }
    const policy = policyOfPod(pod);
    if (policy !== ReleasePolicy.PodDelete) {
      const refusal = this.world.supportsReservation(key, policy);
      if (refusal) {
        throw new ExtenderError(
          `release policy ${releasePolicyName(policy)} is not supported for pod ${pod.metadata?.name}: ${refusal}`,
        );
      }
    }
    let subnets: Set<string>;
    if (key.isDeployment() && policy !== ReleasePolicy.PodDelete) {
      if (groups.length > 0) {
        throw new ExtenderError(
          'request ip ranges for deployment pod with release policy other than ReleasePolicyPodDelete is not supported',
        );
      }
      const limit = this.world.appLimit(key);
      const used = this.usedBy(limit, key);
      if (used >= limit.limit) throw new AppLimitError(limit.reached(used), limit.countPrefix);
      const parked = this.parked(key);
      subnets = parked.length > 0 ? this.servingAny(parked) : this.allocator.nodeSubnetsFor();
    } else {
      subnets = this.allocator.nodeSubnetsFor(unmatched);
    }
    if (pinned) subnets = new Set([...subnets].filter((s) => pinned.has(s)));
    return subnets;
  }

  /** Pods of the app (or pool) holding addresses, parked ones aside. */
  private usedBy(limit: AppLimit, key: AllocationKey): number {
    const parkedHere = key.poolPrefix.startsWith(limit.countPrefix)
      ? this.allocator.byKey(key.poolPrefix).length > 0
        ? 1
        : 0
      : 0;
    return this.allocator.countKeysByPrefix(limit.countPrefix) - parkedHere;
  }

  private parked(key: AllocationKey): Allocation[] {
    return this.allocator.byKey(key.poolPrefix).filter((a) => !a.reserved);
  }

  /** Node subnets where every one of these addresses can be used. */
  private servingAll(held: readonly Allocation[]): Set<string> {
    let out: Set<string> | undefined;
    for (const a of held) {
      const serving = new Set(this.allocator.nodeSubnetsServing(a.ip));
      out = out ? new Set([...out].filter((s) => serving.has(s))) : serving;
    }
    return out ?? new Set();
  }

  private servingAny(held: readonly Allocation[]): Set<string> {
    return new Set(held.flatMap((a) => this.allocator.nodeSubnetsServing(a.ip)));
  }

  // ---- prioritize

  /**
   * Scores 0-10 (galaxy returns none, §12.1): 10 where the pod keeps the addresses it (or, for a
   * Deployment or Pool, its app) already holds; elsewhere 0-9 by the node subnet's free addresses
   * relative to the roomiest candidate subnet, so pods spread and no subnet runs dry first.
   */
  prioritize(pod: V1Pod, nodes: V1Node[] | undefined, nodeNames: string[] | undefined): HostPriority[] {
    const names = nodes ? nodes.map((n) => n.metadata?.name ?? '') : (nodeNames ?? []);
    if (!wantsFloatingIP(pod, this.options.resource)) return names.map((host) => ({ host, score: 0 }));
    let home = new Set<string>();
    try {
      const key = keyOfPod(pod);
      const held = this.allocator.byKey(key.text);
      if (held.length > 0) home = this.servingAll(held);
      else if (key.isDeployment() && policyOfPod(pod) !== ReleasePolicy.PodDelete)
        home = this.servingAny(this.parked(key));
    } catch {
      // a pod filter has refused gets no preference
    }
    const subnets: readonly (string | undefined)[] = nodes
      ? nodes.map((node) => {
          const facts = this.nodes.subnetOfRequested(node, this.world.node(node.metadata?.name ?? ''));
          return 'subnet' in facts ? facts.subnet : undefined;
        })
      : this.nodes.listOf(names, (name) => this.world.node(name)).subnets;
    const free = new Map<string, bigint>();
    for (const subnet of subnets)
      if (subnet && !free.has(subnet)) free.set(subnet, this.allocator.freeFor(subnet));
    const most = [...free.values()].reduce((a, b) => (b > a ? b : a), 0n);
    return names.map((host, i) => {
      const subnet = subnets[i];
      let score = 0;
      if (subnet && home.has(subnet)) score = 10;
      else if (subnet && most > 0n) score = Number((9n * free.get(subnet)!) / most);
      return { host, score };
    });
  }

  // ---- preempt

  /**
   * Keeps the candidate nodes where evicting the victims could let the preemptor run: those in a
   * node subnet that can serve it. Read-only: galaxy reserves addresses here, without the pod's
   * lock (§12.16). A pod with the default policy only loses nodes that no entry serves at all.
   */
  preempt(pod: V1Pod, victims: Map<string, MetaVictims>): Map<string, MetaVictims> {
    if (!wantsFloatingIP(pod, this.options.resource)) return victims;
    let allowed: Set<string> | undefined;
    if (policyOfPod(pod) !== ReleasePolicy.PodDelete) {
      try {
        allowed = this.allowedSubnets(pod);
      } catch (err) {
        this.log.info({ pod: podName(pod), err: errorText(err) }, 'preempt: keeping every candidate');
        return victims;
      }
    }
    const kept = new Map<string, MetaVictims>();
    for (const [name, v] of victims) {
      const node = this.world.node(name);
      if (!node) continue;
      const facts = this.nodes.subnetOf(node);
      if ('reason' in facts) continue;
      if (allowed ? allowed.has(facts.subnet) : this.allocator.familiesServing(facts.subnet).length > 0)
        kept.set(name, v);
    }
    return kept;
  }

  // ---- bind

  /** Allocates (or reuses) the pod's addresses, records them, and binds the pod. Returns "" or the error. */
  async bind(namespace: string, name: string, uid: string, nodeName: string): Promise<string> {
    const who = `${namespace}/${name}`;
    let podUid = uid;
    try {
      let pod = this.world.pod(namespace, name);
      if (!pod || (uid && pod.metadata?.uid !== uid)) pod = await this.world.fetchPod(namespace, name);
      if (!pod) return `failed to find pod ${namespace}_${name}: pod "${name}" not found`;
      if (uid && pod.metadata?.uid !== uid) {
        return `failed to find pod ${namespace}_${name}: uid ${uid} is not the pod's (${pod.metadata?.uid})`;
      }
      if (!wantsFloatingIP(pod, this.options.resource))
        return "pod which doesn't want floatingip have been sent to plugin";
      const bound = pod;
      podUid = uid || (bound.metadata?.uid ?? '');
      await this.podLocks.run(who, () => {
        // decided before anything is written: a bound pod stays where it is
        const boundTo = this.boundNodeOf(namespace, name, podUid, bound);
        if (boundTo !== undefined) {
          throw new ExtenderError(
            `update pod ${namespace}_${name}: pod ${name} is already assigned to node "${boundTo}"`,
          );
        }
        return this.bindLocked(bound, podUid, nodeName);
      });
      this.remember(namespace, name, podUid, nodeName);
      this.refusals?.bound(namespace, name);
      const unknown = unknownReleasePolicyOf(bound);
      if (unknown !== undefined) this.warnUnknownPolicy(bound, unknown);
      return '';
    } catch (err) {
      if (err instanceof WaitingForDeleteError) this.refusals?.refused(namespace, name, podUid);
      if (err instanceof AppLimitError)
        this.refusals?.refusedForApp(err.countPrefix, namespace, name, podUid);
      const message = errorText(err);
      this.log.warn({ pod: who, node: nodeName, err: message }, 'bind failed');
      const pod = this.world.pod(namespace, name);
      if (pod) {
        this.events.record(
          {
            apiVersion: 'v1',
            kind: 'Pod',
            name,
            namespace,
            ...(pod.metadata?.uid ? { uid: pod.metadata.uid } : {}),
          },
          'Warning',
          'FloatingIPBindFailed',
          `node ${nodeName}: ${message}`,
        );
      }
      return message;
    }
  }

  /**
   * The node this incarnation of the pod is bound to, if it is: the pod cache may not show a binding
   * made a moment ago, so binds this replica made are remembered too (the latest few thousand).
   */
  private boundNodeOf(namespace: string, name: string, uid: string, pod: V1Pod): string | undefined {
    const cached = this.world.pod(namespace, name) ?? pod;
    if (cached.metadata?.uid === uid && cached.spec?.nodeName) return cached.spec.nodeName;
    const recent = this.recentBinds.get(`${namespace}/${name}`);
    return recent?.uid === uid ? recent.node : undefined;
  }

  private remember(namespace: string, name: string, uid: string, node: string): void {
    const who = `${namespace}/${name}`;
    this.recentBinds.delete(who);
    this.recentBinds.set(who, { uid, node });
    if (this.recentBinds.size > RECENT_BINDS) this.recentBinds.delete(this.recentBinds.keys().next().value!);
  }

  /** galaxy treats an unknown release-policy value as the default; the pod's owner should know. */
  private warnUnknownPolicy(pod: V1Pod, value: string): void {
    const meta = pod.metadata ?? {};
    const message = `unknown release policy ${JSON.stringify(value)} in ${RELEASE_POLICY_ANNOTATION}: its addresses are released when the pod is deleted (the default); use "immutable" or "never" to keep them`;
    this.log.warn({ pod: podName(pod), policy: value }, message);
    this.events.record(
      {
        apiVersion: 'v1',
        kind: 'Pod',
        name: meta.name ?? '',
        namespace: meta.namespace ?? 'default',
        ...(meta.uid ? { uid: meta.uid } : {}),
      },
      'Warning',
      'UnknownReleasePolicy',
      message,
    );
  }

  private async bindLocked(pod: V1Pod, uid: string, nodeName: string): Promise<void> {
    const key = keyOfPod(pod);
    const args = cniArgsOfPod(pod);
    const attrs: Attrs = { policy: policyOfPod(pod), nodeName, podUid: uid };
    const node = this.world.node(nodeName) ?? (await this.world.fetchNode(nodeName));
    if (!node) throw new ExtenderError(`node ${nodeName} not found`);
    const facts = this.nodes.subnetOf(node);
    if ('reason' in facts) throw new ExtenderError(`node ${nodeName}: ${facts.reason}`);
    const undo: Undo[] = [];
    try {
      const addresses = await this.assign(key, args, facts.subnet, attrs, undo);
      const ipinfos = addresses.map((a) => this.ipInfoOf(a));
      const annotation = formatCniArgs({ groups: args.groups, ipinfos });
      await this.bindWithRetry(pod, uid, nodeName, { [CNI_ARGS_ANNOTATION]: annotation });
      this.log.info(
        { pod: podName(pod), key: key.text, node: nodeName, ip: addresses.map((a) => a.ip) },
        'pod bound',
      );
    } catch (err) {
      // nothing half-written: every address goes back where it was
      for (const step of undo.reverse()) {
        await step().catch((undoErr: unknown) =>
          this.log.error(
            { pod: podName(pod), key: key.text, err: errorText(undoErr) },
            'could not undo a bind step',
          ),
        );
      }
      throw err;
    }
  }

  /** The pod's addresses on a node of `nodeSubnet`: reused, unparked or new, in group (or family) order. */
  private async assign(
    key: AllocationKey,
    args: CniArgs,
    nodeSubnet: string,
    attrs: Attrs,
    undo: Undo[],
  ): Promise<Allocation[]> {
    const groups = args.groups;
    const reused: (Allocation | undefined)[] =
      groups.length > 0 ? this.allocator.matchHeld(key.text, groups) : this.allocator.byKey(key.text);
    const held = reused.filter((a): a is Allocation => a !== undefined);
    for (const a of held) {
      // a same-named pod was re-created before the old one's deletion was seen
      if (a.podUid && a.podUid !== attrs.podUid) {
        throw new WaitingForDeleteError(`waiting for delete event of ${key.text} before reuse this ip`);
      }
      if (!this.allocator.nodeSubnetsServing(a.ip).includes(nodeSubnet)) {
        throw new ExtenderError(`${a.ip} of ${key.text} cannot be used in node subnet ${nodeSubnet}`);
      }
    }
    const result: (Allocation | undefined)[] = [...reused];
    for (const [i, a] of reused.entries()) {
      if (!a || (a.nodeName === attrs.nodeName && a.podUid === attrs.podUid && a.policy === attrs.policy))
        continue;
      const before: Attrs = { policy: a.policy, nodeName: a.nodeName, podUid: a.podUid };
      result[i] = await this.store.update(a.ip, { key: key.text, podUid: a.podUid }, attrs);
      undo.push(() => this.store.update(a.ip, { key: key.text, podUid: attrs.podUid }, before));
    }
    if (groups.length > 0) {
      const missing = groups.map((_, i) => i).filter((i) => reused[i] === undefined);
      if (missing.length > 0) {
        const made = await this.store.allocate({
          key: key.text,
          nodeSubnet,
          attrs,
          groups: missing.map((i) => groups[i]!),
        });
        undo.push(
          ...made.map((a) => () => this.store.release(a.ip, { key: key.text, podUid: attrs.podUid })),
        );
        missing.forEach((g, j) => (result[g] = made[j]));
      }
      return result as Allocation[];
    }
    const heldFamilies = new Set(held.map((a) => (a.ip.includes(':') ? 6 : 4)));
    const families = this.allocator.familiesServing(nodeSubnet).filter((f) => !heldFamilies.has(f));
    if (families.length === 0) return held;
    const made =
      key.isDeployment() && attrs.policy !== ReleasePolicy.PodDelete
        ? await this.appLocks.run(key.poolPrefix, () =>
            this.assignInApp(key, nodeSubnet, attrs, families, held.length > 0, undo),
          )
        : await this.store.allocate({ key: key.text, nodeSubnet, attrs, families });
    if (!(key.isDeployment() && attrs.policy !== ReleasePolicy.PodDelete)) {
      undo.push(...made.map((a) => () => this.store.release(a.ip, { key: key.text, podUid: attrs.podUid })));
    }
    return [...held, ...made].sort((a, b) => (a.ip.includes(':') ? 1 : 0) - (b.ip.includes(':') ? 1 : 0));
  }

  /**
   * Addresses for a Deployment (or Pool) pod with a non-default policy, under the app's lock: the
   * app's most recently parked address where one serves the node subnet, a new one otherwise, and
   * never more pods holding addresses than the app's limit.
   */
  private async assignInApp(
    key: AllocationKey,
    nodeSubnet: string,
    attrs: Attrs,
    families: readonly Family[],
    holdsSome: boolean,
    undo: Undo[],
  ): Promise<Allocation[]> {
    if (!holdsSome) {
      const limit = this.world.appLimit(key);
      const used = this.usedBy(limit, key);
      if (used >= limit.limit) throw new AppLimitError(limit.reached(used), limit.countPrefix);
    }
    const made: Allocation[] = [];
    for (const family of families) {
      const parked = this.allocator.chooseParked(key.poolPrefix, nodeSubnet, { family });
      if (parked) {
        const parkedAttrs: Attrs = {
          policy: parked.policy,
          nodeName: parked.nodeName,
          podUid: parked.podUid,
        };
        const got = await this.store.unpark(key.poolPrefix, key.text, nodeSubnet, attrs, family);
        undo.push(() =>
          this.store.rekey(got.ip, { key: key.text, podUid: attrs.podUid }, key.poolPrefix, parkedAttrs),
        );
        made.push(got);
      } else {
        const [got] = await this.store.allocate({ key: key.text, nodeSubnet, attrs, families: [family] });
        undo.push(() => this.store.release(got!.ip, { key: key.text, podUid: attrs.podUid }));
        made.push(got!);
      }
    }
    return made;
  }

  private ipInfoOf(a: Allocation): IPInfo {
    const network = this.allocator.networkOf(a.ip);
    if (!network) throw new ExtenderError(`${a.ip} is outside every configured range`);
    return { ip: `${a.ip}/${network.prefix}`, vlan: network.vlan, gateway: network.gateway };
  }

  /** galaxy retries the binding for up to 3 s every 500 ms, but not when the pod is gone. */
  private async bindWithRetry(
    pod: V1Pod,
    uid: string,
    nodeName: string,
    annotations: Record<string, string>,
  ): Promise<void> {
    const namespace = pod.metadata?.namespace ?? 'default';
    const name = pod.metadata?.name ?? '';
    const deadline = Date.now() + 3000;
    for (;;) {
      try {
        await this.world.bind(namespace, name, uid, nodeName, annotations);
        return;
      } catch (err) {
        const gone = err instanceof KubeApiError && (err.status === 404 || err.status === 409);
        if (gone || Date.now() + 500 > deadline)
          throw new ExtenderError(`update pod ${namespace}_${name}: ${errorText(err)}`);
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  }
}

export function errorText(err: unknown): string {
  if (err instanceof IpamError || err instanceof ExtenderError || err instanceof KubeApiError)
    return err.message;
  return err instanceof Error ? err.message : String(err);
}
