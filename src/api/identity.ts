// Who is calling, for the audit trail. An authentication middleware (none by default; later a
// TokenReview of the bearer token) sets `req.identity`; without one every caller is anonymous and
// known by its address. Headers such as X-Remote-User are not trusted: anyone can send them.
import type { Request } from 'express';

export interface Identity {
  readonly user: string;
  readonly groups?: readonly string[];
}

declare module 'express-serve-static-core' {
  interface Request {
    /** Set by the authentication middleware, when there is one. */
    identity?: Identity;
  }
}

/** The caller as the audit trail names it: `<user> (<remote address>)`. */
export function actorOf(req: Request): string {
  return `${req.identity?.user ?? 'anonymous'} (${req.socket.remoteAddress ?? 'unknown address'})`;
}
