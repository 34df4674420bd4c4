// The OpenAPI document is the API's one source of truth: it must be a valid OpenAPI 3 document,
// and the server must register exactly the operations it describes (no more, no fewer).
import SwaggerParser from '@apidevtools/swagger-parser';
import type { Express } from 'express';
import { restApp } from '../../../src/api/app.js';
import { OPENAPI_FILE, documentedOperations, openApiDocument } from '../../../src/api/openapi.js';
import { apiRoutes } from '../../../src/api/routes.js';
import { silentLogger } from '../../../src/log.js';

test('the document is valid OpenAPI 3 (schema and semantics, every $ref resolves)', async () => {
  const api = (await SwaggerParser.validate(OPENAPI_FILE)) as { openapi: string };
  expect(api.openapi).toMatch(/^3\.0\./);
});

test('every operation has an operationId, a summary and a documented answer', () => {
  const doc = openApiDocument() as unknown as {
    paths: Record<string, Record<string, { operationId?: string; summary?: string; responses?: object }>>;
  };
  const ids = new Set<string>();
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (method === 'parameters') continue;
      expect([
        `${method} ${path}`,
        op.operationId && op.summary && op.responses ? 'ok' : 'incomplete',
      ]).toEqual([`${method} ${path}`, 'ok']);
      expect(ids.has(op.operationId!)).toBe(false);
      ids.add(op.operationId!);
    }
  }
});

test('every query parameter takes reserved characters as they are (Go url.ParseQuery reads the query string)', () => {
  const doc = openApiDocument() as unknown as {
    paths: Record<
      string,
      Record<string, { parameters?: { name: string; in: string; allowReserved?: boolean }[] }>
    >;
  };
  const query = Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item).flatMap(([method, op]) =>
      (op.parameters ?? [])
        .filter((p) => p.in === 'query')
        .map((p) => [`${method} ${path} ${p.name}`, p.allowReserved]),
    ),
  );
  expect(query.length).toBeGreaterThan(0);
  expect(query).toEqual(query.map(([name]) => [name, true]));
});

const stubs = {
  allocator: {},
  store: {},
  pods: { cached: () => undefined, find: () => Promise.resolve(undefined) },
  pools: {},
  locks: {},
  events: { record: () => undefined },
  log: silentLogger(),
} as never;

test('the route table and the document describe the same operations', () => {
  const table = apiRoutes(stubs).map((r) => `${r.method.toUpperCase()} ${r.path}`);
  expect([...table].sort()).toEqual([...documentedOperations()].sort());
});

/** What express actually routes: every route layer of the app's router, as `METHOD /path`. */
function registered(app: Express): string[] {
  const router = (app as unknown as { router: { stack: { route?: { path: string; methods: object } }[] } })
    .router;
  return router.stack.flatMap((layer) =>
    layer.route
      ? Object.keys(layer.route.methods).map(
          (m) => `${m.toUpperCase()} ${layer.route!.path.replace(/:([A-Za-z]+)/g, '{$1}')}`,
        )
      : [],
  );
}

test('the server registers exactly the documented operations, with or without authentication', () => {
  expect(registered(restApp(stubs)).sort()).toEqual([...documentedOperations()].sort());
  const withAuth = restApp({
    ...(stubs as object),
    authenticate: (_req: unknown, _res: unknown, next: () => void) => next(),
  } as never);
  expect(registered(withAuth).sort()).toEqual([...documentedOperations()].sort());
});
