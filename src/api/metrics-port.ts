// GET and HEAD /metrics on the REST port, answered on node's http directly; every other request goes
// on to the REST app. express gives the requests and answers it handles prototypes of its own, and
// the extender's port shares node's http code with this one: each of a new replica's first scrapes
// deoptimized that code, compiled by V8 for the extender's plain requests and answers alone (in a
// trial: 24, 14, 13 and 6 deoptimizations and 33, 23, 15 and 10 recompiles after each of the first
// four scrapes, about 0.2 CPU-s after the first; none from the fifth on, once V8's feedback had
// settled), and bench:e2e measured floatip inside that window. Prometheus scrapes every 15-30 s.
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';

/** The metrics in Prometheus's text format, and its content type. */
export type MetricsText = () => Promise<{ readonly contentType: string; readonly text: string }>;

/** The paths express routed to /metrics: any case, one trailing slash, the query ignored. */
function isMetrics(req: IncomingMessage): boolean {
  if (req.method !== 'GET' && req.method !== 'HEAD') return false;
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const path = (q < 0 ? url : url.slice(0, q)).toLowerCase();
  return path === '/metrics' || path === '/metrics/';
}

export function withPlainMetrics(app: RequestListener, metrics: MetricsText): RequestListener {
  return (req: IncomingMessage, res: ServerResponse) => {
    if (!isMetrics(req)) return app(req, res);
    metrics().then(
      ({ contentType, text }) => {
        res.writeHead(200, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(text) });
        // node sends no body to a HEAD
        res.end(text);
      },
      // the REST app's own route answers it, in its envelope if it fails again
      () => app(req, res),
    );
  };
}
