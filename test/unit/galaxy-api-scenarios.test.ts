// galaxy's own unit-test scenarios of its API and constant packages (tkestack/galaxy, pkg/api:
// galaxy/constant/constant_test.go, cniutil/cni_test.go, galaxy/galaxy_test.go, k8s/k8s_test.go),
// and the decoders and encoders those packages hold (constant.go's annotation codec and release
// policies, cniutil's CNI_ARGS reader), played against floatip's counterparts: the annotation's one
// codec (src/cni/args.ts), the pod facts (src/pods/pod-facts.ts) and floatip-cni's reading of the
// environment and of galaxy's `ipinfos=` argument (src/cni-plugin). Each test is named after the
// galaxy test (or the galaxy function) it plays. What has no floatip counterpart is listed at the
// end of the file and not played.
import type { V1Pod } from '@kubernetes/client-node';
import {
  CNI_ARGS_ANNOTATION,
  CniArgsError,
  formatCniArgs,
  parseCniArgs,
  type IPInfo,
} from '../../src/cni/args.js';
import { podAddresses } from '../../src/cni-plugin/ipinfos.js';
import { CniError, parseNetworkConfig, readEnvironment } from '../../src/cni-plugin/protocol.js';
import { ReleasePolicy } from '../../src/ipam/index.js';
import {
  POOL_ANNOTATION,
  RELEASE_POLICY_ANNOTATION,
  cniArgsOfPod,
  policyOfPod,
} from '../../src/pods/pod-facts.js';

// TestFormatParseIPInfo's two ipinfos: 192.168.0.2 and .3 with mask 255.255.0.0, VLANs 2 and 3,
// one gateway
const GALAXY_IPINFOS: IPInfo[] = [
  { ip: '192.168.0.2/16', vlan: 2, gateway: '192.168.0.1' },
  { ip: '192.168.0.3/16', vlan: 3, gateway: '192.168.0.1' },
];
// what Go's encoding/json makes of them: the address unmasked with its prefix length, compact
const GALAXY_IPINFOS_JSON =
  '[{"ip":"192.168.0.2/16","vlan":2,"gateway":"192.168.0.1"},{"ip":"192.168.0.3/16","vlan":3,"gateway":"192.168.0.1"}]';

/** galaxy's daemon's network configuration for its plugin: no kubeconfig, the ipinfos handed over. */
const daemonNetwork = (extra: Record<string, unknown> = {}) =>
  parseNetworkConfig(
    JSON.stringify({
      cniVersion: '0.4.0',
      name: 'galaxy-k8s-vlan',
      type: 'floatip-cni',
      delegate: { type: 'vlan', master: 'eth1' },
      ...extra,
    }),
    'ADD',
  );

/** The environment galaxy's daemon gives its plugin, with CNI_ARGS as given. */
const daemonEnv = (cniArgs: string) =>
  readEnvironment({
    CNI_COMMAND: 'ADD',
    CNI_CONTAINERID: 'ctn1',
    CNI_NETNS: '/var/run/netns/ctn',
    CNI_IFNAME: 'eth0',
    CNI_PATH: '/opt/cni/bin',
    CNI_ARGS: cniArgs,
  });

const podWith = (annotations: Record<string, string> | undefined): V1Pod => ({
  metadata: { name: 'sts-0', namespace: 'ns1', ...(annotations ? { annotations } : {}) },
});

describe('constant_test.go', () => {
  test('TestFormatParseIPInfo: bind writes the two ipinfos byte for byte as galaxy, and reads them back equal', () => {
    const written = formatCniArgs({ groups: [], ipinfos: GALAXY_IPINFOS });
    expect(written).toBe(`{"common":{"ipinfos":${GALAXY_IPINFOS_JSON}}}`);
    expect(parseCniArgs(written)).toEqual({ groups: [], ipinfos: GALAXY_IPINFOS });
  });

  test("TestFormatParseIPInfo: floatip-cni reads galaxy's formatted ipinfos from CNI_ARGS `ipinfos=`, in order", async () => {
    const env = daemonEnv(
      `IgnoreUnknown=1;K8S_POD_NAMESPACE=demo;K8S_POD_NAME=app;K8S_POD_INFRA_CONTAINER_ID=ctn1;ipinfos=${GALAXY_IPINFOS_JSON}`,
    );
    const { args } = await podAddresses(daemonNetwork(), env);
    expect(args.ipinfos).toEqual(GALAXY_IPINFOS);
  });

  test("TestFormatParseIPInfo: floatip-cni reads the same ipinfos from the configuration's `args.ipinfos`", async () => {
    const network = daemonNetwork({ args: { ipinfos: JSON.parse(GALAXY_IPINFOS_JSON) as unknown } });
    const { args } = await podAddresses(network, daemonEnv('K8S_POD_NAMESPACE=demo;K8S_POD_NAME=app'));
    expect(args.ipinfos).toEqual(GALAXY_IPINFOS);
  });
});

describe('constant.go (the code constant_test.go tests)', () => {
  test('IPInfo as Go decodes it from `ipinfos=`: keys in any case, a missing vlan 0, other keys ignored', async () => {
    const env = daemonEnv(
      'K8S_POD_NAMESPACE=demo;K8S_POD_NAME=app;ipinfos=[{"IP":"192.168.0.2/16","VLAN":2,"Gateway":"192.168.0.1","routable_subnet":"10.0.0.0/24"},{"ip":"192.168.0.3/16","gateway":"192.168.0.1"}]',
    );
    const { args } = await podAddresses(daemonNetwork(), env);
    expect(args.ipinfos).toEqual([GALAXY_IPINFOS[0], { ...GALAXY_IPINFOS[1], vlan: 0 }]);
  });

  test("the annotation names are galaxy's", () => {
    expect(CNI_ARGS_ANNOTATION).toBe('k8s.v1.cni.galaxy.io/args');
    expect(RELEASE_POLICY_ANNOTATION).toBe('k8s.v1.cni.galaxy.io/release-policy');
    expect(POOL_ANNOTATION).toBe('tke.cloud.tencent.com/eni-ip-pool');
  });

  test('UnmarshalCniArgs: an absent or empty annotation asks for nothing', () => {
    expect(cniArgsOfPod(podWith(undefined))).toEqual({ groups: [], ipinfos: [] });
    expect(cniArgsOfPod(podWith({ [CNI_ARGS_ANNOTATION]: '' }))).toEqual({ groups: [], ipinfos: [] });
  });

  test('UnmarshalCniArgs: malformed JSON is refused with galaxy\'s "unmarshal pod cni args: " prefix', () => {
    const pod = podWith({ [CNI_ARGS_ANNOTATION]: '{"request_ip_range":' });
    expect(() => cniArgsOfPod(pod)).toThrow(CniArgsError);
    expect(() => cniArgsOfPod(pod)).toThrow(/^unmarshal pod cni args: /);
  });

  test('UnmarshalCniArgs: ip, vlan and gateway are read, other keys of an ipinfo ignored (routable_subnet)', () => {
    const args = parseCniArgs(
      '{"common":{"ipinfos":[{"ip":"192.168.0.68/26","vlan":2,"gateway":"192.168.0.65","routable_subnet":"10.0.0.0/24"}]}}',
    );
    expect(args.ipinfos).toEqual([{ ip: '192.168.0.68/26', vlan: 2, gateway: '192.168.0.65' }]);
  });

  test('MarshalCniArgs: no ipinfos is `{"common":{}}` (common always, ipinfos omitted when empty)', () => {
    expect(formatCniArgs({ groups: [], ipinfos: [] })).toBe('{"common":{}}');
  });

  test.each([
    ['never', ReleasePolicy.Never],
    ['immutable', ReleasePolicy.Immutable],
    ['', ReleasePolicy.PodDelete],
    ['Never', ReleasePolicy.PodDelete],
    ['IMMUTABLE', ReleasePolicy.PodDelete],
    [' never', ReleasePolicy.PodDelete],
    ['forever', ReleasePolicy.PodDelete],
  ])('ConvertReleasePolicy: %j is policy %d', (value, policy) => {
    expect(policyOfPod(podWith({ [RELEASE_POLICY_ANNOTATION]: value }))).toBe(policy);
  });

  test('ConvertReleasePolicy: no annotation (or none at all) is policy 0; the values are 0, 1, 2', () => {
    expect(policyOfPod(podWith(undefined))).toBe(0);
    expect(policyOfPod({})).toBe(0);
    expect([ReleasePolicy.PodDelete, ReleasePolicy.Immutable, ReleasePolicy.Never]).toEqual([0, 1, 2]);
  });

  test('parseReleasePolicy: a non-empty pool makes the policy never whatever the annotation says; an empty pool does not', () => {
    expect(policyOfPod(podWith({ [POOL_ANNOTATION]: 'pl1', [RELEASE_POLICY_ANNOTATION]: 'immutable' }))).toBe(
      ReleasePolicy.Never,
    );
    expect(policyOfPod(podWith({ [POOL_ANNOTATION]: 'pl1' }))).toBe(ReleasePolicy.Never);
    expect(policyOfPod(podWith({ [POOL_ANNOTATION]: '', [RELEASE_POLICY_ANNOTATION]: 'immutable' }))).toBe(
      ReleasePolicy.Immutable,
    );
  });
});

describe('galaxy_test.go', () => {
  test("TestCniRequestToPodRequest: the CNI request's environment names pod demo/app, container ctn1, eth0", () => {
    const env = daemonEnv('K8S_POD_NAMESPACE=demo;K8S_POD_NAME=app;K8S_POD_INFRA_CONTAINER_ID=ctn1');
    expect(env.command).toBe('ADD');
    expect(env.containerId).toBe('ctn1');
    expect(env.netns).toBe('/var/run/netns/ctn');
    expect(env.ifname).toBe('eth0');
    expect(env.path).toEqual(['/opt/cni/bin']);
    expect(env.args.get('K8S_POD_NAMESPACE')).toBe('demo');
    expect(env.args.get('K8S_POD_NAME')).toBe('app');
    expect(env.args.get('K8S_POD_INFRA_CONTAINER_ID')).toBe('ctn1');
  });
});

describe('cniutil/cni.go ParseCNIArgs (how galaxy-k8s-vlan reads CNI_ARGS, where floatip-cni replaces it)', () => {
  test('BuildCNIArgs on empty kubelet arguments: `;ipinfos=[...]` (a leading empty pair) is read', async () => {
    const { args } = await podAddresses(daemonNetwork(), daemonEnv(`;ipinfos=${GALAXY_IPINFOS_JSON}`));
    expect(args.ipinfos).toEqual(GALAXY_IPINFOS);
  });

  test('a value holding `=` keeps it (split at the first `=`), and the last of a repeated key wins', () => {
    const env = daemonEnv('K8S_POD_NAME=first;X=a=b;K8S_POD_NAME=app');
    expect(env.args.get('X')).toBe('a=b');
    expect(env.args.get('K8S_POD_NAME')).toBe('app');
  });

  test('spaces around keys and values are trimmed: the pod and the ipinfos are found', async () => {
    const env = daemonEnv(` K8S_POD_NAMESPACE = demo ; K8S_POD_NAME=app ;ipinfos= ${GALAXY_IPINFOS_JSON} `);
    expect(env.args.get('K8S_POD_NAMESPACE')).toBe('demo');
    expect(env.args.get('K8S_POD_NAME')).toBe('app');
    const { args } = await podAddresses(daemonNetwork(), env);
    expect(args.ipinfos).toEqual(GALAXY_IPINFOS);
  });

  test('a pair without `=` is skipped, not refused: ADD goes on with the other arguments', async () => {
    let env: ReturnType<typeof daemonEnv> | CniError;
    try {
      env = daemonEnv(
        `IgnoreUnknown=1;K8S_POD_NAMESPACE=demo;stray;K8S_POD_NAME=app;ipinfos=${GALAXY_IPINFOS_JSON}`,
      );
    } catch (err) {
      env = err as CniError;
    }
    expect(env).not.toBeInstanceOf(CniError);
    const { args } = await podAddresses(daemonNetwork(), env as ReturnType<typeof daemonEnv>);
    expect(args.ipinfos).toEqual(GALAXY_IPINFOS);
  });
});

// Not played, with no floatip counterpart:
// - cni_test.go TestReverse: the order in which galaxy's daemon undoes a pod's chain of networks
//   (its NetworkInfo state file); floatip-cni is one plugin, not the daemon.
// - cni_test.go TestGetNetworkConfig: the daemon finds a network's configuration file by name in
//   /etc/cni/net.d and one directory below; floatip-cni gets its configuration on stdin.
// - galaxy_test.go TestCniRequestToPodRequest's port mappings (runtimeConfig.portMappings) and
//   TestCleanDuplicate: the daemon's host-port bookkeeping; floatip-cni maps no ports (a chained
//   portmap plugin does).
// - k8s_test.go TestParsePodNetworkAnnotation: the daemon's reading of Multus'
//   k8s.v1.cni.cncf.io/networks annotation to choose networks; floatip reads no such annotation
//   (Multus does, and hands floatip-cni its `cni-args`).
