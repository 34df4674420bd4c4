// One custom resource (FloatingIP, Pool) over @kubernetes/client-node: list in pages, watch,
// get, create, merge-patch, delete. Failures become KubeApiError, which says what happened in
// Kubernetes' terms (status code and reason) so callers can tell a conflict from an outage.
import {
  ApiException,
  CustomObjectsApi,
  type KubeConfig,
  PatchStrategy,
  Watch,
  setHeaderOptions,
} from '@kubernetes/client-node';

export interface ResourceRef {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  /** Absent for cluster-scoped resources. */
  readonly namespace?: string;
}

export class KubeApiError extends Error {
  constructor(
    /** HTTP status; 0 when the server was not reached. */
    readonly status: number,
    /** Kubernetes' reason (NotFound, Conflict, AlreadyExists, Gone, ...); "" when unknown. */
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }

  /**
   * What to do about it (the kinds of src/ipam/errors.ts, which this room may not import): a changed
   * or vanished object means deciding again; a refused request is the caller's mistake; no access
   * means this replica cannot act; anything else (unreachable, 429, 5xx) is retried.
   */
  get kind(): 'validation' | 'conflict' | 'unavailable' | 'transient' {
    if (this.status === 404 || this.status === 409 || this.status === 410) return 'conflict';
    if (this.status === 400 || this.status === 422) return 'validation';
    if (this.status === 401 || this.status === 403) return 'unavailable';
    return 'transient';
  }
  override get name(): string {
    return 'KubeApiError';
  }
}

export const isNotFound = (err: unknown): boolean => err instanceof KubeApiError && err.status === 404;
export const isConflict = (err: unknown): boolean => err instanceof KubeApiError && err.status === 409;
export const isAlreadyExists = (err: unknown): boolean =>
  err instanceof KubeApiError && err.status === 409 && err.reason === 'AlreadyExists';

/** Translates whatever client-node threw into a KubeApiError. */
export function kubeError(err: unknown, what: string): KubeApiError {
  if (err instanceof KubeApiError) return err;
  if (err instanceof ApiException) {
    let body: unknown = err.body;
    if (typeof body === 'string') {
      try {
        body = JSON.parse(body);
      } catch {
        // a non-JSON body: keep the text
      }
    }
    const status = body as { reason?: string; message?: string } | undefined;
    const message = typeof status === 'object' && status?.message ? status.message : String(err.body);
    return new KubeApiError(err.code, status?.reason ?? '', `${what}: ${message}`);
  }
  return new KubeApiError(0, '', `${what}: ${(err as Error)?.message ?? String(err)}`);
}

/**
 * client-go's IsValidPathSegmentName, which client-node lacks: a name becomes a segment of the
 * request's path, and `.`, `..`, or one with `/` or `%` names another path once the URL is
 * normalised (`pools/.` is the collection: a DELETE of it deletes every Pool).
 */
function checkName(name: string, what: string): void {
  if (name === '' || name === '.' || name === '..' || /[/%]/.test(name)) {
    throw new KubeApiError(
      400,
      'BadRequest',
      `${what}: invalid resource name ${JSON.stringify(name)}: may not be empty, '.' or '..', nor contain '/' or '%'`,
    );
  }
}

export interface ListPage {
  readonly items: unknown[];
  readonly continue?: string;
  readonly resourceVersion: string;
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK';

export interface WatchHandle {
  /** Settles when the watch ends: resolves on a normal end, rejects with KubeApiError (410 when too old). */
  readonly done: Promise<void>;
  stop(): void;
}

export class CustomResourceClient {
  private readonly api: CustomObjectsApi;
  private readonly watcher: Watch;

  constructor(
    kubeConfig: KubeConfig,
    readonly ref: ResourceRef,
  ) {
    this.api = kubeConfig.makeApiClient(CustomObjectsApi);
    this.watcher = new Watch(kubeConfig);
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
      return {
        items: list.items ?? [],
        ...(list.metadata?.continue ? { continue: list.metadata.continue } : {}),
        resourceVersion: list.metadata?.resourceVersion ?? '',
      };
    } catch (err) {
      throw kubeError(err, `list ${this.describe()}`);
    }
  }

  /** Every object, page by page, and the resourceVersion to watch from. */
  async listAll(pageSize = 5000): Promise<{ items: unknown[]; resourceVersion: string }> {
    const items: unknown[] = [];
    let token: string | undefined;
    let resourceVersion = '';
    do {
      const page = await this.list(pageSize, token);
      for (const item of page.items) items.push(item);
      token = page.continue;
      // a paged list is a snapshot at the first page's version
      if (!resourceVersion) resourceVersion = page.resourceVersion;
    } while (token);
    return { items, resourceVersion };
  }

  async watch(
    resourceVersion: string,
    onEvent: (type: WatchEventType, object: unknown) => void,
  ): Promise<WatchHandle> {
    let settle!: (err?: unknown) => void;
    const done = new Promise<void>((resolve, reject) => {
      settle = (err?: unknown) => (err ? reject(err) : resolve());
    });
    let failure: KubeApiError | undefined;
    const controller = await this.watcher
      .watch(
        this.path,
        { resourceVersion, allowWatchBookmarks: true },
        (type: string, object: unknown) => {
          if (type === 'ERROR') {
            const status = object as { code?: number; reason?: string; message?: string };
            failure = new KubeApiError(
              status.code ?? 500,
              status.reason ?? '',
              status.message ?? 'watch error',
            );
            controller?.abort();
            return;
          }
          onEvent(type as WatchEventType, object);
        },
        (err: unknown) => {
          if (failure) settle(failure);
          else if (err && (err as Error).name !== 'AbortError')
            settle(kubeError(err, `watch ${this.describe()}`));
          else settle();
        },
      )
      .catch((err: unknown) => {
        settle(kubeError(err, `watch ${this.describe()}`));
        return undefined;
      });
    return { done, stop: () => controller?.abort() };
  }

  /** The object, or undefined when there is none. */
  async get(name: string): Promise<unknown> {
    checkName(name, `get ${this.describe()}`);
    const { group, version, plural, namespace } = this.ref;
    try {
      return namespace
        ? await this.api.getNamespacedCustomObject({ group, version, plural, namespace, name })
        : await this.api.getClusterCustomObject({ group, version, plural, name });
    } catch (err) {
      const e = kubeError(err, `get ${this.describe(name)}`);
      if (e.status === 404) return undefined;
      throw e;
    }
  }

  /** The object's scale subresource (autoscaling/v1 Scale), or undefined when there is none. */
  async getScale(name: string): Promise<{ spec?: { replicas?: number } } | undefined> {
    checkName(name, `get the scale of ${this.describe()}`);
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

  async create(body: object): Promise<unknown> {
    const { group, version, plural, namespace } = this.ref;
    const name = (body as { metadata?: { name?: string } }).metadata?.name;
    try {
      return namespace
        ? await this.api.createNamespacedCustomObject({ group, version, plural, namespace, body })
        : await this.api.createClusterCustomObject({ group, version, plural, body });
    } catch (err) {
      throw kubeError(err, `create ${this.describe(name)}`);
    }
  }

  /** A JSON merge patch; a `metadata.resourceVersion` in it makes it conditional. */
  async patch(name: string, body: object): Promise<unknown> {
    checkName(name, `patch ${this.describe()}`);
    const { group, version, plural, namespace } = this.ref;
    const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
    try {
      return namespace
        ? await this.api.patchNamespacedCustomObject({ group, version, plural, namespace, name, body }, merge)
        : await this.api.patchClusterCustomObject({ group, version, plural, name, body }, merge);
    } catch (err) {
      throw kubeError(err, `patch ${this.describe(name)}`);
    }
  }

  /** Deletes, only if the object is still at `resourceVersion` when one is given. */
  async delete(name: string, resourceVersion?: string): Promise<void> {
    checkName(name, `delete ${this.describe()}`);
    const { group, version, plural, namespace } = this.ref;
    const body = resourceVersion ? { preconditions: { resourceVersion } } : {};
    try {
      if (namespace)
        await this.api.deleteNamespacedCustomObject({ group, version, plural, namespace, name, body });
      else await this.api.deleteClusterCustomObject({ group, version, plural, name, body });
    } catch (err) {
      throw kubeError(err, `delete ${this.describe(name)}`);
    }
  }
}
