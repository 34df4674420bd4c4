// The dashboard page (GET /) and its built files (GET /dashboard/{file}): what `npm run build`
// put in dist/dashboard/ (esbuild, from web/dashboard/). Public, as the API's description is: the
// page holds no data; it asks GET /v1/dashboard, with the token the user gives it when
// --api-auth asks for one. Nothing is fetched from elsewhere, which the policy header says too.
// Unbuilt (tests run from the sources), the page is a 404 that says how to build it, not a 5xx:
// the server is fine, the file is not there.
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { RequestHandler, Response } from 'express';
import { packagePath } from '../paths.js';
import { notFound } from './envelope.js';

export const DASHBOARD_ASSETS = packagePath('dist', 'dashboard');

/** The files the build writes; nothing else under the folder is served. */
const FILES = new Set(['dashboard.js', 'dashboard.css', 'dashboard.js.map', 'dashboard.css.map']);

const POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

function send(res: Response, dir: string, file: string): void {
  const full = path.join(dir, file);
  if (!existsSync(full)) throw notFound(`the dashboard is not built (no ${full}): run npm run build`);
  res.setHeader('Content-Security-Policy', POLICY);
  res.setHeader('Cache-Control', 'no-cache');
  res.sendFile(file, { root: dir, dotfiles: 'deny' });
}

export function dashboardPage(dir = DASHBOARD_ASSETS): { page: RequestHandler; file: RequestHandler } {
  return {
    page: (_req, res) => send(res, dir, 'index.html'),
    file: (req, res) => {
      const file = String(req.params.file);
      if (!FILES.has(file)) throw notFound(`dashboard file ${file}`);
      send(res, dir, file);
    },
  };
}
