// kube-scheduler's read-only verbs: filter, prioritize and preempt, in the core's terms. They only
// read: no address is taken before bind, so nothing leaks when a pod is filtered and never bound
// (galaxy reserves in filter and preempt). What a request says about nodes and pods is used for that
// request only; what floatip believes about them comes from the caches.
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { LRUCache } from 'lru-cache';
import {
  AppLimitError,
  type Allocator,
  HeldOutsideConfigError,
  ReleasePolicy,
  allowedSubnets,
  homeSubnets,
} from '../ipam/index.js';
import type { Logger } from '../log.js';
import { keyOfPod, namespacedName, policyOfPod, wantsFloatingIP } from '../pods/pod-facts.js';
import type { NodeFacts, NodeList } from './node-subnets.js';
import {
  type AppSource,
  NO_FIP_LEFT,
  type RefusalListener,
  errorText,
  placementOf,
} from './pod-placement.js';
import type { MetaVictims } from './wire.js';
import type { FilterResult, HostPriority } from './wire-answers.js';

/** The nodes and pods the verbs look up: the caches. */
export interface ClusterView {
  node(name: string): V1Node | undefined;
  readonly pods: { cached(namespace: string, name: string): V1Pod | undefined };
}

/**
 * Refusals of pods the cache does not have yet, held until it does: a few seconds' worth of new pods
 * on a busy cluster, and no more than a minute (a pod that never appears was never real).
 */
const HELD_REFUSALS = 1000;
const HELD_REFUSAL_MS = 60_000;

interface PodRef {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
}

/** How many answers per resolved node list are kept: a few allowed-subnet sets are the rule. */
const ANSWERS_PER_LIST = 64;

export class SchedulingQueries {
  constructor(
    private readonly allocator: Allocator,
    private readonly nodes: NodeFacts,
    private readonly cluster: ClusterView,
    private readonly apps: AppSource,
    private readonly log: Logger,
    /** The extended resource that marks pods wanting a floating IP. */
    private readonly resource: string,
    private readonly refusals?: RefusalListener,
  ) {}

  /** By "namespace/name": refusals of incarnations the pod cache did not have when they were made. */
  private readonly held = new LRUCache<string, { readonly uid: string; readonly pass: () => void }>({
    max: HELD_REFUSALS,
    ttl: HELD_REFUSAL_MS,
  });

  /**
   * The pod cache has this pod now (added or updated): a refusal held for this very incarnation is
   * passed on, unless the pod has been bound meanwhile.
   */
  podCached(pod: V1Pod): void {
    const who = `${pod.metadata?.namespace ?? 'default'}/${pod.metadata?.name ?? ''}`;
    const held = this.held.get(who);
    if (!held || held.uid !== pod.metadata?.uid) return;
    this.held.delete(who);
    if (!pod.spec?.nodeName) held.pass();
  }

  /**
   * What filter and preempt wait for before answering for this pod: the first list of the workload
   * caches when its policy reads them and nobody has needed them before (undefined: nothing).
   */
  ready(pod: V1Pod): Promise<void> | undefined {
    const policy = policyOfPod(pod);
    // the default policy (nearly every pod) first: it needs nothing, whatever the pod asks for
    if (policy === ReleasePolicy.PodDelete || !wantsFloatingIP(pod, this.resource)) return undefined;
    return this.apps.readyFor(policy);
  }

  // ---- filter

  filter(pod: V1Pod, nodes: V1Node[] | undefined, nodeNames: string[] | undefined): FilterResult {
    // a node named __proto__ must stay a node
    const failedNodes: Record<string, string> = Object.create(null) as Record<string, string>;
    if (!wantsFloatingIP(pod, this.resource)) {
      return {
        ...(nodes ? { nodes } : {}),
        ...(nodeNames ? { nodeNames } : {}),
        failedNodes,
        error: '',
        notWanted: true,
      };
    }
    let allowed: Set<string>;
    try {
      allowed = allowedSubnets(this.allocator, placementOf(pod, this.apps));
    } catch (err) {
      const message = errorText(err);
      this.log.info({ pod: namespacedName(pod), err: message }, 'filter: no node can serve the pod');
      if (err instanceof AppLimitError) {
        const { countPrefix } = err;
        this.tell(pod, (to, w) => to.refusedForApp(countPrefix, w.namespace, w.name, w.uid));
      }
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
        const facts = this.subnetOfRequested(node);
        if ('reason' in facts) failedNodes[name] = facts.reason;
        else if (!allowed.has(facts.subnet)) failedNodes[name] = NO_FIP_LEFT;
        else return true;
        return false;
      };
      result = { nodes: nodes.filter(passes), failedNodes, error: '' };
    } else {
      list = this.resolve(nodeNames ?? []);
      result = this.filterNames(list, allowed);
    }
    if ((result.nodes ?? result.nodeNames ?? []).length === 0) this.waitForAddress(pod, allowed, nodes, list);
    return result;
  }

  private resolve(names: readonly string[]): NodeList {
    return this.nodes.listOf(names, (name) => this.cluster.node(name));
  }

  private subnetOfRequested(node: V1Node) {
    return this.nodes.subnetOfRequested(node, this.cluster.node(node.metadata?.name ?? ''));
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
    if (!this.refusals) return;
    const candidates = list
      ? list.distinct
      : (nodes ?? []).flatMap((n) => {
          const facts = this.subnetOfRequested(n);
          return 'subnet' in facts ? [facts.subnet] : [];
        });
    const exhausted = new Set([...candidates].filter((s) => !allowed.has(s)));
    this.tell(pod, (to, w) => to.refusedForSubnets(w.namespace, w.name, w.uid, exhausted));
  }

  /**
   * Tells the listener of a refusal floatip will clear, if the pod cache has this very incarnation;
   * else holds it until the cache has it (`podCached`): kube-scheduler's watch can deliver a new pod
   * before floatip's, so a first filter may come first. A request naming pods that do not exist
   * neither fills memory beyond the held few nor makes floatip write to pods.
   */
  private tell(pod: V1Pod, pass: (to: RefusalListener, who: PodRef) => void): void {
    const refusals = this.refusals;
    const who: PodRef = {
      namespace: pod.metadata?.namespace ?? 'default',
      name: pod.metadata?.name ?? '',
      uid: pod.metadata?.uid ?? '',
    };
    if (!refusals || !who.uid) return;
    if (this.cluster.pods.cached(who.namespace, who.name)?.metadata?.uid === who.uid) pass(refusals, who);
    else {
      this.held.set(`${who.namespace}/${who.name}`, { uid: who.uid, pass: () => pass(refusals, who) });
      refusals.held?.();
    }
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
    const failedNodes: Record<string, string> = Object.create(null) as Record<string, string>;
    list.names.forEach((name, i) => {
      const subnet = list.subnets[i];
      if (subnet === undefined) failedNodes[name] = list.reasons[i]!;
      else if (!allowed.has(subnet)) failedNodes[name] = NO_FIP_LEFT;
      else nodeNames.push(name);
    });
    const result: FilterResult = { nodeNames, failedNodes, error: '' };
    if (list.memo.size >= ANSWERS_PER_LIST) list.memo.clear();
    list.memo.set(memoKey, result);
    return result;
  }

  // ---- prioritize

  /**
   * Scores 0-10 (galaxy returns none): 10 where the pod keeps the addresses it (or, sharing its
   * app's, its app) already holds; elsewhere 0-9 by the node subnet's free addresses relative to the
   * roomiest candidate subnet, so pods spread and no subnet runs dry first.
   */
  prioritize(pod: V1Pod, nodes: V1Node[] | undefined, nodeNames: string[] | undefined): HostPriority[] {
    const names = nodes ? nodes.map((n) => n.metadata?.name ?? '') : (nodeNames ?? []);
    if (!wantsFloatingIP(pod, this.resource)) return names.map((host) => ({ host, score: 0 }));
    let home = new Set<string>();
    try {
      home = homeSubnets(this.allocator, keyOfPod(pod), policyOfPod(pod));
    } catch {
      // a pod filter has refused gets no preference
    }
    if (!nodes) return this.prioritizeNames(this.resolve(names), home);
    const subnets = nodes.map((node) => {
      const facts = this.subnetOfRequested(node);
      return 'subnet' in facts ? facts.subnet : undefined;
    });
    const scores = this.scoresOf(new Set(subnets.filter((s): s is string => s !== undefined)), home);
    return names.map((host, i) => ({ host, score: scores.get(subnets[i]!) ?? 0 }));
  }

  /** Each node subnet's score: 10 at home, else 0-9 by its free addresses against the roomiest's. */
  private scoresOf(subnets: ReadonlySet<string>, home: ReadonlySet<string>): Map<string | undefined, number> {
    const free = new Map<string, bigint>();
    for (const subnet of subnets) free.set(subnet, this.allocator.freeFor(subnet));
    const most = [...free.values()].reduce((a, b) => (b > a ? b : a), 0n);
    const scores = new Map<string | undefined, number>();
    for (const [subnet, n] of free)
      scores.set(subnet, home.has(subnet) ? 10 : most > 0n ? Number((9n * n) / most) : 0);
    return scores;
  }

  /**
   * The names-only scores over a resolved list: they change only when a subnet's score does (its
   * free addresses move it a tenth of the roomiest's), so the answer for a list and a set of scores
   * is worked out once and shared (read-only), as the filter's is.
   */
  private prioritizeNames(list: NodeList, home: ReadonlySet<string>): HostPriority[] {
    const scores = this.scoresOf(list.distinct, home);
    const memoKey = `prioritize ${[...scores].map(([subnet, score]) => `${subnet}=${score}`).join(' ')}`;
    const known = list.memo.get(memoKey) as HostPriority[] | undefined;
    if (known) return known;
    const result = list.names.map((host, i) => ({ host, score: scores.get(list.subnets[i]) ?? 0 }));
    if (list.memo.size >= ANSWERS_PER_LIST) list.memo.clear();
    list.memo.set(memoKey, result);
    return result;
  }

  // ---- preempt

  /**
   * Keeps the candidate nodes where evicting the victims could let the preemptor run: those in a
   * node subnet that can serve it. Read-only (galaxy reserves addresses here, without the pod's
   * lock). A pod with the default policy, or one whose placement fails (galaxy kept every
   * candidate then), only loses nodes that no entry serves at all.
   */
  preempt(pod: V1Pod, victims: Map<string, MetaVictims> | null): Map<string, MetaVictims> | null {
    if (victims === null || !wantsFloatingIP(pod, this.resource)) return victims;
    let allowed: Set<string> | undefined;
    if (policyOfPod(pod) !== ReleasePolicy.PodDelete) {
      try {
        allowed = allowedSubnets(this.allocator, placementOf(pod, this.apps));
      } catch (err) {
        // its own addresses are outside the configuration: no node can take it, so evicting helps nowhere
        if (err instanceof HeldOutsideConfigError) allowed = new Set();
        else {
          // galaxy keeps every candidate then; a node no entry serves still helps nobody
          this.log.info(
            { pod: namespacedName(pod), err: errorText(err) },
            'preempt: keeping every candidate a configured entry serves',
          );
        }
      }
    }
    const kept = new Map<string, MetaVictims>();
    for (const [name, v] of victims) {
      const node = this.cluster.node(name);
      if (!node) continue;
      const facts = this.nodes.subnetOf(node);
      if ('reason' in facts) continue;
      if (allowed ? allowed.has(facts.subnet) : this.allocator.familiesServing(facts.subnet).length > 0)
        kept.set(name, v);
    }
    return kept;
  }
}
