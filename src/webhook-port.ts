// The admission webhook's port: HTTPS with a certificate read again every `reloadMs`, so that a
// Secret renewed in place (cert-manager) is served without a restart.
import type { Server as HttpsServer } from 'node:https';
import type { Logger } from './log.js';
import { close, listen, urlOf } from './ports.js';
import { judge, type JudgeDeps } from './webhook/judges.js';
import { webhookApp } from './webhook/http.js';

export interface WebhookOptions {
  readonly port: number;
  /** The certificate and key (PEM), read at start and again every `reloadMs`: a renewed Secret is taken without a restart. */
  readonly certificate: () => { readonly cert: string; readonly key: string };
  /** Default 60 s, about how long the kubelet takes to update a mounted Secret. */
  readonly reloadMs?: number;
}

/** The webhook listening: its base URL (POST /validate), and how to stop it. */
export interface WebhookPort {
  readonly url: string;
  stop(): Promise<void>;
}

export async function listenWebhook(
  { port, certificate, reloadMs = 60_000 }: WebhookOptions,
  deps: JudgeDeps,
  log: Logger,
  at: Parameters<typeof listen>[2],
): Promise<WebhookPort> {
  let served = certificate();
  const hook = await listen(
    'the admission webhook port (--webhook-port)',
    webhookApp((request) => judge(deps, request), log),
    at,
    port,
    served,
  );
  // a certificate that cannot be read or used keeps the old one
  const reload = setInterval(() => {
    try {
      const next = certificate();
      if (next.cert === served.cert && next.key === served.key) return;
      // listen() made it with TLS options: an https.Server
      (hook as unknown as HttpsServer).setSecureContext(next);
      served = next;
      log.info('admission webhook certificate reloaded');
    } catch (err) {
      log.error(
        { err: (err as Error).message },
        'admission webhook certificate not reloaded; the previous one is served',
      );
    }
  }, reloadMs);
  reload.unref();
  const url = urlOf(at.host, hook, true);
  log.info({ url }, 'admission webhook listening');
  return {
    url,
    async stop() {
      clearInterval(reload);
      await close(hook);
    },
  };
}
