// The one route table: every operation the server registers, by the OpenAPI path it implements.
// app.ts registers exactly these, and a test checks them against the document both ways.
import type { RequestHandler } from 'express';
import { type DashboardDeps, dashboardRoute } from './dashboard.js';
import { dashboardPage } from './dashboard-page.js';
import { notFound } from './envelope.js';
import { ipRoutes, type IPRouteDeps } from './ip-routes.js';
import { openApiDocument } from './openapi.js';
import { poolRoutes, type PoolRouteDeps } from './pool-routes.js';

export type Method = 'get' | 'post' | 'delete';

export interface Route {
  readonly method: Method;
  /** As in the OpenAPI document: `/v1/ip/{ip}`. */
  readonly path: string;
  readonly handler: RequestHandler;
  /** Served before authentication (the API's description). */
  readonly public?: boolean;
}

export interface RouteDeps extends Omit<IPRouteDeps, 'store'>, Omit<PoolRouteDeps, 'store' | 'pools'> {
  readonly store: IPRouteDeps['store'] & PoolRouteDeps['store'];
  /** /metrics, built elsewhere; without it /metrics answers 404. */
  readonly metrics?: RequestHandler;
  readonly dashboard: Omit<DashboardDeps, 'allocator' | 'pods' | 'pools'>;
  readonly pools: PoolRouteDeps['pools'] & DashboardDeps['pools'];
  /** Where the page's built files are (default dist/dashboard). */
  readonly dashboardAssets?: string;
}

export function apiRoutes(deps: RouteDeps): Route[] {
  const ip = ipRoutes(deps);
  const pool = poolRoutes(deps);
  const document: RequestHandler = (_req, res) => {
    res.json(openApiDocument());
  };
  const metrics = deps.metrics;
  const page = dashboardPage(deps.dashboardAssets);
  const usage = dashboardRoute({
    ...deps.dashboard,
    allocator: deps.allocator,
    pods: deps.pods,
    pools: deps.pools,
  });
  return [
    { method: 'get', path: '/', handler: page.page, public: true },
    { method: 'get', path: '/dashboard/{file}', handler: page.file, public: true },
    { method: 'get', path: '/v1/dashboard', handler: usage },
    { method: 'get', path: '/v1/ip', handler: ip.list },
    { method: 'post', path: '/v1/ip', handler: ip.release },
    { method: 'get', path: '/v1/ip/{ip}', handler: ip.get },
    { method: 'get', path: '/v1/subnets', handler: ip.subnets },
    { method: 'post', path: '/v1/pool', handler: pool.put },
    { method: 'get', path: '/v1/pool/{name}', handler: pool.get },
    { method: 'delete', path: '/v1/pool/{name}', handler: pool.delete },
    { method: 'get', path: '/openapi.json', handler: document, public: true },
    { method: 'get', path: '/apidocs.json', handler: document, public: true },
    {
      method: 'get',
      path: '/metrics',
      public: true,
      handler: (req, res, next) => {
        if (!metrics) throw notFound('metrics are not served by this process');
        return metrics(req, res, next);
      },
    },
  ];
}

/** `/v1/pool/{name}` -> `/v1/pool/:name`. */
export const expressPath = (path: string): string => path.replace(/\{([^}]+)\}/g, ':$1');
