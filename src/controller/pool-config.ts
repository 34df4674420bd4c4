// Where the floating-IP configuration comes from (spec §1.2, §2.1): a static list in galaxy's JSON
// config file, or the `floatingip-config` ConfigMap, watched (galaxy polls it every minute). A
// valid change reconfigures the allocator at once; an invalid one is refused with an Event on the
// ConfigMap and a log line naming the error, and the previous configuration stays in force.
import { CoreV1Api, type KubeConfig, type V1ConfigMap } from '@kubernetes/client-node';
import type { GalaxyConfig } from '../config/galaxy-config.js';
import { type Allocator, InvalidConfigError, type PoolConfig, parsePoolConfig } from '../ipam/index.js';
import type { EventRecorder, InvolvedObject } from '../kube/events.js';
import { Reflector } from '../kube/reflector.js';
import type { Logger } from '../log.js';

export type ConfigListener = (config: PoolConfig) => void;

/** How many orphaned addresses an Event names before it says "and N more". */
const ORPHANS_NAMED = 20;

export class PoolConfigSource {
  private readonly listeners: ConfigListener[] = [];
  private reflector: Reflector<V1ConfigMap> | undefined;
  private lastApplied: string | undefined;

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

  /** Applies the static list, or starts following the ConfigMap (resolves once it was first read). */
  async start(kubeConfig: KubeConfig): Promise<void> {
    if (this.settings.floatingips) {
      this.apply(this.settings.floatingips, 'the static floatingips list of the config file');
      this.lastApplied = 'static';
      return;
    }
    const { configMapName: name, configMapNamespace: namespace } = this.settings;
    const api = kubeConfig.makeApiClient(CoreV1Api);
    const fieldSelector = `metadata.name=${name}`;
    this.reflector = new Reflector<V1ConfigMap>({
      name: `configmap ${namespace}/${name}`,
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
          { configMap: `${namespace}/${name}` },
          'floating IP ConfigMap deleted; the last configuration stays in force',
        ),
      );
    await this.reflector.start();
    if (!this.configured) {
      this.log.warn(
        { configMap: `${namespace}/${name}` },
        `failed to get floatingip configmap ${name}_${namespace}: not found; waiting for it`,
      );
    }
  }

  stop(): Promise<void> {
    return this.reflector?.stop() ?? Promise.resolve();
  }

  private onConfigMap(cm: V1ConfigMap): void {
    const { configMapName: name, configMapNamespace: namespace, floatingipKey: key } = this.settings;
    const involved: InvolvedObject = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      name,
      namespace,
      ...(cm.metadata?.uid ? { uid: cm.metadata.uid } : {}),
    };
    const text = cm.data?.[key];
    if (text === undefined) {
      const message = `configmap ${name}_${namespace} doesn't have a key ${key}; the last configuration stays in force`;
      this.log.error({ configMap: `${namespace}/${name}` }, message);
      this.events.record(involved, 'Warning', 'InvalidFloatingIPConfig', message);
      return;
    }
    if (text === this.lastApplied) return;
    let config: PoolConfig;
    try {
      config = parsePoolConfig(text);
    } catch (err) {
      if (!(err instanceof InvalidConfigError)) throw err;
      const message = `${err.message}; the last configuration stays in force`;
      this.log.error({ configMap: `${namespace}/${name}`, problems: err.problems }, message);
      this.events.record(involved, 'Warning', 'InvalidFloatingIPConfig', message);
      return;
    }
    const orphaned = this.apply(config, `ConfigMap ${namespace}/${name}`);
    this.lastApplied = text;
    this.events.record(
      involved,
      'Normal',
      'FloatingIPConfigApplied',
      `${config.entries.length} entries applied${orphaned.length ? `; ${orphaned.length} allocations are now outside the configuration and kept` : ''}`,
    );
    if (orphaned.length > 0) {
      const named = orphaned.slice(0, ORPHANS_NAMED).join(', ');
      const more = orphaned.length > ORPHANS_NAMED ? ` and ${orphaned.length - ORPHANS_NAMED} more` : '';
      this.events.record(
        involved,
        'Warning',
        'OrphanedFloatingIPs',
        `kept, outside every configured range: ${named}${more}; they are used by their keys until released`,
      );
    }
  }

  /** Reconfigures the allocator; returns the addresses now outside the configuration. */
  private apply(config: PoolConfig, source: string): string[] {
    const report = this.allocator.reconfigure(config);
    const orphaned = report.orphaned.map((a) => a.ip);
    this.log.info(
      { source, entries: config.entries.length, orphaned: orphaned.length },
      'floating IP configuration applied',
    );
    for (const a of report.orphaned) {
      this.log.warn({ ip: a.ip, key: a.key }, 'allocation outside the configuration; kept');
    }
    for (const listener of this.listeners) listener(config);
    return orphaned;
  }
}
