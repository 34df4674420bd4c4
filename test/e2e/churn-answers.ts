// Which REST answers of floatip the churn's operator takes as sensible under a fault, where the
// words are the API server's own (a module of its own, so that a unit test can hold the list).

/**
 * A Pool read or write the API server failed under a fault (unreachable, not answering, or
 * answering that etcd is away), as the replica words it: galaxy's documented 500 (its spec 9.5,
 * 9.6: `server error: failed to create Pool: ...`), or the 503 floatip answers when the API server
 * could not be reached or answered 5xx. Any other 5xx is floatip's own failure.
 */
export const apiServerFailedPoolCall = (status: number, path: string, text: string): boolean =>
  (status === 500 || status === 503) &&
  path.startsWith('/v1/pool') &&
  /(server error|service unavailable): .*(socket|ECONNRESET|ECONNREFUSED|disconnected|hang up|other side closed|no answer|timed out|aborted|HTTP 5\d\d|rpc error: code = Unavailable|etcdserver: )/i.test(
    text,
  );
