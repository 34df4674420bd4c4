// client-node has no per-call timeout: a call is bounded by the signal its request carries, which
// a middleware attaches (the shared 30 s one otherwise, shared-agent.ts).
import { type ConfigurationOptions, Observable, type ObservableMiddleware } from '@kubernetes/client-node';

/** Request options that attach `signal` to the HTTP request. */
export function withSignal(signal: AbortSignal): ConfigurationOptions {
  const middleware: ObservableMiddleware = {
    pre: (request) => {
      request.setSignal(signal);
      return new Observable(Promise.resolve(request));
    },
    post: (response) => new Observable(Promise.resolve(response)),
  };
  return { middleware: [middleware], middlewareMergeStrategy: 'append' };
}

/** Request options bounding the call to `timeoutMs`, or none (the shared bound) when undefined. */
export const withinMs = (timeoutMs: number | undefined): ConfigurationOptions | undefined =>
  timeoutMs === undefined ? undefined : withSignal(AbortSignal.timeout(Math.max(1, timeoutMs)));
