// HTTP routing: which document or verb a request addresses, and which service call answers it. Every
// failure leaves as a Kubernetes Status. Reading bodies and writing answers is http-io.ts, decoding
// the query's options request-options.ts, so that this module reads as the route table it is.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { apiVersions, groupDocument, groupList, resourceList, SERVER_VERSION } from './discovery.js';
import type { FaultController, FaultRule } from './faults.js';
import { checkFields, fieldValidationOf } from './field-validation.js';
import { bufferBody, readJson, readObject, send, sendObject } from './http-io.js';
import { openApiV2Format, responseFormat } from './media.js';
import { encodeOpenApiV2 } from './gnostic.js';
import { documentTarget, openApiDocument, openApiRoot } from './openapi.js';
import { openApiV2Document } from './openapi-v2.js';
import { REVIEW_RESOURCES, type ReviewTable, review } from './reviews.js';
import { patchTypeOf } from './patch.js';
import type { ResourceRegistry, ResourceType } from './registry.js';
import { parseBool, parseRequestTarget, type ResourceRequest } from './request-info.js';
import { dryRunOf, listOptions, nonNegativeInt, preconditionsOf } from './request-options.js';
import type { ResourceService } from './resources.js';
import { objectMatcher } from './selectors.js';
import { listJson, objectJson } from './serialize.js';
import { ApiError, badRequest, internalError, methodNotAllowed, pathNotFound } from './status.js';
import type { Store } from './store.js';
import { bindPod, patchScale, scaleOf, updateScale } from './subresources.js';
import { type IncludeObject, includeObjectOf, toTable } from './table.js';
import type { KubeObject } from './types.js';
import { WatchStream, type WatchHub } from './watch.js';

export interface HandlerDeps {
  registry: ResourceRegistry;
  store: Store;
  service: ResourceService;
  watches: WatchHub;
  faults: FaultController;
  /** host:port, for /api's serverAddressByClientCIDRs. */
  serverAddress(): string;
  bookmarkIntervalMs: number;
  log(message: string): void;
  /** Answers TokenReviews and SubjectAccessReviews. */
  reviews: ReviewTable;
}

export const CONTROL_PREFIX = '/_floatip/';

export function createHandler(deps: HandlerDeps): (req: IncomingMessage, res: ServerResponse) => void {
  const { registry, store, service, watches, faults } = deps;

  async function handleControl(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    const method = req.method ?? 'GET';
    if (path === `${CONTROL_PREFIX}faults`) {
      if (method === 'GET') return sendObject(res, 200, { items: faults.pending() });
      if (method === 'DELETE') return sendObject(res, 200, { cleared: faults.clear() });
      if (method === 'POST') {
        const body = await readJson(req, 'a fault');
        const rules = Array.isArray(body) ? body : [body];
        const injected = rules.map((r) => faults.inject(r as FaultRule));
        return sendObject(res, 201, Array.isArray(body) ? { items: injected } : injected[0]);
      }
    } else if (path === `${CONTROL_PREFIX}drop-watches` && method === 'POST') {
      return sendObject(res, 200, { dropped: faults.dropWatches() });
    } else if (path === `${CONTROL_PREFIX}expire-history` && method === 'POST') {
      return sendObject(res, 200, { compactedRevision: faults.expireHistory() });
    } else {
      throw pathNotFound();
    }
    throw methodNotAllowed(`${method} is not supported on ${path}`);
  }

  function resolveType(target: ResourceRequest): ResourceType {
    const rt = registry.lookup(target.group, target.version, target.resource);
    if (!rt) throw pathNotFound();
    if (target.namespace !== undefined && !rt.namespaced) throw pathNotFound();
    if (rt.namespaced && target.namespace === undefined && target.name !== undefined) throw pathNotFound();
    if (
      rt.namespaced &&
      target.namespace === undefined &&
      target.verb !== 'list' &&
      target.verb !== 'watch'
    ) {
      throw methodNotAllowed(`${target.verb} of ${rt.plural} needs a namespace in the path`);
    }
    const sub = target.subresource;
    if (sub !== undefined) {
      const served =
        (sub === 'status' && rt.statusSubresource) ||
        (sub === 'scale' && rt.scale) ||
        (sub === 'binding' && rt.binding);
      if (!served) throw pathNotFound();
      const verbs = sub === 'binding' ? ['create'] : ['get', 'update', 'patch'];
      if (!verbs.includes(target.verb)) {
        throw methodNotAllowed(`${target.verb} is not supported on ${rt.plural}/${sub}`);
      }
    }
    return rt;
  }

  function handleWatch(
    res: ServerResponse,
    rt: ResourceType,
    target: ResourceRequest,
    url: URL,
    table: IncludeObject | undefined,
  ): void {
    let fieldSelector = url.searchParams.get('fieldSelector') ?? '';
    if (target.name !== undefined) {
      fieldSelector = [fieldSelector, `metadata.name=${target.name}`].filter(Boolean).join(',');
    }
    const matches = objectMatcher(
      url.searchParams.get('labelSelector') ?? undefined,
      fieldSelector,
      rt.selectableFields,
    );
    const timeoutSeconds = nonNegativeInt(url, 'timeoutSeconds');
    const bookmarks = parseBool(url.searchParams.get('allowWatchBookmarks'));
    const sendInitialEvents = parseBool(url.searchParams.get('sendInitialEvents'));
    const rvParam = url.searchParams.get('resourceVersion') ?? '';
    let from: number | undefined;
    if (!sendInitialEvents && rvParam !== '' && rvParam !== '0') {
      if (!/^\d+$/.test(rvParam)) {
        throw badRequest(`resourceVersion: Invalid value: "${rvParam}": must be a non-negative integer`);
      }
      from = Number(rvParam);
    }
    const filter: { namespace?: string; matches?: typeof matches } = {};
    if (target.namespace !== undefined) filter.namespace = target.namespace;
    if (matches) filter.matches = matches;
    const stream = new WatchStream(res, rt, filter, () => store.revision, {
      bookmarks,
      bookmarkIntervalMs: deps.bookmarkIntervalMs,
      ...(timeoutSeconds ? { timeoutMs: timeoutSeconds * 1000 } : {}),
      ...(table ? { table } : {}),
    });
    stream.open();
    if (from === undefined) {
      // No version (or "0"): the current state as ADDED events first, as kube-apiserver does.
      const prefix = target.namespace !== undefined ? `${target.namespace}/` : '';
      for (const stored of store.scan(rt.storageKey, prefix)) stream.sendInitial(stored);
      if (sendInitialEvents && bookmarks) stream.sendBookmark(true);
    } else {
      const events = store.history.since(from);
      if (!events) {
        const oldest = store.history.compactedRevision + 1;
        stream.fail(new ApiError(410, 'Expired', `too old resource version: ${from} (${oldest})`));
        return;
      }
      for (const event of events) if (event.storageKey === rt.storageKey) stream.deliver(event);
    }
    watches.register(stream);
  }

  async function handleResource(
    req: IncomingMessage,
    res: ServerResponse,
    target: ResourceRequest,
    url: URL,
  ): Promise<void> {
    const rt = resolveType(target);
    // a create names its object in the body: read it first, so that a fault can match that name; a
    // held create (a binding too) is then applied even if its caller stopped waiting, as it can be
    // on kube-apiserver
    let createBody: unknown;
    let name_ = target.name;
    if (target.verb === 'create') {
      const sub = target.subresource;
      createBody = await readObject(req, `${rt.plural}${sub ? '/' + sub : ''}`);
      const bodyName = (createBody as { metadata?: { name?: unknown } } | null)?.metadata?.name;
      if (typeof bodyName === 'string' && sub === undefined) name_ = bodyName;
    }
    const fault = faults.take({
      verb: target.verb,
      group: target.group,
      resource: target.resource,
      ...(target.subresource !== undefined ? { subresource: target.subresource } : {}),
      ...(name_ !== undefined ? { name: name_ } : {}),
      ...(target.namespace !== undefined ? { namespace: target.namespace } : {}),
    });
    if (fault) {
      if (fault.delayMs > 0) {
        if (target.verb === 'update' || target.verb === 'patch' || target.verb === 'delete')
          await bufferBody(req);
        await new Promise((r) => setTimeout(r, fault.delayMs));
      }
      if (fault.error) throw fault.error;
    }
    if (target.verb === 'create' && REVIEW_RESOURCES.has(`${target.group}/${target.resource}`)) {
      return sendObject(
        res,
        201,
        review(target.group, target.resource, createBody as KubeObject, deps.reviews),
      );
    }
    const ns = target.namespace;
    const name = target.name ?? '';
    const sub = target.subresource;
    const reads = ['get', 'list', 'watch'].includes(target.verb) && sub === undefined;
    const format = responseFormat(req.headers.accept, reads);
    const include = includeObjectOf(url.searchParams.get('includeObject'));
    if (format === 'table' && include === undefined) {
      throw badRequest(
        `includeObject: Unsupported value: "${url.searchParams.get('includeObject')}": supported values: "Metadata", "None", "Object"`,
      );
    }
    const writes =
      ['create', 'update', 'patch'].includes(target.verb) && sub !== 'binding' && sub !== 'scale';
    const fieldValidation = writes ? fieldValidationOf(url) : 'Ignore';
    switch (target.verb) {
      case 'get': {
        const stored = service.get(rt, ns, name);
        if (sub === 'scale') return sendObject(res, 200, scaleOf(rt, stored.obj));
        if (format === 'table') {
          const version = stored.obj.metadata?.resourceVersion ?? '';
          return sendObject(
            res,
            200,
            toTable(rt, [stored.obj], { resourceVersion: version }, include ?? 'Metadata'),
          );
        }
        return send(res, 200, objectJson(stored, rt));
      }
      case 'list': {
        const result = service.list(rt, ns, listOptions(url));
        if (format === 'table') {
          const meta = {
            resourceVersion: String(result.revision),
            ...(result.continueToken ? { continue: result.continueToken } : {}),
          };
          const objects = result.items.map((s) => s.obj);
          return sendObject(res, 200, toTable(rt, objects, meta, include ?? 'Metadata'));
        }
        return send(res, 200, listJson(rt, result.items, result.revision, result.continueToken));
      }
      case 'watch':
        return handleWatch(res, rt, target, url, format === 'table' ? (include ?? 'Metadata') : undefined);
      case 'create': {
        const dryRun = dryRunOf(url);
        const body = createBody ?? (await readObject(req, `${rt.plural}${sub ? '/' + sub : ''}`));
        if (sub === 'binding') {
          bindPod(service, rt, ns ?? '', name, body, dryRun);
          return sendObject(res, 201, {
            kind: 'Status',
            apiVersion: 'v1',
            metadata: {},
            status: 'Success',
            code: 201,
          });
        }
        const warnings = checkFields(rt, body, fieldValidation, false);
        return send(res, 201, objectJson(service.create(rt, ns, body, { dryRun }), rt), warnings);
      }
      case 'update': {
        const dryRun = dryRunOf(url);
        const body = await readObject(req, `${rt.plural}${sub ? '/' + sub : ''}`);
        if (sub === 'scale') return sendObject(res, 200, updateScale(service, rt, ns, name, body, dryRun));
        const warnings = checkFields(rt, body, fieldValidation, false);
        const opts = sub === 'status' ? { dryRun, subresource: 'status' as const } : { dryRun };
        const { served, created } = service.update(rt, ns, name, body, opts);
        return send(res, created ? 201 : 200, objectJson(served, rt), warnings);
      }
      case 'patch': {
        const dryRun = dryRunOf(url);
        const type = patchTypeOf(req.headers['content-type'], rt.strategicMergePatch || sub === 'scale');
        const body = await readJson(req, `a patch of ${rt.plural}`);
        if (sub === 'scale')
          return sendObject(res, 200, patchScale(service, rt, ns, name, type, body, dryRun));
        // a JSON patch names paths, not fields: only merge patches are checked
        const warnings = type === 'json' ? [] : checkFields(rt, body, fieldValidation, true);
        const opts = sub === 'status' ? { dryRun, subresource: 'status' as const } : { dryRun };
        return send(res, 200, objectJson(service.patch(rt, ns, name, type, body, opts), rt), warnings);
      }
      case 'delete': {
        const dryRun = dryRunOf(url);
        const preconditions = preconditionsOf(await readJson(req, 'DeleteOptions', true));
        const { served, removed } = service.delete(rt, ns, name, preconditions, { dryRun });
        return send(res, removed ? 200 : 202, objectJson(served, rt));
      }
      case 'deletecollection': {
        const dryRun = dryRunOf(url);
        await readJson(req, 'DeleteOptions', true);
        const { items, revision } = service.deleteCollection(rt, ns, listOptions(url), dryRun);
        return send(res, 200, listJson(rt, items, revision));
      }
    }
  }

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const method = req.method ?? 'GET';
    if (url.pathname.startsWith(CONTROL_PREFIX)) return handleControl(req, res, url.pathname);
    const target = parseRequestTarget(method, url);
    if (target.kind === 'methodNotAllowed')
      throw methodNotAllowed(`${method} is not supported on ${url.pathname}`);
    if (target.kind === 'resource') return handleResource(req, res, target, url);
    if (method !== 'GET' && method !== 'HEAD')
      throw methodNotAllowed(`${method} is not supported on ${url.pathname}`);
    switch (target.kind) {
      case 'apiVersions':
        return sendObject(res, 200, apiVersions(deps.serverAddress()));
      case 'groupList':
        return sendObject(res, 200, groupList(registry));
      case 'group':
        if (registry.versionsOf(target.group).length === 0) throw pathNotFound();
        return sendObject(res, 200, groupDocument(registry, target.group));
      case 'resourceList':
        if (!registry.hasGroupVersion(target.group, target.version)) throw pathNotFound();
        return sendObject(res, 200, resourceList(registry, target.group, target.version));
      case 'other':
        if (url.pathname === '/version' || url.pathname === '/version/')
          return sendObject(res, 200, SERVER_VERSION);
        if (['/healthz', '/livez', '/readyz'].includes(url.pathname)) {
          res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' });
          res.end('ok');
          return;
        }
        if (url.pathname === '/openapi/v3' || url.pathname === '/openapi/v3/') {
          responseFormat(req.headers.accept, false);
          return sendObject(res, 200, openApiRoot(registry));
        }
        if (url.pathname.startsWith('/openapi/v3/')) {
          const gv = documentTarget(url.pathname);
          const doc = gv && openApiDocument(registry, gv.group, gv.version);
          if (!doc) throw pathNotFound();
          responseFormat(req.headers.accept, false);
          return sendObject(res, 200, doc);
        }
        if (url.pathname === '/openapi/v2' || url.pathname === '/openapi/v2/') {
          const doc = openApiV2Document(registry);
          if (openApiV2Format(req.headers.accept) === 'json') return sendObject(res, 200, doc);
          const body = encodeOpenApiV2(doc);
          res.writeHead(200, {
            // kube-apiserver's (sniffed by Go's http.ServeContent): kubectl's client cannot parse
            // the protobuf's own media type, whose '@' Go's mime package refuses
            'Content-Type': 'application/octet-stream',
            'Cache-Control': 'no-cache, private',
            'Content-Length': body.length,
          });
          res.end(body);
          return;
        }
        throw pathNotFound();
    }
  }

  return (req, res) => {
    route(req, res).catch((err: unknown) => {
      const apiError = err instanceof ApiError ? err : internalError(err);
      if (!(err instanceof ApiError))
        deps.log(`floatip dev-apiserver: ${req.method} ${req.url}: ${String(err)}`);
      if (res.headersSent) {
        res.destroy();
        return;
      }
      // as kube-apiserver's responsewriters: the Status's wait, where it names one, as the header
      // clients act on (client-go sends the request again after it)
      const wait = apiError.details?.retryAfterSeconds;
      if (wait !== undefined && wait > 0) res.setHeader('Retry-After', String(wait));
      sendObject(res, apiError.code, apiError.toStatus());
    });
  };
}
