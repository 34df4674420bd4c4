// The churn's operator (churn.ts runs it beside the workloads and the faults): what operators and
// their tools do while pods are placed, against the leader's REST port and the objects themselves:
// releases through POST /v1/ip of listed addresses (running, terminating, gone and parked ones,
// a pod's while it binds), the churn's Pool resized, deleted and created again through the REST
// API and through its object (below what its pods hold too), a reserved FloatingIP created for the
// address the next bind would take, FloatingIP objects of running pods deleted by hand, and a bad
// ConfigMap edit put right again. Every answer must make sense: never a 5xx but a follower's 503,
// never a release that says 200 and left the address where it was, never a running pod's address
// released. The invariants afterwards are the churn's.
import {
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
} from '@kubernetes/client-node';
import type { ReleaseEntry } from '../../src/fip/release.js';
import { apiServerFailedPoolCall } from './churn-answers.js';
import type { Replicas } from './churn-faults.js';
import { CHURN_POOL, CHURN_POOL_SIZE } from './churn-workloads.js';
import type { FloatipProcess } from './floatip.js';
import type { Group } from './groups.js';
import { inRange, SUITE_CONFIG } from './groups.js';
import {
  CONFIG_NAME,
  CONFIG_NAMESPACE,
  createPool,
  listFloatingIPs,
  writeFloatipConfig,
} from './ipam-state.js';
import { httpCode } from './kube-errors.js';
import { sleep } from './wait.js';

export const OPERATOR_ACTIONS = [
  'release-listed',
  'pool-rest',
  'pool-object',
  'pool-recreate',
  'reserve',
  'delete-object',
  'bad-config',
] as const;
export type OperatorAction = (typeof OPERATOR_ACTIONS)[number];

export interface OperatorFigures {
  actions: Record<OperatorAction, number>;
  /** REST answers by status (`unanswered` when the call failed: a replica killed, a reset). */
  answers: Record<string, number>;
  released: number;
  problems: string[];
}

const FIP = { group: 'galaxy.k8s.io', version: 'v1alpha1', plural: 'floatingips' };
const RESERVED_KEY = 'pool__reserved-for-node_';
const MERGE = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

/** An item of GET /v1/ip, sent back to POST /v1/ip as listed. */
type Listed = ReleaseEntry;
interface OneIp {
  key?: string;
  podUid?: string;
  updateTime?: string;
}

export class Operator {
  readonly figures: OperatorFigures = {
    actions: Object.fromEntries(OPERATOR_ACTIONS.map((a) => [a, 0])) as Record<OperatorAction, number>,
    answers: {},
    released: 0,
    problems: [],
  };
  private readonly core: CoreV1Api;
  private readonly custom: CustomObjectsApi;
  private readonly reserved = new Set<string>();

  constructor(
    kc: KubeConfig,
    private readonly namespace: string,
    private readonly groups: readonly Group[],
    private readonly replicas: Replicas,
    private readonly random: () => number,
  ) {
    this.core = kc.makeApiClient(CoreV1Api);
    this.custom = kc.makeApiClient(CustomObjectsApi);
  }

  /** The actions in turn, `gapMs` apart, until `done` (so that a short run has each of them). */
  async run(done: () => boolean, gapMs: number): Promise<void> {
    for (let i = 0; !done(); i++) {
      const action = OPERATOR_ACTIONS[i % OPERATOR_ACTIONS.length]!;
      try {
        if (await this.act(action)) this.figures.actions[action]++;
      } catch {
        // the API server away (a fault): an operator tries again later
      }
      await sleep(gapMs);
    }
  }

  /** Puts back what the operator changed: the Pool's size, the configuration, no reservation left. */
  async finish(): Promise<void> {
    await writeFloatipConfig(SUITE_CONFIG);
    await this.setPoolObject(CHURN_POOL_SIZE).catch(async (err: unknown) => {
      if (httpCode(err) === 404) await createPool(CHURN_POOL, CHURN_POOL_SIZE);
      else throw err;
    });
    await Promise.all([...this.reserved].map((ip) => this.unreserve(ip)));
  }

  private async act(action: OperatorAction): Promise<boolean> {
    const leader = await this.leader();
    if (!leader) return false;
    switch (action) {
      case 'release-listed':
        return this.releaseListed(leader);
      case 'pool-rest': {
        const size = 2 + Math.floor(this.random() * 7);
        const preAllocateIP = this.random() < 0.3;
        const answer = await this.rest(leader, 'POST', '/v1/pool', { name: CHURN_POOL, size, preAllocateIP });
        if (answer?.status === 200 || answer?.status === 202) {
          const read = await this.rest(leader, 'GET', `/v1/pool/${CHURN_POOL}`);
          const got = (read?.json as { pool?: { size?: number } } | undefined)?.pool?.size;
          if (read?.status === 200 && got !== size && !(await this.sizeChangedSince(size)))
            this.problem(`POST /v1/pool size ${size} answered ${answer.status}, and GET says size ${got}`);
        }
        return true;
      }
      case 'pool-object':
        await this.setPoolObject(Math.floor(this.random() * 9));
        return true;
      case 'pool-recreate': {
        const deleted = await this.rest(leader, 'DELETE', `/v1/pool/${CHURN_POOL}`);
        await sleep(500);
        await this.rest(leader, 'POST', '/v1/pool', { name: CHURN_POOL, size: CHURN_POOL_SIZE });
        return deleted !== undefined;
      }
      case 'reserve':
        return this.reserve();
      case 'delete-object':
        return this.deleteObject();
      case 'bad-config':
        await this.core.patchNamespacedConfigMap(
          {
            name: CONFIG_NAME,
            namespace: CONFIG_NAMESPACE,
            body: { data: { floatingips: '[{"nodeSubnets": ' } },
          },
          MERGE,
        );
        await sleep(1500);
        await writeFloatipConfig(SUITE_CONFIG);
        return true;
    }
  }

  /** Some listed addresses of the namespace sent back to POST /v1/ip as listed, and the answer checked. */
  private async releaseListed(leader: FloatipProcess): Promise<boolean> {
    const list = await this.rest(leader, 'GET', `/v1/ip?namespace=${this.namespace}&size=9999`);
    const content = (list?.json as { content?: Listed[] } | undefined)?.content ?? [];
    if (content.length === 0) return list !== undefined;
    const picked = [...content].sort(() => this.random() - 0.5).slice(0, 1 + Math.floor(this.random() * 3));
    const before = new Map<string, OneIp>();
    for (const item of picked) {
      const one = await this.rest(leader, 'GET', `/v1/ip/${item.ip}`);
      if (one?.status === 200) before.set(item.ip, one.json as OneIp);
    }
    const answer = await this.rest(leader, 'POST', '/v1/ip', { ips: picked });
    if (!answer) return false;
    const body = answer.json as { unreleased?: string[]; reasons?: string[] } | undefined;
    if (answer.status === 202 && (body?.reasons?.length ?? -1) !== (body?.unreleased?.length ?? -2))
      this.problem(`POST /v1/ip answered 202 without a reason for each unreleased address: ${answer.text}`);
    if (answer.status !== 200 && answer.status !== 202) return true;
    const unreleased = new Set(body?.unreleased ?? []);
    for (const item of picked) {
      if (unreleased.has(item.ip)) continue;
      this.figures.released++;
      const was = before.get(item.ip);
      if (!was?.key) continue;
      const now = (await this.rest(leader, 'GET', `/v1/ip/${item.ip}`))?.json as OneIp | undefined;
      if (now && now.key === was.key && now.podUid === was.podUid && now.updateTime === was.updateTime)
        this.problem(`POST /v1/ip said ${item.ip} was released, and it is still held by ${was.key}`);
      if (was.podUid && item.namespace && item.podName) {
        const pod = await this.core
          .readNamespacedPod({ namespace: item.namespace, name: item.podName })
          .catch(() => undefined);
        if (pod?.metadata?.uid === was.podUid && !pod.metadata.deletionTimestamp)
          this.problem(
            `POST /v1/ip released ${item.ip} of pod ${item.namespace}/${item.podName} (uid ${was.podUid}), which still exists`,
          );
      }
    }
    return true;
  }

  /** Whether the Pool's size is another than `size` now (another action changed it meanwhile). */
  private async sizeChangedSince(size: number): Promise<boolean> {
    const pool = (await this.custom
      .getNamespacedCustomObject({ ...FIP, plural: 'pools', namespace: CONFIG_NAMESPACE, name: CHURN_POOL })
      .catch(() => undefined)) as { size?: number } | undefined;
    return pool?.size !== size;
  }

  private setPoolObject(size: number): Promise<unknown> {
    return this.custom.patchNamespacedCustomObject(
      { ...FIP, plural: 'pools', namespace: CONFIG_NAMESPACE, name: CHURN_POOL, body: { size } },
      MERGE,
    );
  }

  /** A reserved FloatingIP for the lowest address no object holds: the one the next bind would take. */
  private async reserve(): Promise<boolean> {
    const held = new Set((await listFloatingIPs()).map((o) => o.name));
    const range = this.groups[Math.floor(this.random() * this.groups.length)]!.entries[0]!.ips[0]!;
    const [lo] = range.split('~') as [string];
    const base = lo.slice(0, lo.lastIndexOf('.') + 1);
    let ip: string | undefined;
    for (let last = Number(lo.slice(lo.lastIndexOf('.') + 1)); last < 255 && !ip; last++)
      if (inRange(range, `${base}${last}`) && !held.has(`${base}${last}`)) ip = `${base}${last}`;
    if (!ip) return false;
    try {
      await this.custom.createClusterCustomObject({
        ...FIP,
        body: {
          apiVersion: 'galaxy.k8s.io/v1alpha1',
          kind: 'FloatingIP',
          metadata: { name: ip, labels: { reserved: 'churn-operator' } },
          spec: { key: RESERVED_KEY, policy: 2, attribute: '', updateTime: '2020-01-01T00:00:00Z' },
        },
      });
    } catch (err) {
      if (httpCode(err) === 409) return true; // a pod was given it first
      throw err;
    }
    this.reserved.add(ip);
    const hold = ip;
    void sleep(3000 + this.random() * 5000).then(() => this.unreserve(hold).catch(() => undefined));
    return true;
  }

  /** The reservation is still the operator's (floatip never took it over), then deleted. */
  private async unreserve(ip: string): Promise<void> {
    const o = (await this.custom.getClusterCustomObject({ ...FIP, name: ip }).catch(() => undefined)) as
      { metadata?: { labels?: Record<string, string> }; spec?: { key?: string } } | undefined;
    if (o && (o.spec?.key !== RESERVED_KEY || o.metadata?.labels?.reserved !== 'churn-operator'))
      this.problem(`reserved FloatingIP ${ip} was changed to key ${o.spec?.key}`);
    try {
      await this.custom.deleteClusterCustomObject({ ...FIP, name: ip });
    } catch (err) {
      if (httpCode(err) !== 404) throw err;
    }
    this.reserved.delete(ip);
  }

  /**
   * `kubectl delete floatingip` of an address a running pod holds or one kept or parked for no pod,
   * mostly the lowest one: the address the next bind in its subnet takes once it is free. A running
   * pod's, deleted while a replica's watches are silent, once reached a second pod through that
   * replica taking the Lease (README, "High availability": a new leader catches up first).
   */
  private async deleteObject(): Promise<boolean> {
    const last = (ip: string) => Number(ip.slice(ip.lastIndexOf('.') + 1));
    const objects = (await listFloatingIPs())
      .filter((o) => o.key.includes(`_${this.namespace}_`))
      .sort((a, b) => last(a.name) - last(b.name));
    const o = this.random() < 0.7 ? objects[0] : objects[Math.floor(this.random() * objects.length)];
    if (!o) return false;
    try {
      await this.custom.deleteClusterCustomObject({ ...FIP, name: o.name });
    } catch (err) {
      if (httpCode(err) !== 404) throw err;
    }
    return true;
  }

  /**
   * The replica that leads, as its own /metrics says (`floatip_leader 1`): every replica is ready
   * (a follower forwards the scheduler's calls), and a follower refuses changes with 503.
   */
  private async leader(): Promise<FloatipProcess | undefined> {
    for (const p of this.replicas.all) {
      if (!p.running || p.apiPort === undefined) continue;
      const text = await fetch(`http://127.0.0.1:${p.apiPort}/metrics`, { signal: AbortSignal.timeout(5000) })
        .then((r) => r.text())
        .catch(() => '');
      if (/^floatip_leader 1$/m.test(text)) return p;
    }
    return undefined;
  }

  private async rest(
    leader: FloatipProcess,
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; json: unknown; text: string } | undefined> {
    let res: Response;
    let text: string;
    try {
      res = await fetch(`http://127.0.0.1:${leader.apiPort}${path}`, {
        method,
        ...(body === undefined
          ? {}
          : { headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(30_000),
      });
      text = await res.text();
    } catch {
      // a replica killed or the connection reset by a fault: no answer to judge
      this.count('unanswered');
      return undefined;
    }
    this.count(String(res.status));
    const sensible =
      res.status < 500 ||
      // a follower, a leader still reading the cluster since it took the Lease, or one that lost
      // the Lease while answering (its write refused before it reached the API server)
      (res.status === 503 &&
        /does not lead|decides once it has read the cluster again|not the leader of Lease/.test(text)) ||
      apiServerFailedPoolCall(res.status, path, text);
    if (!sensible || res.status === 400 || res.status === 405 || res.status === 415)
      this.problem(`${method} ${path} answered ${res.status}: ${text.slice(0, 300)}`);
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: res.status, json, text };
  }

  private count(what: string): void {
    this.figures.answers[what] = (this.figures.answers[what] ?? 0) + 1;
  }

  private problem(text: string): void {
    if (this.figures.problems.length < 50) this.figures.problems.push(`operator: ${text}`);
  }
}
