// Where ADD's ipinfos come from: galaxy's node daemon hands them over (`ipinfos=[...]` in CNI_ARGS,
// or `args.ipinfos` in the configuration); otherwise the pod's `k8s.v1.cni.galaxy.io/args`
// annotation, read from the API server and waited for, since kubelet may run the sandbox as soon as
// the binding lands, before or after floatip's annotation. ADD then takes the addresses only where
// floatip's records give them to the pod (holders.ts): a pod's creator may write the annotation,
// and, through Multus (which copies a pod's own `cni-args` into `args.cni`), the handed-over ipinfos
// too. Only without a kubeconfig (galaxy's daemon setup) are handed-over ipinfos taken as they come.
import { clip } from '../clip.js';
import type { CniArgs, IPInfo } from '../cni/args.js';
import type { IPInfoSource, PodIdentity } from './holders.js';
import { type ApiTarget, get, loadKubeconfig, statusMessage } from './kube.js';
import { MAX_NESTING, nestedDeeperThan, quoted } from './caller-input.js';
import { CniError, Code, type Environment, type NetworkConfig } from './protocol.js';

export interface PodAddresses {
  readonly args: CniArgs;
  /** namespace/name, when the pod was asked for (the annotation, or handed-over ipinfos checked). */
  readonly pod?: string;
  /** Whom the addresses must be held by, where to ask, and what named them (for the refusal). */
  readonly holder?: {
    readonly target: ApiTarget;
    readonly pod: PodIdentity;
    readonly source: IPInfoSource;
    /** Handed-over ipinfos: the ipinfos of the pod's annotation, which they must match. */
    readonly given?: readonly IPInfo[];
  };
}

// The annotation codec loads the IPAM core's range parser (about 120 ms with ip-num: README, "The
// node side"), so only ADD pays for it, not DEL, CHECK, GC, STATUS or VERSION.
const codec = () => import('../cni/args.js');

/**
 * The most of a handed-over ipinfos text an error's details carry: a pod's 64 ipinfos fit; CNI_ARGS
 * has no bound of its own, and its megabyte came back whole.
 */
const DETAILS_LIMIT = 4096;

/** One decoder per wire format: galaxy's `ipinfos` argument is read as the annotation's `common`. */
async function fromGalaxyDaemon(network: NetworkConfig, env: Environment): Promise<CniArgs | undefined> {
  // `args.cni` is where the CNI conventions put a runtime's arguments; `args` itself, galaxy's form
  const cni = network.args?.cni as Record<string, unknown> | undefined;
  const raw = env.args.get('ipinfos') ?? network.args?.ipinfos ?? cni?.ipinfos;
  if (raw === undefined) return undefined;
  // from the configuration, stdin's nesting is bounded already; from CNI_ARGS, not yet
  if (typeof raw === 'string' && nestedDeeperThan(raw)) {
    throw new CniError(
      Code.badAnnotation,
      `ipinfos argument: nested over ${MAX_NESTING} levels deep: no ipinfos are`,
      clip(raw, 200),
    );
  }
  const text = typeof raw === 'string' ? raw : JSON.stringify(raw);
  const { parseCniArgs, CniArgsError } = await codec();
  let args: CniArgs;
  try {
    // parsed alone first: pasted into the annotation's text, `1},"x":{"y":2` was JSON
    const ipinfos = JSON.parse(text) as unknown;
    args = parseCniArgs(JSON.stringify({ common: { ipinfos } }));
  } catch (err) {
    if (err instanceof CniArgsError || err instanceof SyntaxError)
      throw new CniError(
        Code.badAnnotation,
        `ipinfos argument: ${err instanceof SyntaxError ? 'not JSON: ' : ''}${err.message}`,
        clip(text, DETAILS_LIMIT),
      );
    throw err;
  }
  // an ADD that puts nothing on the pod has not succeeded, whichever way the ipinfos came
  if (args.ipinfos.length === 0)
    throw new CniError(Code.noAnnotation, 'the ipinfos argument has no ipinfos', clip(text, DETAILS_LIMIT));
  return args;
}

// What kubelet can name: a namespace is a DNS label, a pod name a DNS subdomain (Kubernetes'
// validation of both). Anything else would name another path in a URL (`pods/..` is the namespace,
// `namespaces/../pods/x` all pods' x), or send the API server a name it refuses in a 431.
const LABEL = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const isNamespace = (name: string) => name.length <= 63 && new RegExp(`^${LABEL}$`).test(name);
const isPodName = (name: string) => name.length <= 253 && new RegExp(`^${LABEL}(\\.${LABEL})*$`).test(name);

interface PodObject {
  metadata?: { uid?: string; annotations?: Record<string, string> };
}

/** The answer as a pod object, or undefined when it is not a JSON object (a proxy's page, `null`). */
function podObject(body: string): PodObject | undefined {
  try {
    const value = JSON.parse(body) as unknown;
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as PodObject)
      : undefined;
  } catch {
    return undefined;
  }
}

/** The pod CNI_ARGS names (K8S_POD_NAMESPACE, K8S_POD_NAME), checked; undefined when it names none. */
function namedPod(env: Environment): { namespace: string; name: string } | undefined {
  const namespace = env.args.get('K8S_POD_NAMESPACE') ?? '';
  const name = env.args.get('K8S_POD_NAME') ?? '';
  if (namespace === '' || name === '') return undefined;
  if (!isNamespace(namespace) || !isPodName(name)) {
    const named = `${namespace}/${name}`;
    throw new CniError(
      Code.invalidEnvironment,
      `CNI_ARGS names no pod a Kubernetes name can name: ${quoted(named)}`,
    );
  }
  return { namespace, name };
}

/**
 * The pod as the API server has it: refused when it is gone (3), when it is another incarnation
 * than CNI_ARGS' K8S_POD_UID (103), or when the answer is no pod (104).
 */
async function getPod(
  target: ApiTarget,
  pod: { namespace: string; name: string },
  uid: string,
  timeoutMs: number,
): Promise<{ object: PodObject; body: string }> {
  const named = `${pod.namespace}/${pod.name}`;
  const path = `/api/v1/namespaces/${encodeURIComponent(pod.namespace)}/pods/${encodeURIComponent(pod.name)}`;
  const res = await get(target, path, timeoutMs);
  if (res.status === 404) {
    throw new CniError(Code.unknownContainer, `pod ${named} not found`, statusMessage(res));
  }
  if (res.status !== 200) {
    throw new CniError(Code.apiServer, `getting pod ${named}: HTTP ${res.status}: ${statusMessage(res)}`);
  }
  const object = podObject(res.body);
  if (!object) {
    throw new CniError(
      Code.apiServer,
      `getting pod ${named}: the answer is not a pod object`,
      res.body.slice(0, 200),
    );
  }
  if (uid !== '' && object.metadata?.uid !== uid) {
    throw new CniError(
      Code.uidMismatch,
      `pod ${named} has UID ${clip(String(object.metadata?.uid ?? '(none)'), 100)}, not ${clip(uid, 100)}: the pod this sandbox is for is gone`,
    );
  }
  return { object, body: res.body };
}

/** The ipinfos of a pod's annotation; none when it has none, or one floatip's decoder refuses. */
async function annotatedIPInfos(object: PodObject): Promise<readonly IPInfo[]> {
  const { parseCniArgs, CNI_ARGS_ANNOTATION } = await codec();
  const text = object.metadata?.annotations?.[CNI_ARGS_ANNOTATION];
  if (typeof text !== 'string') return [];
  try {
    return parseCniArgs(text).ipinfos;
  } catch {
    return [];
  }
}

export async function podAddresses(network: NetworkConfig, env: Environment): Promise<PodAddresses> {
  const handed = await fromGalaxyDaemon(network, env);
  const uid = env.args.get('K8S_POD_UID') ?? '';
  if (handed) {
    // Without a kubeconfig (galaxy's daemon setup) nothing can be asked: the ipinfos are the
    // caller's word (README: unsafe with Multus). With one, and a pod to ask about, they are checked
    // as the annotation's are: Multus hands over whatever the pod's own creator wrote.
    if (network.kubeconfig === undefined) return { args: handed };
    const named = namedPod(env);
    if (named === undefined) return { args: handed };
    const target = await loadKubeconfig(network.kubeconfig);
    const { object } = await getPod(target, named, uid, network.requestTimeoutMs);
    return {
      args: handed,
      pod: `${named.namespace}/${named.name}`,
      holder: {
        target,
        pod: { ...named, uid: object.metadata?.uid ?? '' },
        source: 'ipinfos argument',
        given: await annotatedIPInfos(object),
      },
    };
  }
  const named = namedPod(env);
  if (named === undefined) {
    throw new CniError(
      Code.invalidEnvironment,
      'CNI_ARGS names no pod (K8S_POD_NAMESPACE, K8S_POD_NAME) and hands over no ipinfos',
    );
  }
  const { namespace, name } = named;
  if (network.kubeconfig === undefined) {
    throw new CniError(
      Code.invalidConfig,
      `no kubeconfig in the network configuration: cannot read pod ${namespace}/${name}`,
    );
  }
  const pod = `${namespace}/${name}`;
  const target = await loadKubeconfig(network.kubeconfig);
  const { parseCniArgs, CniArgsError, CNI_ARGS_ANNOTATION } = await codec();
  const deadline = Date.now() + network.annotationTimeoutMs;
  for (let pause = 25; ; pause = Math.min(pause * 2, 500)) {
    const { object, body } = await getPod(target, named, uid, network.requestTimeoutMs);
    const text: unknown = object.metadata?.annotations?.[CNI_ARGS_ANNOTATION];
    if (text !== undefined && typeof text !== 'string') {
      // annotations are strings: the answer is no pod (and a CNI error's details is a string)
      throw new CniError(
        Code.apiServer,
        `getting pod ${pod}: the answer is not a pod object: annotation ${CNI_ARGS_ANNOTATION} is not a string`,
        body.slice(0, 200),
      );
    }
    let args: CniArgs;
    try {
      args = parseCniArgs(text);
    } catch (err) {
      if (err instanceof CniArgsError) {
        throw new CniError(
          Code.badAnnotation,
          `pod ${pod} annotation ${CNI_ARGS_ANNOTATION}: ${err.message}`,
          text,
        );
      }
      throw err;
    }
    if (args.ipinfos.length > 0)
      return {
        args,
        pod,
        holder: { target, pod: { namespace, name, uid: object.metadata?.uid ?? '' }, source: 'annotation' },
      };
    // the last look is at the deadline itself: the wait is never shorter than configured
    const left = deadline - Date.now();
    if (left <= 0) {
      throw new CniError(
        Code.noAnnotation,
        `pod ${pod} has no ipinfos in ${CNI_ARGS_ANNOTATION} after ${network.annotationTimeoutMs / 1000} s`,
        text === undefined ? 'the annotation is absent' : `the annotation is ${text}`,
      );
    }
    await new Promise((r) => setTimeout(r, Math.min(pause, left)));
  }
}
