// The extender's HTTP face (spec §6, port 9040): kube-scheduler's four verbs and galaxy's health
// check. Each handler decodes its message with the one decoder for it; a body that is not JSON or
// not the right shape is a 400 with the reason, never a crash and never a 500 for the caller's mistake.
import express, { type NextFunction, type Request, type Response } from 'express';
import type { Logger } from '../log.js';
import type { Extender } from './extender.js';
import type { NodeFacts } from './node-subnets.js';
import {
  WireError,
  decodeBindingArgs,
  decodeExtenderArgs,
  decodePreemptionArgs,
  encodeBindingResult,
  encodeFilterResult,
  encodePreemptionResult,
  encodePriorities,
} from './wire.js';

export interface ExtenderHttpOptions {
  /** The largest request body accepted; a full-Node filter for 5,000 nodes is tens of MB. */
  readonly bodyLimit?: string;
  /** Whether this replica may answer (the leader); followers answer 503. */
  readonly serving?: () => boolean;
}

export function extenderApp(
  extender: Extender,
  nodes: NodeFacts,
  log: Logger,
  options: ExtenderHttpOptions = {},
) {
  const app = express();
  app.disable('x-powered-by');
  app.get('/healthy', (_req, res) => {
    res.type('text/plain').send('ok');
  });
  app.use(express.json({ limit: options.bodyLimit ?? '256mb', type: () => true }));

  const json = (res: Response, text: string) => res.status(200).type('application/json').send(text);
  const guard = (req: Request, res: Response, next: NextFunction) => {
    if (options.serving && !options.serving()) {
      res
        .status(503)
        .type('application/json')
        .send(JSON.stringify({ Error: 'not the leader' }));
      return;
    }
    next();
  };

  app.post('/v1/filter', guard, (req, res) => {
    const args = decodeExtenderArgs(req.body);
    json(
      res,
      encodeFilterResult(extender.filter(args.pod, args.nodes, args.nodeNames), (n) => nodes.textOf(n)),
    );
  });
  const prioritize = (req: Request, res: Response) => {
    const args = decodeExtenderArgs(req.body);
    json(res, encodePriorities(extender.prioritize(args.pod, args.nodes, args.nodeNames)));
  };
  app.post('/v1/prioritize', guard, prioritize);
  app.post('/v1/priority', guard, prioritize);
  app.post('/v1/bind', guard, async (req, res) => {
    const args = decodeBindingArgs(req.body);
    json(
      res,
      encodeBindingResult(await extender.bind(args.podNamespace, args.podName, args.podUID, args.node)),
    );
  });
  app.post('/v1/preempt', guard, (req, res) => {
    const args = decodePreemptionArgs(req.body);
    json(res, encodePreemptionResult(extender.preempt(args.pod, args.victims)));
  });

  app.use((req, res) => {
    res
      .status(404)
      .type('application/json')
      .send(JSON.stringify({ Error: `no route ${req.method} ${req.path}` }));
  });
  // express 5 passes thrown errors and rejected promises here
  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const status = (err as { status?: number; type?: string }).status;
    if (err instanceof WireError || (status !== undefined && status >= 400 && status < 500)) {
      const message = err instanceof WireError ? err.message : `bad request: ${(err as Error).message}`;
      res
        .status(status && status !== 500 ? status : 400)
        .type('application/json')
        .send(JSON.stringify({ Error: message }));
      return;
    }
    log.error({ path: req.path, err: (err as Error)?.stack ?? String(err) }, 'extender request failed');
    res
      .status(500)
      .type('application/json')
      .send(JSON.stringify({ Error: `server error: ${(err as Error)?.message}` }));
  });
  return app;
}
