// The page's one way to the REST API: the same origin, with the bearer token the user gave (kept
// for this tab only), and galaxy's envelope read back into a status and a message.
import type { DashboardJson, HolderJson } from '../../src/api/dashboard-wire.js';

const TOKEN = 'floatip-token';

export const savedToken = (): string => sessionStorage.getItem(TOKEN) ?? '';
export const saveToken = (token: string): void => {
  if (token) sessionStorage.setItem(TOKEN, token);
  else sessionStorage.removeItem(TOKEN);
};

export interface Answer<T> {
  readonly status: number;
  readonly message: string;
  readonly body?: T;
}

async function call<T>(token: string, path: string, init: RequestInit = {}): Promise<Answer<T>> {
  const headers = new Headers(init.headers);
  if (token) headers.set('Authorization', `Bearer ${token}`);
  const res = await fetch(path, { ...init, headers, cache: 'no-store' });
  const body = (await res.json().catch(() => undefined)) as ({ message?: string } & T) | undefined;
  return { status: res.status, message: body?.message ?? res.statusText, body };
}

export async function fetchDashboard(token: string, q: string): Promise<Answer<DashboardJson>> {
  const answer = await call<{ content: DashboardJson }>(token, `/v1/dashboard?q=${encodeURIComponent(q)}`);
  return { ...answer, body: answer.status === 200 ? answer.body?.content : undefined };
}

export interface ReleaseAnswer {
  unreleased?: string[];
  reasons?: string[];
  details?: string[];
}

/** POST /v1/ip for one address, naming its owner as the holder list shows it (so it must not have changed hands). */
export function release(token: string, h: HolderJson): Promise<Answer<ReleaseAnswer>> {
  const item = {
    ip: h.ip,
    ...(h.namespace ? { namespace: h.namespace } : {}),
    ...(h.app ? { appName: h.app } : {}),
    ...(h.pod ? { podName: h.pod } : {}),
    ...(h.pool ? { poolName: h.pool } : {}),
    ...(h.appType ? { appType: h.appType } : {}),
  };
  return call(token, '/v1/ip', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ ips: [item] }),
  });
}
