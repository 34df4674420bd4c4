// The certificate files `floatip serve` is given, as an operator meets them: a missing file, a key
// given for the certificate, a key of another certificate, or a CA file holding no certificate stops
// start-up with one line naming the flag and the file (README, "Running it"), not OpenSSL's words
// alone, and not (for a CA file) a start whose every client the handshake then refuses.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../harness/free-port.js';
import { webhookCertificate } from './webhook-tls.js';

const dir = mkdtempSync(join(tmpdir(), 'floatip-cli-tls-'));
const file = (name: string, text: string) => (writeFileSync(join(dir, name), text), join(dir, name));

beforeAll(async () => {
  await promisify(execFile)('npm', ['run', 'build', '--silent']);
}, 120_000);
afterAll(() => rmSync(dir, { recursive: true }));

async function serve(...flags: string[]): Promise<{ code: number; stderr: string }> {
  const ports = ['--port', '--api-port', '--embedded-port'];
  const args = ['dist/src/main.js', 'serve', '--leader-elect=false'];
  for (const p of ports) args.push(p, String(await freePort()));
  try {
    await promisify(execFile)('node', [...args, ...flags], { timeout: 30_000 });
    return { code: 0, stderr: '' };
  } catch (err) {
    const e = err as { code: number; stderr: string };
    return { code: e.code, stderr: e.stderr };
  }
}

test('each bad certificate file stops start-up with one line naming its flag and file', async () => {
  const one = webhookCertificate(['IP:127.0.0.1']);
  const other = webhookCertificate(['IP:127.0.0.1']);
  const crt = file('tls.crt', one.cert);
  const key = file('tls.key', one.key);
  const otherKey = file('other.key', other.key);
  const webhookPort = String(await freePort());
  const cases: [string[], string][] = [
    [
      ['--tls-cert-file', '/nonexistent.crt', '--tls-private-key-file', key],
      'floatip: --tls-cert-file /nonexistent.crt: no such file',
    ],
    [
      ['--tls-cert-file', key, '--tls-private-key-file', crt],
      `floatip: --tls-cert-file ${key}: no PEM certificate in it`,
    ],
    [
      ['--tls-cert-file', crt, '--tls-private-key-file', otherKey],
      `floatip: --tls-private-key-file ${otherKey} is not the key of the certificate in --tls-cert-file ${crt}`,
    ],
    [
      ['--tls-cert-file', crt, '--tls-private-key-file', key, '--extender-client-ca-file', key],
      `floatip: --extender-client-ca-file ${key}: no PEM certificate in it`,
    ],
    [
      ['--webhook-port', webhookPort, '--webhook-cert-file', crt, '--webhook-key-file', crt],
      `floatip: --webhook-key-file ${crt}: no PEM private key in it`,
    ],
    [
      ['--webhook-port', webhookPort, '--webhook-cert-file', crt, '--webhook-key-file', otherKey],
      `floatip: --webhook-key-file ${otherKey} is not the key of the certificate in --webhook-cert-file ${crt}`,
    ],
  ];
  for (const [flags, line] of cases) {
    const { code, stderr } = await serve(...flags);
    expect([code, stderr]).toEqual([1, `${line}\n`]);
  }
}, 120_000);
