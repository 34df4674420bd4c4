// How floatip's lean requests reach the API server (json-post.ts, watch-lines.ts): the URL, the
// shared keep-alive agent and the Authorization header, taken from the KubeConfig as client-node
// computes them and kept for a few seconds, so that a rotated token or an exec credential still
// takes effect without client-node reading the kubeconfig's files again on every call.
import { request as httpRequest, type Agent as HttpAgent, type OutgoingHttpHeaders } from 'node:http';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import { KubeApiError } from './api-error.js';

/** How long the credentials client-node computed are reused before they are asked for again. */
const SETTINGS_TTL_MS = 10_000;

export interface ConnectionSettings {
  /** The API server's URL without a trailing slash (it may have a path of its own). */
  readonly base: string;
  readonly agent: HttpAgent | undefined;
  readonly headers: OutgoingHttpHeaders;
  /** node's request function for the server's scheme. */
  readonly request: typeof httpRequest;
  readonly at: number;
}

export class ApiConnection {
  private settings: ConnectionSettings | undefined;
  private pending: Promise<ConnectionSettings> | undefined;

  constructor(private readonly kubeConfig: KubeConfig) {}

  /** The connection settings, computed by client-node at most once per SETTINGS_TTL_MS. */
  current(): Promise<ConnectionSettings> {
    const s = this.settings;
    if (s && Date.now() - s.at < SETTINGS_TTL_MS) return Promise.resolve(s);
    this.pending ??= this.compute().finally(() => (this.pending = undefined));
    return this.pending;
  }

  private async compute(): Promise<ConnectionSettings> {
    const cluster = this.kubeConfig.getCurrentCluster();
    if (!cluster) throw new KubeApiError(0, '', 'the kubeconfig names no cluster');
    const options: RequestOptions = {};
    await this.kubeConfig.applyToHTTPSOptions(options);
    const headers: OutgoingHttpHeaders = { ...(options.headers as OutgoingHttpHeaders | undefined) };
    if (options.auth) headers.Authorization = `Basic ${Buffer.from(options.auth).toString('base64')}`;
    const base = cluster.server.replace(/\/+$/, '');
    this.settings = {
      base,
      agent: options.agent as HttpAgent | undefined,
      headers,
      request: base.startsWith('https:') ? (httpsRequest as typeof httpRequest) : httpRequest,
      at: Date.now(),
    };
    return this.settings;
  }
}
