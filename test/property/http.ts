// Requests as the property tests generate them, sent over real HTTP (node:http, keep-alive, raw
// paths and bodies: nothing normalised on the way) or HTTPS for the admission webhook, and printed
// as the curl command that replays them against `floatip serve` on its default ports (the
// webhook's: the README's `--webhook-port 9443`).
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';

export type Port = 'extender' | 'api' | 'webhook';

/** Where `floatip serve` listens by default: what the printed curl commands name. */
const DEFAULT_URL: Record<Port, string> = {
  extender: 'http://127.0.0.1:9040',
  api: 'http://127.0.0.1:9041',
  webhook: 'https://127.0.0.1:9443',
};

/** Bodies longer than this, or not printable, are written to a file that the curl command reads. */
const INLINE_BODY = 2000;

export class Req {
  constructor(
    readonly port: Port,
    readonly method: string,
    /** Path and query exactly as sent. */
    readonly target: string,
    readonly headers: Readonly<Record<string, string>> = {},
    readonly body?: string | Buffer,
    /** A Content-Length far above what is sent: the server must refuse before reading it. */
    readonly declaredLength?: number,
  ) {}

  get path(): string {
    return this.target.split('?')[0]!;
  }

  get bytes(): Buffer | undefined {
    return typeof this.body === 'string' ? Buffer.from(this.body, 'utf8') : this.body;
  }

  /** `POST /v1/filter`, for grouping failures. */
  get endpoint(): string {
    return `${this.method} ${this.path}`;
  }

  [fc.toStringMethod](): string {
    return this.curl();
  }

  curl(): string {
    const parts = [
      'curl -sS -i --path-as-is -g',
      // the webhook's certificate is the test's own: `--cacert` with the README's CA to check it
      ...(this.port === 'webhook' ? ['-k'] : []),
      `-X ${quote(this.method)}`,
      quote(DEFAULT_URL[this.port] + this.target),
    ];
    const headers = { ...this.headers };
    if (this.declaredLength !== undefined) headers['Content-Length'] = String(this.declaredLength);
    // curl adds a form content type to --data-binary unless told otherwise
    if (this.body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type'))
      parts.push(`-H 'Content-Type:'`);
    for (const [name, value] of Object.entries(headers)) parts.push(`-H ${quote(`${name}: ${value}`)}`);
    const bytes = this.bytes;
    if (bytes !== undefined) {
      const text = bytes.toString('utf8');
      const printable = Buffer.from(text, 'utf8').equals(bytes) && ![...text].some(isControl);
      parts.push(
        `--data-binary ${printable && text.length <= INLINE_BODY ? quote(text) : `@${bodyFile(bytes)}`}`,
      );
    }
    return parts.join(' ');
  }
}

/** A control character other than tab and newline, which a shell argument cannot show. */
const isControl = (c: string) => {
  const code = c.charCodeAt(0);
  return (code < 0x20 && c !== '\t' && c !== '\n') || code === 0x7f;
};

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

function bodyFile(bytes: Buffer): string {
  const dir = join(tmpdir(), 'floatip-property');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${createHash('sha256').update(bytes).digest('hex').slice(0, 16)}.body`);
  writeFileSync(file, bytes);
  return file;
}

export interface Answer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly text: string;
  /** The body as JSON, or undefined when it is not JSON. */
  readonly json: unknown;
}

const agent = new Agent({ keepAlive: true, maxSockets: 16 });
let httpsAgent: HttpsAgent | undefined;

/** Trusts `ca` (PEM) for the HTTPS requests that follow, as the API server's caBundle does. */
export function trustCa(ca: string): void {
  httpsAgent?.destroy();
  httpsAgent = new HttpsAgent({ keepAlive: true, maxSockets: 16, ca });
}
const ANSWER_WITHIN_MS = 15_000;
let sent = 0;

/** How many requests this process has sent. */
export const requestsSent = () => sent;

/** Sends `r` to `base` (`http://127.0.0.1:<port>`); rejects only when no answer comes. */
export function send(base: string, r: Req): Promise<Answer> {
  sent++;
  const url = new URL(base);
  const bytes = r.bytes;
  const https = url.protocol === 'https:';
  if (https && !httpsAgent) throw new Error('trustCa() before sending over HTTPS');
  const kept = https ? httpsAgent! : agent;
  return new Promise((resolve, reject) => {
    const req = (https ? httpsRequest : request)(
      {
        // a fresh connection trusts the CA too
        ...(https ? { ca: httpsAgent!.options.ca } : {}),
        host: url.hostname,
        port: url.port,
        method: r.method,
        path: r.target,
        headers: {
          ...r.headers,
          ...(r.declaredLength !== undefined
            ? { 'Content-Length': String(r.declaredLength) }
            : bytes !== undefined
              ? { 'Content-Length': String(bytes.length) }
              : {}),
        },
        // a half-sent body leaves its connection unusable for the next request
        agent: r.declaredLength !== undefined ? false : kept,
        timeout: ANSWER_WITHIN_MS,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
          if (r.declaredLength !== undefined) req.destroy();
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${ANSWER_WITHIN_MS / 1000} s`)));
    req.on('error', reject);
    if (r.declaredLength !== undefined) req.write(bytes ?? Buffer.alloc(0));
    else req.end(bytes);
  });
}

/** Closes the kept-alive connections, so that the servers can stop. */
export const closeConnections = () => {
  agent.destroy();
  httpsAgent?.destroy();
};
