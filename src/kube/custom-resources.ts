// One custom resource (FloatingIP, Pool): list in pages (reflector.ts watches) and get over
// @kubernetes/client-node; create, merge-patch and delete, which floatip makes per pod, through
// the lean client (lean-client.ts). Failures become KubeApiError, which says what
// happened in Kubernetes' terms (status code and reason) so callers can tell a conflict from an
// outage.
import { CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';

import { withinMs } from './call-signal.js';
import { LeanClient } from './lean-client.js';
import { kubeError } from './api-error.js';
import { checkPathSegment } from './path-segment.js';
import type { ListResult, ReflectorOptions } from './reflector.js';
import { apiClient } from './resend.js';

/** Whether a list's `items` is what the API server sends: an array of objects. */
export const isObjectArray = (items: unknown): items is object[] =>
  Array.isArray(items) && items.every((i) => typeof i === 'object' && i !== null && !Array.isArray(i));

export { KubeApiError, isAlreadyExists, isConflict, isNotFound, kubeError } from './api-error.js';

export interface ResourceRef {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  /** Absent for cluster-scoped resources. */
  readonly namespace?: string;
}

export interface ListPage {
  readonly items: unknown[];
  readonly continue?: string;
  readonly resourceVersion: string;
}

export class CustomResourceClient {
  private readonly api: CustomObjectsApi;
  private readonly writer: LeanClient;

  constructor(
    kubeConfig: KubeConfig,
    readonly ref: ResourceRef,
  ) {
    this.api = apiClient(kubeConfig, CustomObjectsApi);
    this.writer = new LeanClient(kubeConfig);
  }

  get path(): string {
    const { group, version, plural, namespace } = this.ref;
    return namespace
      ? `/apis/${group}/${version}/namespaces/${namespace}/${plural}`
      : `/apis/${group}/${version}/${plural}`;
  }

  private describe(name?: string): string {
    return `${this.ref.plural}.${this.ref.group}${name ? ` "${name}"` : ''}`;
  }

  async list(limit: number, continueToken?: string): Promise<ListPage> {
    const { group, version, plural, namespace } = this.ref;
    try {
      const page = { group, version, plural, limit, ...(continueToken ? { _continue: continueToken } : {}) };
      const list = (
        namespace
          ? await this.api.listNamespacedCustomObject({ ...page, namespace })
          : await this.api.listClusterCustomObject(page)
      ) as {
        items?: unknown[];
        metadata?: { continue?: string; resourceVersion?: string };
      };
      // an answer that is no list (a proxy's or a broken server's) must not read as an empty one,
      // nor a string as its characters
      if (list.items != null && !isObjectArray(list.items))
        throw new Error(
          `the answer is not a list of objects (items: ${JSON.stringify(list.items)?.slice(0, 80)})`,
        );
      return {
        items: list.items ?? [],
        ...(list.metadata?.continue ? { continue: list.metadata.continue } : {}),
        resourceVersion: list.metadata?.resourceVersion ?? '',
      };
    } catch (err) {
      throw kubeError(err, `list ${this.describe()}`);
    }
  }

  /** One page as a Reflector lists (its `list` option): the objects typed as the caller follows them. */
  async reflectorPage<T>({
    limit,
    _continue,
  }: Parameters<ReflectorOptions<T>['list']>[0]): Promise<ListResult<T>> {
    const page = await this.list(limit, _continue);
    return {
      items: page.items as T[],
      metadata: {
        resourceVersion: page.resourceVersion,
        ...(page.continue ? { continue: page.continue } : {}),
      },
    };
  }

  /** Every object, page by page, and the resourceVersion to watch from. */
  async listAll(pageSize = 5000): Promise<{ items: unknown[]; resourceVersion: string }> {
    const items: unknown[] = [];
    let token: string | undefined;
    let resourceVersion = '';
    do {
      const page = await this.list(pageSize, token);
      for (const item of page.items) items.push(item);
      // a server that hands back the token it was sent would be asked for the same page forever
      if (page.continue && page.continue === token)
        throw kubeError(
          new Error(`the API server sent the same continue token again (${page.continue})`),
          `list ${this.describe()}`,
        );
      token = page.continue;
      // a paged list is a snapshot at the first page's version
      if (!resourceVersion) resourceVersion = page.resourceVersion;
    } while (token);
    return { items, resourceVersion };
  }

  /** The object, or undefined when there is none; answered within `timeoutMs` when given. */
  async get(name: string, timeoutMs?: number): Promise<unknown> {
    checkPathSegment(name, `get ${this.describe()}`);
    const { group, version, plural, namespace } = this.ref;
    const options = withinMs(timeoutMs);
    try {
      return namespace
        ? await this.api.getNamespacedCustomObject({ group, version, plural, namespace, name }, options)
        : await this.api.getClusterCustomObject({ group, version, plural, name }, options);
    } catch (err) {
      const e = kubeError(err, `get ${this.describe(name)}`);
      if (e.status === 404) return undefined;
      throw e;
    }
  }

  /** The object's scale subresource (autoscaling/v1 Scale), or undefined when there is none. */
  async getScale(name: string): Promise<{ spec?: { replicas?: number } } | undefined> {
    checkPathSegment(name, `get the scale of ${this.describe()}`);
    const { group, version, plural, namespace } = this.ref;
    try {
      return (
        namespace
          ? await this.api.getNamespacedCustomObjectScale({ group, version, plural, namespace, name })
          : await this.api.getClusterCustomObjectScale({ group, version, plural, name })
      ) as { spec?: { replicas?: number } };
    } catch (err) {
      const e = kubeError(err, `get the scale of ${this.describe(name)}`);
      if (e.status === 404) return undefined;
      throw e;
    }
  }

  /**
   * Creates the object, answered within
   * `timeoutMs`; a 429 is sent again within it only while `mayResend` does not throw.
   */
  async create(body: object, timeoutMs?: number, mayResend?: () => void): Promise<unknown> {
    const name = (body as { metadata?: { name?: string } }).metadata?.name;
    return this.writer.post(this.path, body, `create ${this.describe(name)}`, timeoutMs, mayResend);
  }

  /**
   * A JSON merge patch; a `metadata.resourceVersion` in it makes it conditional. Answered within
   * `timeoutMs` when given; a 429 is sent again only while `mayResend` does not throw.
   */
  async patch(name: string, body: object, mayResend?: () => void, timeoutMs?: number): Promise<unknown> {
    checkPathSegment(name, `patch ${this.describe()}`);
    const what = `patch ${this.describe(name)}`;
    return this.writer.write('MERGE-PATCH', this.pathOf(name), body, what, timeoutMs, mayResend);
  }

  /**
   * Deletes, only if the object is still at `resourceVersion` when one is given; answered within
   * `timeoutMs` when given; a 429 sent again only while `mayResend` does not throw.
   */
  async delete(
    name: string,
    resourceVersion?: string,
    timeoutMs?: number,
    mayResend?: () => void,
  ): Promise<void> {
    checkPathSegment(name, `delete ${this.describe()}`);
    const what = `delete ${this.describe(name)}`;
    const body = resourceVersion ? { preconditions: { resourceVersion } } : {};
    await this.writer.write('DELETE', this.pathOf(name), body, what, timeoutMs, mayResend);
  }

  private pathOf(name: string): string {
    return `${this.path}/${encodeURIComponent(name)}`;
  }
}
