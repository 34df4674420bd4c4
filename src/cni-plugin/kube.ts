// The plugin's one way to the API server: its kubeconfig read with `yaml`, then plain HTTP(S) GETs
// of one pod. client-node would cost about 430 ms of start on every ADD (measured: README, "The node
// side"), for one request. Kubeconfig forms: a bearer token (`token`, `tokenFile`), a client
// certificate and key (files or inline `-data`), the cluster's CA (file or inline `-data`) or
// `insecure-skip-tls-verify`; `exec` and `auth-provider` users are refused by name.
import { open } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { CniError, Code } from './protocol.js';

export interface ApiTarget {
  readonly server: URL;
  readonly headers: Record<string, string>;
  readonly tls: { ca?: Buffer; cert?: Buffer; key?: Buffer; rejectUnauthorized: boolean };
}

type Named<T> = { name?: string } & T;
interface KubeconfigDoc {
  'current-context'?: string;
  contexts?: Named<{ context?: { cluster?: string; user?: string } }>[];
  clusters?: Named<{ cluster?: Record<string, unknown> }>[];
  users?: Named<{ user?: Record<string, unknown> }>[];
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** An errno code, else the message: /dev/zero as a kubeconfig said "cannot be read: undefined". */
const reason = (err: unknown) => (err as NodeJS.ErrnoException).code ?? (err as Error).message;

const invalid = (path: string, what: string) =>
  new CniError(Code.invalidConfig, `kubeconfig ${path}: ${what}`);

/**
 * More than any kubeconfig, token, certificate or key is. Read without a bound, a `tokenFile` of
 * /dev/zero grew the plugin to 5 GB, and /dev/zero as the kubeconfig failed it at V8's string
 * limit (code 100).
 */
export const FILE_LIMIT = 4 * 2 ** 20;

/** The file's bytes, or undefined when it has more than FILE_LIMIT (read no further). */
async function readBounded(path: string): Promise<Buffer | undefined> {
  const file = await open(path, 'r');
  try {
    const chunks: Buffer[] = [];
    let size = 0;
    for (;;) {
      const chunk = Buffer.alloc(64 * 1024);
      const { bytesRead } = await file.read(chunk, 0, chunk.length, null);
      if (bytesRead === 0) return Buffer.concat(chunks);
      size += bytesRead;
      if (size > FILE_LIMIT) return undefined;
      chunks.push(chunk.subarray(0, bytesRead));
    }
  } finally {
    await file.close();
  }
}

export async function loadKubeconfig(path: string): Promise<ApiTarget> {
  let read: Buffer | undefined;
  try {
    read = await readBounded(path);
  } catch (err) {
    throw new CniError(Code.ioFailure, `kubeconfig ${path} cannot be read: ${reason(err)}`);
  }
  if (read === undefined)
    throw new CniError(
      Code.invalidConfig,
      `kubeconfig ${path} is over ${FILE_LIMIT} bytes: no kubeconfig is`,
    );
  const text = read.toString('utf8');
  // yaml costs about 50 ms to load: only the commands that talk to the API server pay it
  const { parse } = await import('yaml');
  let doc: KubeconfigDoc;
  try {
    doc = (parse(text) ?? {}) as KubeconfigDoc;
  } catch (err) {
    throw invalid(path, `not YAML: ${(err as Error).message.split('\n')[0]}`);
  }
  // a hand-written kubeconfig is checked where it is read: `clusters: 5` or `[null]` failed as a
  // TypeError of this code (code 100), not as the kubeconfig's fault
  for (const key of ['contexts', 'clusters', 'users'] as const) {
    const list: unknown = doc[key];
    if (list !== undefined && list !== null && !(Array.isArray(list) && list.every(isObject)))
      throw invalid(path, `${key} is not a list of {name, ...}`);
  }
  const pick = <T>(list: Named<T>[] | undefined, name: string | undefined, what: string): T => {
    const found =
      (list ?? []).find((entry) => entry.name === name) ?? (name === undefined ? list?.[0] : undefined);
    if (found === undefined) throw invalid(path, `no ${what} ${JSON.stringify(name ?? '')}`);
    return found;
  };
  const context = doc.contexts?.length
    ? (pick(doc.contexts, doc['current-context'], 'context').context ?? {})
    : { cluster: undefined, user: undefined };
  const cluster = pick(doc.clusters, context.cluster, 'cluster').cluster ?? {};
  const user = doc.users?.length ? (pick(doc.users, context.user, 'user').user ?? {}) : {};

  const base = dirname(path);
  const bytes = async (dataKey: string, fileKey: string, from: Record<string, unknown>) => {
    const data = from[dataKey];
    if (typeof data === 'string') return Buffer.from(data, 'base64');
    const file = from[fileKey];
    if (typeof file !== 'string') return undefined;
    let read: Buffer | undefined;
    try {
      read = await readBounded(resolve(base, file));
    } catch (err) {
      throw new CniError(
        Code.ioFailure,
        `kubeconfig ${path}: ${fileKey} ${file} cannot be read: ${reason(err)}`,
      );
    }
    if (read === undefined)
      throw invalid(path, `${fileKey} ${file} is over ${FILE_LIMIT} bytes: no ${fileKey} is`);
    return read;
  };
  for (const unsupported of ['exec', 'auth-provider']) {
    if (user[unsupported] !== undefined) {
      throw invalid(
        path,
        `a user with "${unsupported}" is not supported: use a token, a token file or a client certificate`,
      );
    }
  }
  let server: URL;
  try {
    server = new URL(String(cluster.server));
  } catch {
    throw invalid(path, `cluster server ${JSON.stringify(cluster.server)} is not a URL`);
  }
  // any other scheme was node's own refusal at the GET, as code 100
  if (server.protocol !== 'https:' && server.protocol !== 'http:')
    throw invalid(path, `cluster server ${server.href} is not http(s)`);
  const headers: Record<string, string> = { Accept: 'application/json' };
  let token = typeof user.token === 'string' ? user.token : undefined;
  if (token === undefined && typeof user.tokenFile === 'string') {
    token = (await bytes('', 'tokenFile', user))?.toString('utf8').trim();
  }
  // node refuses such a header at the GET (code 100, naming no kubeconfig): a token pasted with
  // its line break, say
  if (token && /[^\t\x20-\x7e\x80-\xff]/.test(token))
    throw invalid(path, 'the token has a character an HTTP header cannot carry (a line break?)');
  if (token) headers.Authorization = `Bearer ${token}`;
  return {
    server,
    headers,
    tls: {
      ca: await bytes('certificate-authority-data', 'certificate-authority', cluster),
      cert: await bytes('client-certificate-data', 'client-certificate', user),
      key: await bytes('client-key-data', 'client-key', user),
      rejectUnauthorized: cluster['insecure-skip-tls-verify'] !== true,
    },
  };
}

export interface ApiResponse {
  readonly status: number;
  readonly body: string;
}

/** More than any Pod object or Status is; an answer this large is not one. */
const ANSWER_LIMIT = 16 * 2 ** 20;

/**
 * One GET, whole within `timeoutMs` (an answer trickled byte by byte counts too); a connection
 * failure, timeout or an answer over ANSWER_LIMIT is the API server being unreachable (code 104).
 */
export async function get(target: ApiTarget, path: string, timeoutMs: number): Promise<ApiResponse> {
  // under the server's own path, as client-go does (a proxy's `https://rancher/k8s/clusters/c-1`):
  // resolved against it, the absolute path dropped it
  const url = new URL(target.server.pathname.replace(/\/+$/, '') + path, target.server);
  const https = url.protocol === 'https:';
  const { request } = https ? await import('node:https') : await import('node:http');
  return new Promise((done, fail) => {
    const req = request(
      url,
      { method: 'GET', headers: target.headers, ...(https ? target.tls : {}) },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > ANSWER_LIMIT) req.destroy(new Error(`an answer over ${ANSWER_LIMIT} bytes`));
          else chunks.push(chunk);
        });
        res.on('end', () => {
          clearTimeout(timer);
          done({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') });
        });
        res.on('error', (err) => fail(unreachable(target, err)));
      },
    );
    const timer = setTimeout(
      () => req.destroy(new Error(`no whole answer within ${timeoutMs} ms`)),
      timeoutMs,
    );
    req.on('error', (err) => {
      clearTimeout(timer);
      fail(unreachable(target, err));
    });
    req.end();
  });
}

const unreachable = (target: ApiTarget, err: Error) =>
  new CniError(Code.apiServer, `API server ${target.server.origin} unreachable: ${err.message}`);

/** The message of a Kubernetes Status body, or its first bytes. */
export function statusMessage(res: ApiResponse): string {
  try {
    const status = JSON.parse(res.body) as { message?: unknown };
    if (typeof status.message === 'string') return status.message;
  } catch {
    // not a Status: say what came
  }
  return res.body.slice(0, 200);
}
