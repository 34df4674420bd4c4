// A request the API server turned away with 429 and a Retry-After is sent again after that wait, as
// client-go does for every call (galaxy's included): kube-apiserver answers 429 when its in-flight
// limit or its priority-and-fairness queue refuses a request before any handler saw it, so nothing
// was read or written and the same request may go again. client-go also resends a 5xx that carries
// a Retry-After; floatip does not: a 500 ServerTimeout can come after etcd applied a write.
//
// Both of floatip's ways to the API server resend this way: its lean client (lean-client.ts) and
// every typed client-node call (`apiClient` below, the only way floatip makes one).
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type Configuration,
  createConfiguration,
  type HttpLibrary,
  IsomorphicFetchHttpLibrary,
  type KubeConfig,
  Observable,
  type RequestContext,
  ResponseContext,
  ServerConfiguration,
} from '@kubernetes/client-node';

/** client-go's maxRetries: at most this many sends of one request. */
export const MAX_SENDS = 10;

/**
 * How long a 429 asks to wait, in ms, as client-go reads it (whole seconds, `strconv.Atoi`); none
 * for an HTTP date or anything else, and then the 429 is the answer.
 */
export function retryAfterMs(header: string | undefined): number | undefined {
  if (header === undefined || !/^[+-]?[0-9]{1,9}$/.test(header)) return undefined;
  return Math.max(0, Number(header)) * 1000;
}

/** One request's sends, for resendOn429. */
export interface Sends<A> {
  send(): Promise<A>;
  /** The Retry-After header of a 429 answer; undefined for any other answer or without one. */
  retryAfterOf(answer: A): string | undefined;
  /** Waits `ms`; false, at once or when it ends, when the caller's deadline comes first. */
  pause(ms: number): Promise<boolean>;
  /** Asked before each resend (the caller's leadership check): throwing stops them with its error. */
  mayResend?: () => void;
}

/** The answer to the request, sent again after each 429's Retry-After while time and sends allow. */
export async function resendOn429<A>(sends: Sends<A>): Promise<A> {
  let answer = await sends.send();
  for (let sent = 1; sent < MAX_SENDS; sent++) {
    const wait = retryAfterMs(sends.retryAfterOf(answer));
    if (wait === undefined || !(await sends.pause(wait))) break;
    sends.mayResend?.();
    answer = await sends.send();
  }
  return answer;
}

/** client-node's own transport, which every typed call goes through. */
const transport = new IsomorphicFetchHttpLibrary();

/**
 * client-node's transport, resending 429s within the call's signal (its deadline: a wait it cuts
 * short leaves the 429 as the answer). Its calls are lists, reads, the REST API's reviews and the
 * replica's own Lease; the writes only a leader may make go through lean-client.ts, which asks the
 * leadership check before each resend.
 */
export function resendingTransport(inner: HttpLibrary = transport): HttpLibrary {
  return {
    send: (request: RequestContext) =>
      new Observable(
        resendOn429<ResponseContext>({
          send: () => sendOnce(inner, request),
          retryAfterOf: (response) =>
            response.httpStatusCode === 429 ? header(response.headers['retry-after']) : undefined,
          pause: (ms) => pause(ms, request.getSignal()),
        }),
      ),
  };
}

/** A header's first value (node gives a repeated one as an array). */
export const header = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);

/** One send; a 429's body read at once, so that it can stay the answer or be dropped for a resend. */
async function sendOnce(inner: HttpLibrary, request: RequestContext): Promise<ResponseContext> {
  const response = await inner.send(request).toPromise();
  if (response.httpStatusCode !== 429) return response;
  const text = await response.body.text();
  return new ResponseContext(response.httpStatusCode, response.headers, {
    text: () => Promise.resolve(text),
    binary: () => Promise.resolve(Buffer.from(text)),
  });
}

async function pause(ms: number, signal: AbortSignal | undefined): Promise<boolean> {
  if (signal?.aborted) return false;
  try {
    await sleep(ms, undefined, signal ? { signal } : undefined);
    return true;
  } catch {
    return false;
  }
}

/**
 * client-node's typed API for the KubeConfig's cluster, as `KubeConfig.makeApiClient` makes it but
 * on the resending transport.
 */
export function apiClient<T>(kubeConfig: KubeConfig, api: new (configuration: Configuration) => T): T {
  const cluster = kubeConfig.getCurrentCluster();
  if (!cluster) throw new Error('the kubeconfig names no cluster');
  return new api(
    createConfiguration({
      baseServer: new ServerConfiguration(cluster.server, {}),
      authMethods: { default: kubeConfig },
      httpApi: resendingTransport(),
    }),
  );
}
