// The kubeconfig forms floatip-cni reads, against a real HTTPS server that asks for a client
// certificate: a client certificate and key (inline `-data` or files relative to the kubeconfig),
// the cluster CA (inline or file), a bearer token (inline or file), insecure-skip-tls-verify; and
// the forms it refuses, by name.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeKubeconfig } from '../../bench/cni-fixtures.js';
import { get, loadKubeconfig } from '../../src/cni-plugin/kube.js';
import type { CniError } from '../../src/cni-plugin/protocol.js';

let server: Server;
let url: string;
const pki: Record<string, Buffer> = {};
const b64 = (name: string) => pki[name]!.toString('base64');

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'floatip-cni-pki-'));
  const ssl = (args: string[], input = '') =>
    execFileSync('openssl', args, { cwd: dir, input, stdio: 'pipe' });
  ssl([
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'ca.key',
    '-out',
    'ca.crt',
    '-days',
    '1',
    '-subj',
    '/CN=test-ca',
  ]);
  for (const [name, subject, ext] of [
    ['server', '/CN=127.0.0.1', 'subjectAltName=IP:127.0.0.1'],
    ['client', '/CN=system:node:n1/O=system:nodes', 'extendedKeyUsage=clientAuth'],
  ] as const) {
    writeFileSync(join(dir, `${name}.ext`), `${ext}\n`);
    ssl([
      'req',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.csr`,
      '-subj',
      subject,
    ]);
    ssl([
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'ca.crt',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      `${name}.crt`,
      '-days',
      '1',
      '-extfile',
      `${name}.ext`,
    ]);
  }
  for (const f of ['ca.crt', 'server.crt', 'server.key', 'client.crt', 'client.key'])
    pki[f] = readFileSync(join(dir, f));
  // the server answers who it saw: the client certificate's subject, or the bearer token
  server = createServer(
    {
      cert: pki['server.crt'],
      key: pki['server.key'],
      ca: pki['ca.crt'],
      requestCert: true,
      rejectUnauthorized: false,
    },
    (req, res) => {
      const cert = (req.socket as TLSSocket).getPeerCertificate();
      res.end(
        JSON.stringify({ cn: cert?.subject?.CN ?? null, authorization: req.headers.authorization ?? null }),
      );
    },
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
}, 60_000);

afterAll(() => new Promise<void>((r) => server.close(() => r())));

const whoAmI = async (kubeconfig: string) =>
  JSON.parse((await get(await loadKubeconfig(kubeconfig), '/', 5000)).body) as object;

test('a client certificate and key with the cluster CA, inline', async () => {
  const file = writeKubeconfig(
    url,
    { 'client-certificate-data': b64('client.crt'), 'client-key-data': b64('client.key') },
    { 'certificate-authority-data': b64('ca.crt') },
  );
  expect(await whoAmI(file)).toEqual({ cn: 'system:node:n1', authorization: null });
});

test('the same as files relative to the kubeconfig', async () => {
  const file = writeKubeconfig(
    url,
    { 'client-certificate': 'node.crt', 'client-key': 'node.key' },
    { 'certificate-authority': 'ca.crt' },
    { 'node.crt': pki['client.crt']!, 'node.key': pki['client.key']!, 'ca.crt': pki['ca.crt']! },
  );
  expect(await whoAmI(file)).toEqual({ cn: 'system:node:n1', authorization: null });
});

test('a bearer token, inline or from a file; insecure-skip-tls-verify without a CA', async () => {
  expect(
    await whoAmI(writeKubeconfig(url, { token: 'abc' }, { 'certificate-authority-data': b64('ca.crt') })),
  ).toEqual({
    cn: null,
    authorization: 'Bearer abc',
  });
  const fromFile = writeKubeconfig(
    url,
    { tokenFile: 'token' },
    { 'insecure-skip-tls-verify': true },
    { token: 'def\n' },
  );
  expect(await whoAmI(fromFile)).toEqual({ cn: null, authorization: 'Bearer def' });
});

test('a server the CA does not vouch for is unreachable, with the TLS reason', async () => {
  const err = (await whoAmI(writeKubeconfig(url, { token: 'abc' })).catch((e: unknown) => e)) as CniError;
  expect({ code: err.code, message: err.message }).toEqual({
    code: 104,
    message: `API server ${url} unreachable: self-signed certificate in certificate chain`,
  });
});

test('exec and auth-provider users are refused by name', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'floatip-cni-kc-'));
  const file = join(dir, 'kubeconfig');
  for (const user of ['{exec: {command: aws}}', '{auth-provider: {name: gcp}}']) {
    writeFileSync(
      file,
      `clusters: [{name: c, cluster: {server: "${url}"}}]\nusers: [{name: u, user: ${user}}]\n`,
    );
    const err = (await loadKubeconfig(file).catch((e: unknown) => e)) as CniError;
    expect({ code: err.code, message: err.message }).toEqual({
      code: 7,
      message: expect.stringMatching(
        /^kubeconfig .*: a user with "(exec|auth-provider)" is not supported: use a token, a token file or a client certificate$/,
      ),
    });
  }
});

test('a kubeconfig, or a file it names, over 4 MiB is refused naming it (read whole, a regular file of any size was taken)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'floatip-cni-kc-'));
  const file = join(dir, 'kubeconfig');
  const cluster = `clusters: [{name: c, cluster: {server: "${url}", insecure-skip-tls-verify: true}}]\n`;
  writeFileSync(file, `${cluster}# ${'x'.repeat(5 * 2 ** 20)}\n`);
  let err = (await loadKubeconfig(file).catch((e: unknown) => e)) as CniError;
  expect({ code: err.code, message: err.message }).toEqual({
    code: 7,
    message: `kubeconfig ${file} is over 4194304 bytes: no kubeconfig is`,
  });
  writeFileSync(join(dir, 'token'), 'x'.repeat(5 * 2 ** 20));
  writeFileSync(file, `${cluster}users: [{name: u, user: {tokenFile: token}}]\n`);
  err = (await loadKubeconfig(file).catch((e: unknown) => e)) as CniError;
  expect({ code: err.code, message: err.message }).toEqual({
    code: 7,
    message: `kubeconfig ${file}: tokenFile token is over 4194304 bytes: no tokenFile is`,
  });
});

test('/dev/zero as the kubeconfig or its tokenFile is refused after 4 MiB (5 GB of memory, or V8’s string limit as code 100)', async () => {
  let err = (await loadKubeconfig('/dev/zero').catch((e: unknown) => e)) as CniError;
  expect({ code: err.code, message: err.message }).toEqual({
    code: 7,
    message: 'kubeconfig /dev/zero is over 4194304 bytes: no kubeconfig is',
  });
  const file = join(mkdtempSync(join(tmpdir(), 'floatip-cni-kc-')), 'kubeconfig');
  writeFileSync(
    file,
    `clusters: [{name: c, cluster: {server: "${url}"}}]\nusers: [{name: u, user: {tokenFile: /dev/zero}}]\n`,
  );
  err = (await loadKubeconfig(file).catch((e: unknown) => e)) as CniError;
  expect(err.message).toBe(`kubeconfig ${file}: tokenFile /dev/zero is over 4194304 bytes: no tokenFile is`);
});
