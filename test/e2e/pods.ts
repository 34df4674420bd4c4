// Reading pods and waiting for them, for scenarios: bounded waits whose timeout says what the pods
// looked like.
import { AppsV1Api, CoreV1Api, type CoreV1Event, type KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { clusterKubeConfig } from './cluster.js';
import { CNI_ARGS_ANNOTATION } from './fake-kubelet.js';
import { httpCode } from './kube-errors.js';
import { waitFor } from './wait.js';

export class Pods {
  readonly core: CoreV1Api;
  readonly apps: AppsV1Api;

  constructor(
    readonly namespace: string,
    readonly kc: KubeConfig = clusterKubeConfig(),
  ) {
    this.core = kc.makeApiClient(CoreV1Api);
    this.apps = kc.makeApiClient(AppsV1Api);
  }

  async list(labelSelector?: string): Promise<V1Pod[]> {
    return (
      await this.core.listNamespacedPod({
        namespace: this.namespace,
        ...(labelSelector ? { labelSelector } : {}),
      })
    ).items;
  }

  /**
   * Waits for exactly `n` active pods (not being deleted, not finished) of the selector, all Running,
   * Ready and carrying floatip's annotation, and for no other pod of the selector (a Terminating
   * one included) to remain; returns them sorted by name.
   */
  async running(selector: string, n: number, timeoutMs = 60_000): Promise<V1Pod[]> {
    let last: V1Pod[] = [];
    return waitFor(
      `${n} running pods of ${selector} in ${this.namespace}, with their IPs`,
      async () => {
        last = await this.list(selector);
        const ok = last.filter(
          (p) => !p.metadata?.deletionTimestamp && isRunningReady(p) && hasAnnotation(p) && !finished(p),
        );
        if (ok.length !== n || last.some((p) => !ok.includes(p) && !finished(p))) return undefined;
        return ok.sort((a, b) => (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''));
      },
      { timeoutMs, intervalMs: 200, describe: () => summary(last) },
    );
  }

  /** Waits until no pod of the selector is left (finished ones aside unless `all`). */
  async gone(selector: string, timeoutMs = 60_000): Promise<void> {
    let last: V1Pod[] = [];
    await waitFor(
      `the pods of ${selector} in ${this.namespace} to be gone`,
      async () => {
        last = await this.list(selector);
        return last.length === 0 ? true : undefined;
      },
      { timeoutMs, intervalMs: 200, describe: () => summary(last) },
    );
  }

  async podGone(name: string, timeoutMs = 30_000): Promise<void> {
    await waitFor(
      `pod ${this.namespace}/${name} to be gone`,
      async () => {
        try {
          await this.core.readNamespacedPod({ name, namespace: this.namespace });
          return undefined;
        } catch (err) {
          if (httpCode(err) === 404) return true;
          throw err;
        }
      },
      { timeoutMs },
    );
  }

  /** Events about one pod, oldest first. */
  async events(name: string): Promise<CoreV1Event[]> {
    const list = await this.core.listNamespacedEvent({
      namespace: this.namespace,
      fieldSelector: `involvedObject.kind=Pod,involvedObject.name=${name}`,
    });
    return list.items.sort(
      (a, b) =>
        new Date(a.lastTimestamp ?? a.eventTime ?? 0).getTime() -
        new Date(b.lastTimestamp ?? b.eventTime ?? 0).getTime(),
    );
  }
}

export function isRunningReady(p: V1Pod): boolean {
  return (
    p.status?.phase === 'Running' &&
    (p.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True')
  );
}

export function hasAnnotation(p: V1Pod): boolean {
  return p.metadata?.annotations?.[CNI_ARGS_ANNOTATION] !== undefined;
}

function finished(p: V1Pod): boolean {
  return p.status?.phase === 'Failed' || p.status?.phase === 'Succeeded';
}

export function summary(list: readonly V1Pod[]): string {
  return (
    list
      .map((p) => {
        const raw = p.metadata?.annotations?.[CNI_ARGS_ANNOTATION];
        const ips = raw ? /"ip":"([^"]+)"/g.exec(raw)?.[1] : undefined;
        return (
          `${p.metadata?.name}@${p.spec?.nodeName ?? '-'}:${p.status?.phase}` +
          `${p.metadata?.deletionTimestamp ? '(deleting)' : ''}${ips ? `[${ips}]` : ''}`
        );
      })
      .join(', ') || 'no pods'
  );
}
