// kube-scheduler's bind verb: allocate (or reuse) the pod's addresses, record them as FloatingIP
// objects, and bind the pod with the `k8s.v1.cni.galaxy.io/args` annotation. Everything that can
// refuse the bind is decided before the first write; under the pod's lock (and, for a pod sharing its
// app's addresses, the app's lock, which keeps the app within its limit). If anything after the
// first write fails, every change it made is undone.
import type { V1Pod } from '@kubernetes/client-node';
import { type CniArgs, CNI_ARGS_ANNOTATION, type IPInfo, formatCniArgs } from '../cni/args.js';
import {
  type Allocation,
  type AllocationKey,
  AppLimitError,
  type Attrs,
  type ErrorKind,
  type Family,
  NoFreeIPError,
  NotAllocatedError,
  OwnerConflictError,
  WaitingForDeleteError,
  appLimit,
  checkAppLimit,
  checkNewAddresses,
  heldForNode,
  kindOf,
  sharesAppAddresses,
  usableHeld,
} from '../ipam/index.js';
import type { ClusterWorld } from '../kube/cluster-world.js';
import type { EventRecorder } from '../kube/events.js';
import type { Logger } from '../log.js';
import {
  RELEASE_POLICY_ANNOTATION,
  cniArgsOfPod,
  keyOfPod,
  namespacedName,
  policyOfPod,
  unknownReleasePolicyOf,
  wantsFloatingIP,
} from '../pods/pod-facts.js';
import type { DecisionLocks } from '../store/decision-locks.js';
import type { FloatingIPStore } from '../store/floating-ip-store.js';
import {
  BINDING_MIN_MS,
  BindError,
  BindingOutcomeUnknown,
  DEFAULT_BIND_BUDGET_MS,
  PodBinding,
  PodDeletedWhileBinding,
} from './binding.js';
import type { NodeFacts } from './node-subnets.js';
import { type AppSource, type RefusalListener, errorText } from './pod-placement.js';

/** The Event on the pod for a bind that did not happen, by the error's kind: its one mapping. */
const EVENT_REASON_OF_KIND: Readonly<Record<ErrorKind, string>> = {
  validation: 'FloatingIPBindFailed',
  conflict: 'FloatingIPBindFailed',
  wait: 'FloatingIPWaiting',
  unavailable: 'FloatingIPBindFailed',
  transient: 'FloatingIPBindFailed',
};

/** How many binds are remembered, to refuse binding a pod again before the pod cache shows it bound. */
const RECENT_BINDS = 10_000;

/** The store's writes bind makes (the FloatingIPStore; a fake in unit tests). */
export type BindStore = Pick<
  FloatingIPStore,
  'allocator' | 'allocate' | 'update' | 'release' | 'unpark' | 'rekey'
>;

/** A change bind made, and how to undo it. */
type Undo = () => Promise<unknown>;

export interface BinderOptions {
  /** The extended resource that marks pods wanting a floating IP. */
  readonly resource: string;
  /** How long a bind may take from its arrival (DEFAULT_BIND_BUDGET_MS unless set). */
  readonly budgetMs?: number;
  /** Milliseconds since the epoch; injected so that tests control time. */
  readonly clock?: () => number;
}

export class Binder {
  private readonly recentBinds = new Map<string, { uid: string; node: string }>();
  /** namespace/name of the pods this replica is binding now (between its first write and its last). */
  private readonly binding = new Set<string>();
  private readonly clock: () => number;
  private readonly podBinding: PodBinding;

  constructor(
    private readonly store: BindStore,
    private readonly locks: DecisionLocks,
    private readonly world: Pick<ClusterWorld, 'pods' | 'node' | 'fetchNode' | 'bind'>,
    private readonly nodes: NodeFacts,
    private readonly apps: AppSource,
    private readonly events: EventRecorder,
    private readonly log: Logger,
    private readonly options: BinderOptions,
    private readonly refusals?: RefusalListener,
  ) {
    this.clock = options.clock ?? Date.now;
    this.podBinding = new PodBinding(world, log, this.clock);
  }

  private get allocator() {
    return this.store.allocator;
  }

  /**
   * Allocates (or reuses) the pod's addresses, records them, and binds the pod. Returns "" or the
   * error. `budgetMs` (at most the configured budget) is what the caller has left of its own: a
   * forwarding replica passes on what remains of the scheduler's wait. `callerGone` says whether
   * the caller has stopped waiting (its connection closed): the budget starts when the handler
   * does, and a replica paused for seconds (SIGSTOP, a frozen VM) meets requests its caller gave up on.
   */
  async bind(
    namespace: string,
    name: string,
    uid: string,
    nodeName: string,
    budgetMs?: number,
    callerGone?: () => boolean,
  ): Promise<string> {
    const own = this.options.budgetMs ?? DEFAULT_BIND_BUDGET_MS;
    const deadline = this.clock() + Math.min(own, budgetMs ?? own);
    let podUid = uid;
    try {
      const pod = await this.world.pods.find(namespace, name, uid || undefined);
      // refused before anything is decided: logged, with no Event (no pod, another incarnation, or a
      // pod that asks for no address: the scheduler sent what it should not have)
      const refuse = (message: string) => this.failed(namespace, name, nodeName, 'validation', message);
      if (!pod) return refuse(`failed to find pod ${namespace}_${name}: pod "${name}" not found`);
      if (uid && pod.metadata?.uid !== uid) {
        return refuse(
          `failed to find pod ${namespace}_${name}: uid ${uid} is not the pod's (${pod.metadata?.uid})`,
        );
      }
      if (!wantsFloatingIP(pod, this.options.resource))
        return refuse("pod which doesn't want floatingip have been sent to plugin");
      podUid = uid || (pod.metadata?.uid ?? '');
      await this.locks.pod(namespace, name, async () => {
        // decided before anything is written: a bound pod stays where it is
        const boundTo = this.boundNodeOf(namespace, name, podUid, pod);
        if (boundTo !== undefined) {
          // galaxy's words for the binding the API server would refuse: its error, as kube-apiserver words it
          throw new BindError(
            `update pod ${keyOfPod(pod).text}: Operation cannot be fulfilled on pods/binding "${name}": pod ${name} is already assigned to node "${boundTo}"`,
            'conflict',
          );
        }
        // a bind that waited its time out (behind another of the pod, or on its way here from a
        // follower) would write after the scheduler stopped waiting for it
        const left = deadline - this.clock();
        if (callerGone?.()) throw gone(pod, nodeName, 'not started');
        if (left < BINDING_MIN_MS) {
          throw new BindError(
            `bind of ${namespacedName(pod)} to ${nodeName} not started: its time ran out (${Math.max(0, left)} ms left of at most ${own} ms); the scheduler retries it`,
            'transient',
          );
        }
        const who = `${namespace}/${name}`;
        this.binding.add(who);
        try {
          await this.bindLocked(pod, podUid, nodeName, deadline, callerGone);
        } finally {
          this.binding.delete(who);
        }
        // before the lock is let go: a bind of the pod waiting behind this one must find it bound,
        // and the pod cache may not show the binding yet
        this.remember(namespace, name, podUid, nodeName);
      });
      this.refusals?.bound(namespace, name);
      const unknown = unknownReleasePolicyOf(pod);
      if (unknown !== undefined) this.warnUnknownPolicy(pod, unknown);
      return '';
    } catch (err) {
      if (err instanceof WaitingForDeleteError) this.refusals?.refused(namespace, name, podUid);
      if (err instanceof AppLimitError)
        this.refusals?.refusedForApp(err.countPrefix, namespace, name, podUid);
      const message = errorText(err);
      const kind = kindOf(err) ?? 'transient';
      this.failed(namespace, name, nodeName, kind, message);
      const pod = this.world.pods.cached(namespace, name);
      if (pod) {
        this.events.record(
          podObject(pod),
          'Warning',
          EVENT_REASON_OF_KIND[kind],
          `node ${nodeName}: ${message}`,
        );
      }
      return message;
    }
  }

  /**
   * Whether this replica is binding the pod now: its addresses' objects may be written while the pod
   * is not yet on a node (adoption.ts ownHolder).
   */
  isBinding(namespace: string, name: string): boolean {
    return this.binding.has(`${namespace}/${name}`);
  }

  /** The log line of a bind that failed; the caller is answered `message`. */
  private failed(namespace: string, name: string, node: string, kind: ErrorKind, message: string): string {
    this.log.warn({ pod: `${namespace}/${name}`, node, kind, err: message }, 'bind failed');
    return message;
  }

  /**
   * The node this incarnation of the pod is bound to, if it is: the pod cache may not show a binding
   * made a moment ago, so binds this replica made are remembered too (the latest few thousand).
   */
  private boundNodeOf(namespace: string, name: string, uid: string, pod: V1Pod): string | undefined {
    const cached = this.world.pods.cached(namespace, name) ?? pod;
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
    const message = `unknown release policy ${JSON.stringify(value)} in ${RELEASE_POLICY_ANNOTATION}: its addresses are released when the pod is deleted (the default); use "immutable" or "never" to keep them`;
    this.log.warn({ pod: namespacedName(pod), policy: value }, message);
    this.events.record(podObject(pod), 'Warning', 'UnknownReleasePolicy', message);
  }

  private async bindLocked(
    pod: V1Pod,
    uid: string,
    nodeName: string,
    deadline: number,
    callerGone?: () => boolean,
  ): Promise<void> {
    const key = keyOfPod(pod);
    const args = cniArgsOfPod(pod);
    const attrs: Attrs = { policy: policyOfPod(pod), nodeName, podUid: uid };
    const node = this.world.node(nodeName) ?? (await this.world.fetchNode(nodeName));
    // galaxy's words first (its GET's NotFound as client-go words it; its node-subnet reason), as
    // the scheduler's log and any alert on them expect
    if (!node) throw new BindError(`nodes "${nodeName}" not found`, 'validation');
    const facts = this.nodes.subnetOf(node);
    if ('reason' in facts) throw new BindError(`${facts.reason} (node ${nodeName})`, 'validation');
    const undo: Undo[] = [];
    try {
      // the FloatingIP creates leave the binding its least time: past that it would not start
      const timeLeft = () => deadline - this.clock() - BINDING_MIN_MS;
      const addresses = await this.assign(key, args, facts.subnet, attrs, undo, timeLeft);
      const ipinfos = addresses.map((a) => this.ipInfoOf(a));
      const annotation = formatCniArgs({ groups: args.groups, ipinfos });
      // the binding is what the scheduler must never see land after it gave up
      if (callerGone?.()) throw gone(pod, nodeName, 'undone before its binding');
      await this.podBinding.bind(pod, key, uid, nodeName, { [CNI_ARGS_ANNOTATION]: annotation }, deadline);
      this.log.info(
        { pod: namespacedName(pod), key: key.text, node: nodeName, ip: addresses.map((a) => a.ip) },
        'pod bound',
      );
    } catch (err) {
      if (err instanceof BindingOutcomeUnknown) throw err;
      if (err instanceof PodDeletedWhileBinding) {
        this.log.info(
          { pod: namespacedName(pod), key: key.text, node: nodeName, err: err.message },
          'pod deleted while its binding was written: its addresses go by its release policy',
        );
        throw err;
      }
      // nothing half-written: every address goes back where it was
      for (const step of undo.reverse()) {
        try {
          await step();
        } catch (undoErr) {
          const at = { pod: namespacedName(pod), key: key.text, err: errorText(undoErr) };
          // someone else changed the address meanwhile (its object deleted or edited by hand, which
          // memory follows): nothing of this bind's is left there to undo, and nothing is wrong
          if (undoErr instanceof NotAllocatedError || undoErr instanceof OwnerConflictError)
            this.log.warn(at, 'a bind step was undone by someone else meanwhile');
          else this.log.error(at, 'could not undo a bind step');
        }
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
    timeLeft: () => number,
  ): Promise<Allocation[]> {
    const groups = args.groups;
    const reused: (Allocation | undefined)[] =
      groups.length > 0
        ? this.allocator.matchHeld(key.text, groups)
        : heldForNode(this.allocator, usableHeld(this.allocator, key), nodeSubnet);
    const held = reused.filter((a): a is Allocation => a !== undefined);
    for (const a of held) {
      // a same-named pod was re-created before the old one's deletion was seen
      if (a.podUid && a.podUid !== attrs.podUid) throw new WaitingForDeleteError(key.text);
      if (!this.allocator.nodeSubnetsServing(a.ip).includes(nodeSubnet)) {
        throw new BindError(`${a.ip} of ${key.text} cannot be used in node subnet ${nodeSubnet}`, 'conflict');
      }
    }
    const result: (Allocation | undefined)[] = [...reused];
    for (const [i, a] of reused.entries()) {
      if (!a || (a.nodeName === attrs.nodeName && a.podUid === attrs.podUid && a.policy === attrs.policy))
        continue;
      const before: Attrs = { policy: a.policy, nodeName: a.nodeName, podUid: a.podUid };
      result[i] = await this.store.update(
        a.ip,
        { key: key.text, podUid: a.podUid },
        attrs,
        undefined,
        timeLeft,
      );
      undo.push(() => this.store.update(a.ip, { key: key.text, podUid: attrs.podUid }, before));
    }
    // new addresses only under the policy's rules, as filter would have answered
    const mayHaveNew = async () => {
      const waiting = this.apps.readyFor(attrs.policy);
      if (waiting) await waiting;
      checkNewAddresses({
        key,
        groups,
        policy: attrs.policy,
        isScalable: (prefix) => this.apps.isScalable(prefix),
      });
    };
    const releaseMade = (made: readonly Allocation[]) =>
      undo.push(...made.map((a) => () => this.store.release(a.ip, { key: key.text, podUid: attrs.podUid })));
    if (groups.length > 0) {
      const missing = groups.map((_, i) => i).filter((i) => reused[i] === undefined);
      if (missing.length > 0) {
        await mayHaveNew();
        const made = await this.store.allocate(
          { key: key.text, nodeSubnet, attrs, groups: missing.map((i) => groups[i]!) },
          timeLeft,
        );
        releaseMade(made);
        missing.forEach((g, j) => (result[g] = made[j]));
      }
      return result as Allocation[];
    }
    const heldFamilies = new Set(held.map((a) => a.family));
    const families = this.allocator.familiesServing(nodeSubnet).filter((f) => !heldFamilies.has(f));
    if (families.length === 0) return held;
    // a pod holding one family keeps its right to the other, as filter lets it
    if (held.length === 0) await mayHaveNew();
    let made: Allocation[];
    if (sharesAppAddresses(key, attrs.policy)) {
      // the app's limit is read from its Deployment: listed first if nobody has needed it before
      const waiting = this.apps.readyFor(attrs.policy);
      if (waiting) await waiting;
      made = await this.locks.app(key.poolPrefix, () =>
        this.assignInApp(key, nodeSubnet, attrs, families, held.length > 0, undo, timeLeft),
      );
    } else {
      made = await this.store.allocate({ key: key.text, nodeSubnet, attrs, families }, timeLeft);
      releaseMade(made);
    }
    return [...held, ...made].sort((a, b) => a.family - b.family);
  }

  /**
   * Addresses for a pod sharing its app's, under the app's lock: the app's most recently parked
   * address where one serves the node subnet, a new one otherwise, and never more pods holding
   * addresses than the app's limit.
   */
  private async assignInApp(
    key: AllocationKey,
    nodeSubnet: string,
    attrs: Attrs,
    families: readonly Family[],
    holdsSome: boolean,
    undo: Undo[],
    timeLeft: () => number,
  ): Promise<Allocation[]> {
    if (!holdsSome) checkAppLimit(this.allocator, appLimit(key, this.apps.appFacts(key)), key);
    // all or none, as store.allocate chooses: a family with neither a parked nor a free address is
    // refused before another family's address is written (and undone, which a follower reads as
    // the deletion of a pending pod's object)
    for (const family of families) {
      if (this.allocator.chooseParked(key.poolPrefix, nodeSubnet, { family })) continue;
      if (!this.allocator.nodeSubnetsFor([], [family]).has(nodeSubnet))
        throw new NoFreeIPError(key.text, nodeSubnet, `no free IPv${family} address`);
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
        const got = await this.store.unpark(key.poolPrefix, key.text, nodeSubnet, attrs, family, timeLeft);
        undo.push(() =>
          this.store.rekey(got.ip, { key: key.text, podUid: attrs.podUid }, key.poolPrefix, parkedAttrs),
        );
        made.push(got);
      } else {
        const [got] = await this.store.allocate(
          { key: key.text, nodeSubnet, attrs, families: [family] },
          timeLeft,
        );
        undo.push(() => this.store.release(got!.ip, { key: key.text, podUid: attrs.podUid }));
        made.push(got!);
      }
    }
    return made;
  }

  private ipInfoOf(a: Allocation): IPInfo {
    const network = this.allocator.networkOf(a.ip);
    if (!network) throw new BindError(`${a.ip} is outside every configured range`, 'conflict');
    return { ip: `${a.ip}/${network.prefix}`, vlan: network.vlan, gateway: network.gateway };
  }
}

/** A bind whose caller stopped waiting: the scheduler has moved on and will try the pod again. */
const gone = (pod: V1Pod, nodeName: string, what: string) =>
  new BindError(
    `bind of ${namespacedName(pod)} to ${nodeName} ${what}: its caller stopped waiting (the connection closed); the scheduler retries it`,
    'transient',
  );

const podObject = (pod: V1Pod) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  name: pod.metadata?.name ?? '',
  namespace: pod.metadata?.namespace ?? 'default',
  ...(pod.metadata?.uid ? { uid: pod.metadata.uid } : {}),
});
