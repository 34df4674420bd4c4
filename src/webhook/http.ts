// The webhook's HTTP side (served over HTTPS by the composition root): POST /validate takes an
// AdmissionReview and answers one; GET /healthz. A review that is not one (bad JSON, wrong version,
// a field missing) is a 400 naming what is wrong, a body not labelled application/json (or labelled
// with a Content-Encoding) a 415, so the API server logs why and applies the webhook's
// failurePolicy; it is never answered "allowed" by default.
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { continueBody } from '../http.js';
import type { Logger } from '../log.js';
import {
  type AdmissionRequest,
  BadReviewError,
  type Verdict,
  admissionResponse,
  clipped,
  decodeAdmissionReview,
} from './admission-review.js';

/** A review carries the object and the old one; a ConfigMap is at most 1 MiB, so 8 MiB is plenty. */
export const MAX_REVIEW_BYTES = 8 * 1024 * 1024;

class TooLarge extends Error {}

/** The body as text; a body past the limit (a chunked one: no length said up front) cuts the connection. */
async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_REVIEW_BYTES) throw new TooLarge();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, {
    'content-type': typeof body === 'string' ? 'text/plain; charset=utf-8' : 'application/json',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

export function webhookApp(judge: (req: AdmissionRequest) => Verdict, log: Logger): RequestListener {
  return (req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    if (path === '/healthz') {
      send(res, req.method === 'GET' ? 200 : 405, req.method === 'GET' ? 'ok\n' : 'method not allowed\n');
      return;
    }
    if (path !== '/validate') {
      send(res, 404, `not found: ${clipped(path)}; the webhook answers POST /validate\n`);
      return;
    }
    if (req.method !== 'POST') {
      send(res, 405, 'method not allowed: POST an AdmissionReview to /validate\n');
      return;
    }
    void (async () => {
      let request: AdmissionRequest;
      try {
        // The API server always sends application/json. A body labelled otherwise is refused as
        // floatip's REST API and the API server refuse one (415), before it is read: a non-200,
        // so the failurePolicy applies as for a 400. By hand, `curl -d` labels its body form data:
        // the answer says which header to send (README "Admission webhook").
        const type = req.headers['content-type'] ?? '';
        if (type.split(';')[0]!.trim().toLowerCase() !== 'application/json') {
          send(
            res,
            415,
            `unsupported media type ${JSON.stringify(type)}: an AdmissionReview is application/json (send the header Content-Type: application/json)\n`,
          );
          req.resume();
          return;
        }
        // nor does it encode one: a body labelled gzip (or anything but identity) is refused as
        // the other ports refuse an encoding they do not undo, rather than its bytes read as JSON
        const encoding = (req.headers['content-encoding'] ?? '').trim().toLowerCase();
        if (encoding !== '' && encoding !== 'identity') {
          send(
            res,
            415,
            `unsupported content encoding ${JSON.stringify(encoding)}: the API server sends an AdmissionReview unencoded\n`,
          );
          req.resume();
          return;
        }
        if (Number(req.headers['content-length'] ?? 0) > MAX_REVIEW_BYTES) throw new TooLarge();
        // read from here on: a caller waiting for 100 Continue sends its body now
        continueBody(res);
        const text = await readBody(req);
        let body: unknown;
        try {
          body = JSON.parse(text);
        } catch (err) {
          throw new BadReviewError(`not JSON: ${(err as Error).message}`);
        }
        request = decodeAdmissionReview(body);
        const verdict = judge(request);
        const who = {
          kind: request.kind.kind,
          namespace: request.namespace,
          name: request.name,
          op: request.operation,
        };
        if (!verdict.allowed) log.info({ ...who, reason: verdict.message }, 'admission refused');
        else if (verdict.warnings?.length)
          log.info({ ...who, warnings: verdict.warnings }, 'admission allowed with warnings');
        send(res, 200, admissionResponse(request.uid, verdict));
      } catch (err) {
        if (err instanceof TooLarge) {
          res.setHeader('connection', 'close');
          req.resume();
          send(
            res,
            413,
            `request entity too large: an AdmissionReview is at most ${MAX_REVIEW_BYTES} bytes\n`,
          );
        } else if (err instanceof BadReviewError) {
          log.warn({ err: err.message }, 'malformed admission review');
          send(res, 400, `bad request: ${err.message}\n`);
        } else {
          log.error({ err: (err as Error).message }, 'admission review failed');
          send(res, 500, `server error: ${(err as Error).message}\n`);
        }
      }
    })();
  };
}
