// A webhook certificate made the way the README's one-time recipe makes it (openssl: a CA, and a
// serving certificate it signs for the names the API server calls), in a temporary directory.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface WebhookCertificate {
  readonly ca: string;
  readonly cert: string;
  readonly key: string;
}

/** The CA and the serving certificate for these subject alternative names (`IP:127.0.0.1`, `DNS:floatip-webhook.kube-system.svc`). */
export function webhookCertificate(altNames: readonly string[]): WebhookCertificate {
  const dir = mkdtempSync(join(tmpdir(), 'floatip-webhook-tls-'));
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  try {
    openssl(
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '3650',
      '-subj',
      '/CN=floatip-webhook-ca',
      '-keyout',
      'ca.key',
      '-out',
      'ca.crt',
    );
    openssl(
      'req',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-subj',
      '/CN=floatip-webhook',
      '-keyout',
      'tls.key',
      '-out',
      'tls.csr',
    );
    writeFileSync(join(dir, 'san.ext'), `subjectAltName=${altNames.join(',')}\n`);
    openssl(
      'x509',
      '-req',
      '-in',
      'tls.csr',
      '-CA',
      'ca.crt',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-days',
      '3650',
      '-extfile',
      'san.ext',
      '-out',
      'tls.crt',
    );
    const read = (name: string) => readFileSync(join(dir, name), 'utf8');
    return { ca: read('ca.crt'), cert: read('tls.crt'), key: read('tls.key') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
