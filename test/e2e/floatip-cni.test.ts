// E2E-C1: the whole path. Pods bound through floatip as kube-scheduler's extender get their
// ipinfos; floatip-cni, run inside two "node" network namespaces as kubelet would run it there,
// reads each pod, and its addresses' FloatingIP objects, from the real kube-apiserver as the
// ServiceAccount of manifests/cni-rbac.yaml (get pods and FloatingIPs only; its token and the
// cluster CA as files), configures the pod's namespace through the
// macvlan delegate, and the pods ping each other over IPv4 and IPv6.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { CoreV1Api } from '@kubernetes/client-node';
import { writeKubeconfig } from '../../bench/cni-fixtures.js';
import { cniEnv, stateDir } from '../cni/helpers.js';
import { Lab, NODE_API_PORT, pings, runPlugin } from '../cni/netns.js';
import { ensureDebianPackages } from '../cni/setup.js';
import { CNI_ARGS_ANNOTATION } from '../../src/cni/args.js';
import { ENI_IP, clusterKubeConfig, kubeLine, loadCluster } from './cluster.js';
import type { FakeKubelet } from './fake-kubelet.js';
import { scenario, type FloatipProcess } from './floatip.js';
import { GROUPS, onGroup } from './groups.js';
import { addressesOf, expectConsistent, ipinfosOf } from './ipam-state.js';
import { Pods } from './pods.js';
import { cleanUpFile, endNamespace, note, prepareFile, startFloatip, startNamespace } from './suite.js';
import { waitFor } from './wait.js';
import { createDeployment, deployment } from './workloads.js';

const g = GROUPS.dual;
const ns = 'e2e-cni';
const pods = new Pods(ns);
const core = clusterKubeConfig().makeApiClient(CoreV1Api);
const lab = new Lab();
let floatip: FloatipProcess;
let kubelet: FakeKubelet | undefined;

beforeAll(async () => {
  await ensureDebianPackages();
  await prepareFile([g]);
  floatip = await startFloatip({ name: 'cni' });
  kubelet = await startNamespace(ns);
}, 300_000);

afterAll(async () => {
  await lab.destroy();
  await endNamespace(ns, kubelet);
  await cleanUpFile([g]);
});

/** The kubeconfig a node gets: the ServiceAccount's token and the cluster CA, as files. */
async function nodeKubeconfig(): Promise<string> {
  const { KUBECTL, KUBECONFIG } = loadCluster();
  await promisify(execFile)(KUBECTL, ['--kubeconfig', KUBECONFIG, 'apply', '-f', 'manifests/cni-rbac.yaml']);
  const { token, ca } = kubeLine() === 'current' ? await requestedToken() : await secretToken();
  // the node's own loopback, forwarded to the cluster's kube-apiserver
  return writeKubeconfig(
    `https://127.0.0.1:${NODE_API_PORT}`,
    { tokenFile: 'token' },
    { 'certificate-authority': 'ca.crt' },
    { token, 'ca.crt': ca },
  );
}

/** v1.20: the token Secret the token controller writes for the ServiceAccount. */
async function secretToken(): Promise<{ token: Buffer; ca: Buffer }> {
  const secret = await waitFor(
    'the floatip-cni ServiceAccount’s token',
    async () => {
      const sa = await core.readNamespacedServiceAccount({ name: 'floatip-cni', namespace: 'kube-system' });
      const name = sa.secrets?.[0]?.name;
      return name ? core.readNamespacedSecret({ name, namespace: 'kube-system' }) : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 200 },
  );
  return {
    token: Buffer.from(secret.data!.token!, 'base64'),
    ca: Buffer.from(secret.data!['ca.crt']!, 'base64'),
  };
}

/** Since v1.24 no token Secret is made: a TokenRequest token, and the CA every namespace publishes. */
async function requestedToken(): Promise<{ token: Buffer; ca: Buffer }> {
  const { KUBECTL, KUBECONFIG } = loadCluster();
  const { stdout } = await promisify(execFile)(KUBECTL, [
    '--kubeconfig',
    KUBECONFIG,
    '-n',
    'kube-system',
    'create',
    'token',
    'floatip-cni',
    '--duration=1h',
  ]);
  const root = await core.readNamespacedConfigMap({ name: 'kube-root-ca.crt', namespace: 'kube-system' });
  return { token: Buffer.from(stdout.trim()), ca: Buffer.from(root.data!['ca.crt']!) };
}

scenario(
  'E2E-C1 pods bound through floatip, configured by floatip-cni from their annotations, ping each other',
  async () => {
    const kubeconfig = await nodeKubeconfig();
    const masters = await lab.twoNodes('node1', 'node2');
    const nodeNs = [lab.ns('node1'), lab.ns('node2')];
    await lab.exposeApiServer(loadCluster().APISERVER_URL, nodeNs);

    await createDeployment(deployment(ns, 'cni', { replicas: 2, nodeSelector: onGroup(g) }));
    const running = await pods.running('app=cni', 2);
    const state = stateDir();
    const network = (node: number) => ({
      cniVersion: '1.0.0',
      name: 'underlay',
      type: 'floatip-cni',
      kubeconfig,
      stateDir: state,
      delegate: { type: 'macvlan', master: masters[node]!, mode: 'bridge' },
    });
    const configured: { netns: string; v4: string; v6: string }[] = [];
    for (const [i, pod] of running.entries()) {
      const node = g.nodes.indexOf(pod.spec!.nodeName!);
      expect(node).toBeGreaterThanOrEqual(0);
      const netns = await lab.addNamespace(`pod${i}`);
      const args = {
        K8S_POD_NAMESPACE: ns,
        K8S_POD_NAME: pod.metadata!.name!,
        K8S_POD_UID: pod.metadata!.uid!,
      };
      const started = Date.now();
      const add = await runPlugin(cniEnv('ADD', `sandbox-${i}`, netns, args), network(node), nodeNs[node]);
      note(`floatip-cni ADD of ${pod.metadata!.name} on ${pod.spec!.nodeName}: ${Date.now() - started} ms`);
      expect({ code: add.code, stderr: add.stderr }).toEqual({ code: 0, stderr: '' });
      const infos = ipinfosOf(pod);
      expect(add.out.ips).toEqual(
        infos.map((info) => ({ interface: 0, address: info.ip, gateway: info.gateway })),
      );
      const [v4, v6] = addressesOf(pod) as [string, string];
      configured.push({ netns, v4, v6 });
    }
    const [a, b] = configured as [(typeof configured)[0], (typeof configured)[0]];
    expect(await pings(a.netns, b.v4)).toBe(true);
    expect(await pings(b.netns, a.v4)).toBe(true);
    expect(await pings(a.netns, b.v6)).toBe(true);
    expect(await pings(b.netns, a.v6)).toBe(true);

    // a pod whose creator copied a running pod's annotation and set its node, past the scheduler
    // and floatip's bind: no interface for the other pod's addresses
    const victim = running[0]!;
    const thief = 'cni-thief';
    const created = await core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: {
          name: thief,
          annotations: { [CNI_ARGS_ANNOTATION]: victim.metadata!.annotations![CNI_ARGS_ANNOTATION]! },
        },
        spec: {
          nodeName: victim.spec!.nodeName!,
          containers: [{ name: 'app', image: 'app', resources: { limits: { [ENI_IP]: '1' } } }],
        },
      },
    });
    const node = g.nodes.indexOf(victim.spec!.nodeName!);
    const stolen = await runPlugin(
      cniEnv('ADD', 'sandbox-thief', await lab.addNamespace('thief'), {
        K8S_POD_NAMESPACE: ns,
        K8S_POD_NAME: thief,
        K8S_POD_UID: created.metadata!.uid!,
      }),
      network(node),
      nodeNs[node],
    );
    expect({ code: stolen.code, refusal: stolen.out.code, msg: stolen.out.msg }).toEqual({
      code: 1,
      refusal: 106,
      msg: expect.stringMatching(
        new RegExp(
          `^pod ${ns}/${thief} annotation names ${configured[0]!.v4.replace(/\./g, '\\.')}, which floatip has not given it: it is held by key dp_${ns}_cni_${victim.metadata!.name}`,
        ),
      ),
    });
    await core.deleteNamespacedPod({ namespace: ns, name: thief, gracePeriodSeconds: 0 });
    await pods.podGone(thief);
    await expectConsistent('E2E-C1 configured', { floatip });
  },
);
