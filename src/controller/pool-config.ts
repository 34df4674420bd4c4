// Where the floating-IP configuration comes from: a static list in galaxy's JSON config file, or the
// `floatingip-config` ConfigMap, watched (galaxy polls it every minute). A valid change reconfigures
// the allocator at once; an invalid one is refused with an Event on the ConfigMap and a log line
// naming every problem, and the previous configuration stays in force, if there is one. Until a
// valid configuration is in force floatip is not ready (galaxy does not even listen until then):
// `notReadyBecause` says why, for /readyz.
import { CoreV1Api, type KubeConfig, type V1ConfigMap } from '@kubernetes/client-node';
import type { GalaxyConfig } from '../config/galaxy-config.js';
import {
  type Allocator,
  type ConfigProblem,
  InvalidConfigError,
  type PoolConfig,
  parsePoolConfig,
} from '../ipam/index.js';
import type { EventRecorder, InvolvedObject } from '../kube/events.js';
import { Reflector } from '../kube/reflector.js';
import type { Logger } from '../log.js';
import { apiClient } from '../kube/resend.js';

export type ConfigListener = (config: PoolConfig) => void;

/** A ConfigMap's verdict: its configuration, or the problem the watcher's Event and the webhook name. */
export type ConfigMapJudgement =
  | { readonly ok: true; readonly text: string; readonly config: PoolConfig }
  | { readonly ok: false; readonly problem: string; readonly problems?: readonly ConfigProblem[] };

/**
 * The one judgement of a `floatingip-config` ConfigMap, shared by the watcher (which refuses with
 * an Event) and the admission webhook (which refuses the write): the same rules, the same words.
 */
export function judgeConfigMap(settings: GalaxyConfig, cm: Pick<V1ConfigMap, 'data'>): ConfigMapJudgement {
  const { configMapName: name, configMapNamespace: namespace, floatingipKey: key } = settings;
  const text = cm.data?.[key];
  if (typeof text !== 'string')
    return { ok: false, problem: `configmap ${name}_${namespace} doesn't have a key ${key}` };
  try {
    return { ok: true, text, config: parsePoolConfig(text) };
  } catch (err) {
    if (!(err instanceof InvalidConfigError)) throw err;
    return { ok: false, problem: err.message, problems: err.problems };
  }
}

/** How many addresses an Event names before it says "and N more". */
const NAMED = 20;

export class PoolConfigSource {
  private readonly listeners: ConfigListener[] = [];
  private reflector: Reflector<V1ConfigMap> | undefined;
  /** The ConfigMap text in force ('static' for the file's list); undefined while there is none. */
  private lastApplied: string | undefined;
  /** Why no configuration is in force yet. */
  private missing = 'the floating IP configuration has not been read yet';
  /** Why the ConfigMap's latest version was refused; undefined when it is the one in force. */
  private refusedBecause: string | undefined;

  constructor(
    private readonly settings: GalaxyConfig,
    private readonly allocator: Allocator,
    private readonly log: Logger,
    private readonly events: EventRecorder,
  ) {}

  /** Called after every configuration applied (node-subnet caches depend on it). */
  onChange(listener: ConfigListener): void {
    this.listeners.push(listener);
  }

  /** Whether a configuration is in force. */
  get configured(): boolean {
    return this.lastApplied !== undefined;
  }

  /** Why floatip cannot serve yet for want of a configuration; undefined once one is in force. */
  get notReadyBecause(): string | undefined {
    return this.configured ? undefined : this.missing;
  }

  /** Whether the ConfigMap's latest version was refused (the last valid one, if any, stays in force). */
  get refused(): boolean {
    return this.refusedBecause !== undefined;
  }

  private get where(): string {
    return `${this.settings.configMapNamespace}/${this.settings.configMapName}`;
  }

  /** Applies the static list, or starts following the ConfigMap (resolves once it was first read). */
  async start(kubeConfig: KubeConfig): Promise<void> {
    if (this.settings.floatingips) {
      this.apply(this.settings.floatingips, 'the static floatingips list of the config file');
      this.lastApplied = 'static';
      return;
    }
    const { configMapName: name, configMapNamespace: namespace } = this.settings;
    const api = apiClient(kubeConfig, CoreV1Api);
    const fieldSelector = `metadata.name=${name}`;
    this.reflector = new Reflector<V1ConfigMap>({
      name: `configmap ${this.where}`,
      path: `/api/v1/namespaces/${namespace}/configmaps`,
      list: (page) => api.listNamespacedConfigMap({ namespace, fieldSelector, ...page }),
      watchQuery: { fieldSelector },
      kubeConfig,
      log: this.log,
    })
      .on('add', (cm) => this.onConfigMap(cm))
      .on('update', (cm) => this.onConfigMap(cm))
      .on('delete', () =>
        this.log.warn(
          { configMap: this.where },
          this.configured
            ? 'floating IP ConfigMap deleted; the last valid configuration stays in force'
            : 'floating IP ConfigMap deleted; no configuration is in force, so floatip is not ready',
        ),
      );
    await this.reflector.start();
    if (this.reflector.list().length === 0) {
      this.missing = `failed to get floatingip configmap ${name}_${namespace}: not found`;
      const message = `${this.missing}; floatip is not ready until it is created`;
      this.log.warn({ configMap: this.where }, message);
      this.events.record(this.involved(), 'Warning', 'FloatingIPConfigMissing', message);
    }
  }

  stop(): Promise<void> {
    return this.reflector?.stop() ?? Promise.resolve();
  }

  /** The configuration as the API server's ConfigMap has it now (Reflector.catchUp). */
  catchUp(): Promise<void> {
    return this.reflector?.catchUp() ?? Promise.resolve();
  }

  private involved(uid?: string): InvolvedObject {
    return {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      name: this.settings.configMapName,
      namespace: this.settings.configMapNamespace,
      ...(uid ? { uid } : {}),
    };
  }

  /** What happens to an invalid configuration, truthfully: the last valid one stays, or there is none. */
  private refuse(cm: V1ConfigMap, problem: string, details: Record<string, unknown> = {}): void {
    const consequence = this.configured
      ? 'the last valid configuration stays in force'
      : 'no configuration is in force, so floatip is not ready';
    if (!this.configured) this.missing = `ConfigMap ${this.where} is invalid: ${problem}`;
    const message = `${problem}; ${consequence}`;
    this.log.error({ configMap: this.where, ...details }, message);
    this.events.record(this.involved(cm.metadata?.uid), 'Warning', 'InvalidFloatingIPConfig', message);
  }

  private onConfigMap(cm: V1ConfigMap): void {
    const judged = judgeConfigMap(this.settings, cm);
    if (!judged.ok) {
      this.refusedBecause = judged.problem;
      // the problems the message names, and how many there are (the log line stays bounded)
      const { problems } = judged;
      this.refuse(
        cm,
        judged.problem,
        problems ? { problems: problems.slice(0, NAMED), count: problems.length } : {},
      );
      return;
    }
    this.refusedBecause = undefined;
    const { text, config } = judged;
    if (text === this.lastApplied) return;
    const orphaned = this.apply(config, `ConfigMap ${this.where}`);
    this.lastApplied = text;
    const excluded = this.excludedCount();
    const involved = this.involved(cm.metadata?.uid);
    this.events.record(
      involved,
      'Normal',
      'FloatingIPConfigApplied',
      `${config.entries.length} entries applied${excluded ? `; ${excluded} addresses of the ranges are never handed out (network, broadcast and gateway addresses)` : ''}${orphaned.length ? `; ${orphaned.length} allocations are now outside the configuration and kept` : ''}`,
    );
    if (orphaned.length > 0) {
      const named = orphaned.slice(0, NAMED).join(', ');
      const more = orphaned.length > NAMED ? ` and ${orphaned.length - NAMED} more` : '';
      this.events.record(
        involved,
        'Warning',
        'OrphanedFloatingIPs',
        `kept, outside every configured range: ${named}${more}; they are used by their keys until released`,
      );
    }
    this.reportExcludedInUse();
  }

  /**
   * Warns about allocations of addresses no pod should get (a network, broadcast or gateway address
   * that galaxy handed out): kept for their keys, never handed out again once released. Called after
   * every configuration applied and once the FloatingIP objects have been restored.
   */
  reportExcludedInUse(): void {
    const held = this.allocator.excludedInUse();
    if (held.length === 0) return;
    const list = held
      .slice(0, NAMED)
      .map(
        ({ allocation, entry, why }) =>
          `${allocation.ip} (the ${why} of floatingips[${entry}]) held by ${allocation.key}`,
      );
    const more = held.length > NAMED ? ` and ${held.length - NAMED} more` : '';
    const message = `kept, but never handed out again once released: ${list.join(', ')}${more}`;
    this.log.warn(
      { addresses: held.map((h) => h.allocation.ip) },
      `allocations of addresses no pod should get: ${message}`,
    );
    // a static list has no object to file the Event on
    if (!this.settings.floatingips)
      this.events.record(this.involved(), 'Warning', 'UnusableFloatingIPsInUse', message);
  }

  private excludedCount(): number {
    return this.allocator.stats().reduce((n, s) => n + s.excluded, 0);
  }

  /** Reconfigures the allocator; returns the addresses now outside the configuration. */
  private apply(config: PoolConfig, source: string): string[] {
    const report = this.allocator.reconfigure(config);
    const orphaned = report.orphaned.map((a) => a.ip);
    this.log.info(
      { source, entries: config.entries.length, excluded: this.excludedCount(), orphaned: orphaned.length },
      'floating IP configuration applied',
    );
    for (const a of report.orphaned) {
      this.log.warn({ ip: a.ip, key: a.key }, 'allocation outside the configuration; kept');
    }
    for (const listener of this.listeners) listener(config);
    return orphaned;
  }
}
