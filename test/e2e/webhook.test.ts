// E2E-W1..W3: floatip's validating admission webhook on the real kube-apiserver v1.20.2, which
// calls it on 127.0.0.1 over HTTPS, trusting the caBundle (a CA made as the README's openssl
// recipe makes it). The ValidatingWebhookConfiguration is manifests/webhook/webhook.yaml's, with
// the URL and caBundle of this floatip instead of the in-cluster Service. kubectl apply of each
// bad ConfigMap, FloatingIP and Pool is refused in floatip's words, good ones pass, as is a pod
// written with addresses in its annotation; with floatip
// stopped an unrelated ConfigMap is written at once, and a floatingip-config edit goes through
// (Ignore) and is then judged by the watcher as without the webhook.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CoreV1Api, type CoreV1Event } from '@kubernetes/client-node';
import { parseAllDocuments, stringify } from 'yaml';
import { webhookCertificate } from '../integration/webhook-tls.js';
import { clusterKubeConfig, loadCluster } from './cluster.js';
import { freePort } from '../harness/free-port.js';
import { FloatipProcess, scenario } from './floatip.js';
import { GROUPS, SUITE_CONFIG } from './groups.js';
import { applyCrds, deleteAllFloatingIPs, deletePool } from './ipam-state.js';
import { cleanUpFile, note, prepareFile } from './suite.js';
import { waitFor } from './wait.js';

const run = promisify(execFile);
const core = clusterKubeConfig().makeApiClient(CoreV1Api);
/** Today's kubectl: it prints admission warnings ("Warning: ...") on stderr. */
const KUBECTL_NOW = '/usr/bin/kubectl';
const HOOK_NAME = 'floatip-e2e';
// E2E-2's range is 10.131.2.10~10.131.2.80; no scenario of this file runs pods
const IN_USE = '10.131.2.78';
const POOL_IP = '10.131.2.77';
const POOL = 'e2e-webhook';

let dir: string;
let webhookPort: number;
let floatip: FloatipProcess | undefined;
let args: string[];

interface Result {
  readonly code: number;
  readonly out: string;
  readonly ms: number;
}

/** kubectl apply of a manifest; never throws: a refusal is a result. */
async function apply(manifest: object): Promise<Result> {
  const file = join(dir, 'manifest.yaml');
  await writeFile(file, stringify(manifest));
  return kubectl(['apply', '-f', file]);
}

async function kubectl(argv: string[]): Promise<Result> {
  const { KUBECONFIG } = loadCluster();
  const started = Date.now();
  try {
    const { stdout, stderr } = await run(KUBECTL_NOW, ['--kubeconfig', KUBECONFIG, ...argv], {
      env: { ...process.env, HOME: dir },
    });
    return { code: 0, out: `${stdout}${stderr}`.trim(), ms: Date.now() - started };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string; message: string };
    return {
      code: e.code ?? 1,
      out: `${e.stdout ?? ''}${e.stderr ?? e.message}`.trim(),
      ms: Date.now() - started,
    };
  }
}

const configMap = (entries: unknown, extra: Record<string, string> = {}) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: {
    name: 'floatingip-config',
    namespace: 'kube-system',
    labels: { 'floatip.io/validate': 'true' },
    ...(Object.keys(extra).length ? { annotations: extra } : {}),
  },
  data: { floatingips: typeof entries === 'string' ? entries : JSON.stringify(entries) },
});

const fip = (name: string, spec: Record<string, unknown>, labels?: Record<string, string>) => ({
  apiVersion: 'galaxy.k8s.io/v1alpha1',
  kind: 'FloatingIP',
  metadata: { name, ...(labels ? { labels } : {}) },
  spec: { key: 'dp_e2e-webhook_app_', attribute: '', policy: 2, updateTime: '2024-01-30T07:30:59Z', ...spec },
});

const pool = (size: number) => ({
  apiVersion: 'galaxy.k8s.io/v1alpha1',
  kind: 'Pool',
  metadata: { name: POOL, namespace: 'kube-system' },
  size,
  preAllocateIP: false,
});

const CNI_ARGS = 'k8s.v1.cni.galaxy.io/args';

const denied = (hook: string, message: string) =>
  `admission webhook "${hook}" denied the request: ${message}`;

async function startFloatip(): Promise<FloatipProcess> {
  const started = await FloatipProcess.start({ name: 'webhook', args });
  await waitFor(
    'floatip’s webhook to listen',
    async () => (started.records('admission webhook listening').length ? true : undefined),
    {
      timeoutMs: 30_000,
      intervalMs: 100,
      describe: () => started.tail(10),
    },
  );
  return started;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'floatip-e2e-webhook-'));
  await prepareFile([]);
  await applyCrds();
  const tls = webhookCertificate(['IP:127.0.0.1']);
  await writeFile(join(dir, 'tls.crt'), tls.cert);
  await writeFile(join(dir, 'tls.key'), tls.key);
  webhookPort = Number(process.env.FLOATIP_E2E_WEBHOOK_PORT ?? (await freePort()));
  args = [
    `--webhook-port=${webhookPort}`,
    `--webhook-cert-file=${join(dir, 'tls.crt')}`,
    `--webhook-key-file=${join(dir, 'tls.key')}`,
  ];
  floatip = await startFloatip();
  await floatip.ready();
  // the shipped configuration, pointed at this floatip
  const shipped = parseAllDocuments(await readFile('manifests/webhook/webhook.yaml', 'utf8')).map((d) =>
    d.toJS(),
  );
  const config = shipped.find((d) => d.kind === 'ValidatingWebhookConfiguration');
  config.metadata = { name: HOOK_NAME };
  for (const hook of config.webhooks) {
    hook.clientConfig = {
      url: `https://127.0.0.1:${webhookPort}${hook.clientConfig.service.path}`,
      caBundle: Buffer.from(tls.ca).toString('base64'),
    };
  }
  const registered = await apply(config);
  expect(registered).toMatchObject({ code: 0 });
  // the API server picks a new configuration up within a moment
  await waitFor(
    'the API server to call the webhook',
    async () => ((await apply(fip('web-1', {}))).out.includes('denied the request') ? true : undefined),
    { timeoutMs: 30_000, intervalMs: 250 },
  );
});

afterAll(async () => {
  // never leave a failurePolicy Fail webhook behind for the next file's FloatingIP writes
  await kubectl(['delete', 'validatingwebhookconfiguration', HOOK_NAME, '--ignore-not-found']);
  await kubectl(['-n', 'kube-system', 'delete', 'configmap', 'e2e-unrelated', '--ignore-not-found']);
  await deletePool(POOL).catch(() => undefined);
  await deleteAllFloatingIPs();
  await cleanUpFile([]);
  await rm(dir, { recursive: true, force: true });
});

scenario(
  'E2E-W1 FloatingIP and Pool objects: bad ones refused in floatip’s words, good ones pass',
  async () => {
    const hook = 'floatingip.floatip.io';
    const refused: [object, string][] = [
      [fip('web-1', {}), 'FloatingIP web-1: FloatingIP name is not an IP address: "web-1"'],
      [
        fip('fd00-131-6-0-0-0-0-20', {}),
        'FloatingIP fd00-131-6-0-0-0-0-20: the name must be the address in canonical form: fd00-131-6--20',
      ],
      [
        fip('10.131.2.76', { key: 'web' }),
        'FloatingIP 10.131.2.76: spec.key "web" is not an allocation key (<type>_<namespace>_<app>_<pod>, optionally after pool__<pool>_, or pool__<pool>_)',
      ],
      [
        fip('10.200.0.5', {}),
        'FloatingIP 10.200.0.5: 10.200.0.5 is in no range of the floating IP configuration; add it to the ConfigMap, or label the object reserved to set it aside',
      ],
    ];
    for (const [object, message] of refused) {
      const result = await apply(object);
      expect(result.code).not.toBe(0);
      expect(result.out).toContain(denied(hook, message));
    }
    // the policy is also bounded by floatip's CRD schema, which the API server applies first
    expect((await apply(fip('10.131.2.76', { policy: 3 }))).out).toMatch(/spec\.policy/);

    expect(await apply(fip(IN_USE, {}))).toMatchObject({
      code: 0,
      out: `floatingip.galaxy.k8s.io/${IN_USE} created`,
    });
    expect(await apply(fip('10.200.0.5', {}, { reserved: 'for-a-router' }))).toMatchObject({ code: 0 });
    expect(await apply(fip(POOL_IP, { key: `pool__${POOL}_` }))).toMatchObject({ code: 0 });
    // an existing object outside the configuration may be updated (floatip keeps orphans that way)
    expect(
      await apply(fip('10.200.0.5', { key: 'pool__elsewhere_' }, { reserved: 'for-a-router' })),
    ).toMatchObject({
      code: 0,
    });

    // Pools: the size the pool already holds is allowed, with floatip's warning printed by kubectl
    await waitFor('floatip to see the pool’s address', async () => {
      const res = await fetch(`http://127.0.0.1:${floatip!.apiPort}/v1/ip?poolName=${POOL}`);
      const body = (await res.json()) as { content?: unknown[] };
      return body.content?.length === 1 ? true : undefined;
    });
    const small = await apply(pool(0));
    expect(small.code).toBe(0);
    expect(small.out).toContain(
      `Warning: Pool kube-system/${POOL}: size 0 is below what the pool holds (addresses for 1 pod); none is taken away (surplus is never released), and pods beyond the size are refused at bind (reached pool ${POOL} size limit of 0)`,
    );
    const enough = await apply(pool(2));
    expect(enough).toMatchObject({ code: 0, out: `pool.galaxy.k8s.io/${POOL} configured` });
    // a negative size: floatip's CRD schema refuses it before any webhook (galaxy's CRD has no
    // schema; there the webhook's own check, tested in test/integration/webhook.test.ts, refuses it)
    expect((await apply(pool(-1))).out).toMatch(/size/);
  },
);

scenario(
  'E2E-W2 the floatingip-config ConfigMap: the watcher’s words at kubectl apply, and orphans listed',
  async () => {
    const hook = 'configmap.floatip.io';
    const e2 = SUITE_CONFIG.findIndex((e) => e.ips.includes(GROUPS.never.entries[0]!.ips[0]!));
    expect(e2).toBeGreaterThanOrEqual(0);
    const edited = (change: Record<string, unknown>) =>
      SUITE_CONFIG.map((e, i) => (i === e2 ? { ...e, ...change } : e));
    const refused: [unknown, RegExp][] = [
      ['[{"ips": ', /not JSON: /],
      [
        edited({ gateway: '10.132.2.1' }),
        new RegExp(`floatingips\\[${e2}\\]\\.gateway "10\\.132\\.2\\.1": `),
      ],
      [edited({ subnet: '10.131.2.0/33' }), new RegExp(`floatingips\\[${e2}\\]\\.subnet`)],
      [edited({ vlan: 70000 }), new RegExp(`floatingips\\[${e2}\\]\\.vlan`)],
    ];
    for (const [entries, pattern] of refused) {
      const result = await apply(configMap(entries));
      expect(result.code).not.toBe(0);
      expect(result.out).toContain(`admission webhook "${hook}" denied the request: `);
      expect(result.out).toMatch(pattern);
    }
    // dropping the range that holds IN_USE and POOL_IP: refused with their list, unless overridden
    const narrower = edited({ ips: ['10.131.2.10~10.131.2.70'] });
    const orphaning = await apply(configMap(narrower));
    expect(orphaning.out).toContain(
      denied(
        hook,
        `the change leaves 2 addresses in use outside the configuration: ${POOL_IP} (pool__${POOL}_), ${IN_USE} (dp_e2e-webhook_app_); release them first, or annotate the ConfigMap floatip.io/allow-orphans="true" to keep them as orphans`,
      ),
    );
    // the shipped configuration passes
    expect(await apply(configMap(SUITE_CONFIG))).toMatchObject({ code: 0 });
  },
);

scenario(
  'E2E-W4 pods: one created with addresses, or annotated with them, is refused; one that only asks, and a label edit, pass',
  async () => {
    const hook = 'pod.floatip.io';
    const ipinfos = [{ ip: '10.131.2.79/24', vlan: 0, gateway: '10.131.2.1' }];
    const asks = { request_ip_range: [['10.131.2.79']] };
    const pod = (name: string, args: unknown) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: 'default', annotations: { [CNI_ARGS]: JSON.stringify(args) } },
      spec: { containers: [{ name: 'app', image: 'app' }] },
    });
    const copied = await apply(pod('e2e-webhook-copy', { ...asks, common: { ipinfos } }));
    expect(copied.code).not.toBe(0);
    expect(copied.out).toContain(
      denied(
        hook,
        `pod default/e2e-webhook-copy: annotation ${CNI_ARGS} sets common.ipinfos (10.131.2.79/24); a pod's addresses are written by floatip's bind alone: leave common.ipinfos out (request_ip_range may stay)`,
      ),
    );
    expect(await apply(pod('e2e-webhook-ask', asks))).toMatchObject({
      code: 0,
      out: 'pod/e2e-webhook-ask created',
    });
    try {
      const annotated = await kubectl([
        '-n',
        'default',
        'annotate',
        '--overwrite',
        'pod',
        'e2e-webhook-ask',
        `${CNI_ARGS}=${JSON.stringify({ ...asks, common: { ipinfos } })}`,
      ]);
      expect(annotated.code).not.toBe(0);
      expect(annotated.out).toContain(
        denied(hook, `pod default/e2e-webhook-ask: annotation ${CNI_ARGS} changes`),
      );
      expect(await kubectl(['-n', 'default', 'label', 'pod', 'e2e-webhook-ask', 'tier=web'])).toMatchObject({
        code: 0,
        out: 'pod/e2e-webhook-ask labeled',
      });
    } finally {
      await kubectl(['-n', 'default', 'delete', 'pod', 'e2e-webhook-ask', '--grace-period=0', '--force']);
    }
  },
);

scenario(
  'E2E-W3 floatip stopped: ConfigMaps are not held up; the bad edit goes through and the watcher refuses it',
  async () => {
    await floatip!.stop();
    floatip = undefined;
    // FloatingIP writes need the webhook (failurePolicy Fail)
    const fipWrite = await apply(fip('10.131.2.75', {}));
    expect(fipWrite.code).not.toBe(0);
    expect(fipWrite.out).toContain('failed calling webhook "floatingip.floatip.io"');
    // an unrelated ConfigMap in kube-system never reaches the webhook
    const unrelated = await kubectl([
      '-n',
      'kube-system',
      'create',
      'configmap',
      'e2e-unrelated',
      '--from-literal=a=b',
    ]);
    expect(unrelated).toMatchObject({ code: 0, out: 'configmap/e2e-unrelated created' });
    // the labelled floatingip-config does, and passes when nobody answers (failurePolicy Ignore)
    const bad = await apply(configMap(SUITE_CONFIG.map((e, i) => (i === 0 ? { ...e, gateway: '' } : e))));
    expect(bad.code).toBe(0);
    expect(bad.out).toContain('configmap/floatingip-config configured');
    note(
      `webhook: with floatip stopped, an unrelated ConfigMap was created in ${unrelated.ms} ms and the floatingip-config edit went through in ${bad.ms} ms`,
    );
    expect(unrelated.ms).toBeLessThan(3000);
    expect(bad.ms).toBeLessThan(3000);

    // floatip started again judges it as without the webhook: a Warning Event, not ready
    const since = Date.now();
    floatip = await startFloatip();
    const event = await waitFor(
      'the watcher’s InvalidFloatingIPConfig Event',
      async () => {
        const list = await core.listNamespacedEvent({ namespace: 'kube-system' });
        return list.items.find(
          (e: CoreV1Event) =>
            e.reason === 'InvalidFloatingIPConfig' &&
            (e.lastTimestamp ?? e.eventTime ?? e.metadata?.creationTimestamp ?? new Date(0)).valueOf() >=
              since - 2000,
        );
      },
      { timeoutMs: 30_000, intervalMs: 250 },
    );
    expect(event.message).toMatch(/floatingips\[0\]\.gateway "": gateway is empty/);
    expect(await floatip.isReady()).toBe(false);
    // and the good configuration, through the webhook again, makes it ready
    expect(await apply(configMap(SUITE_CONFIG))).toMatchObject({
      code: 0,
      out: 'configmap/floatingip-config configured',
    });
    await floatip.ready();
    await floatip.stop();
    floatip = undefined;
  },
);
