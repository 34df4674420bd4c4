// Whether the addresses a pod's annotation names are that pod's by floatip's records. Anyone who may
// create a pod may write its `k8s.v1.cni.galaxy.io/args` annotation and set its node, bypassing the
// scheduler and floatip's bind; the annotation alone would then put on the pod an address that
// another pod holds. floatip's bind writes each address's FloatingIP object, naming the pod's key
// and UID, before the Binding that writes the annotation, so ADD of a pod floatip bound finds them,
// and ADD of any other pod is refused before any interface exists. Ipinfos handed over in CNI_ARGS
// or `args` are checked the same way where there is a kubeconfig: Multus copies a pod's own
// `cni-args` into `args.cni`, so they may be the pod creator's word too.
import { isIP } from 'node:net';
import { CNI_ARGS_ANNOTATION, type IPInfo, addressOf } from '../cni/args.js';
import { AllocationKey, canonicalAddress } from '../ipam/index.js';
import { GROUP, VERSION, fromFloatingIPObject, objectNameOf } from '../store/floating-ip-object.js';
import { type ApiTarget, get, statusMessage } from './kube.js';
import { CniError, Code } from './protocol.js';

export interface PodIdentity {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
}

/** What named the addresses: the pod's annotation, or ipinfos handed over in CNI_ARGS or `args`. */
export type IPInfoSource = 'annotation' | 'ipinfos argument';

export const floatingIPPath = (ip: string): string =>
  `/apis/${GROUP}/${VERSION}/floatingips/${encodeURIComponent(objectNameOf(ip))}`;

/** Why `object` (an address's FloatingIP) does not give `ip` to `pod`, or undefined when it does. */
export function notHeldBy(pod: PodIdentity, ip: string, object: unknown): string | undefined {
  const decoded = fromFloatingIPObject(object);
  if (!decoded.ok) return `its FloatingIP object is not one floatip reads: ${decoded.reason}`;
  const { record } = decoded;
  if (record.ip !== ip) return `its FloatingIP object is for ${record.ip}`;
  if (record.reserved) return 'it is reserved (its FloatingIP object has the label "reserved")';
  const key = AllocationKey.parse(record.key);
  if (key.namespace !== pod.namespace || key.podName !== pod.name)
    return `it is held by key ${record.key}${record.podUid ? ` (pod UID ${record.podUid})` : ''}`;
  // a key that keeps its address for no pod (a StatefulSet's, between incarnations) is this pod's
  // name's; an incarnation other than this one still holds it until floatip sees it gone
  if (record.podUid !== '' && record.podUid !== pod.uid)
    return `it is held by key ${record.key} for pod UID ${record.podUid}, not ${pod.uid}`;
  return undefined;
}

const described = (info: IPInfo) => `${info.ip} vlan ${info.vlan} gateway ${info.gateway}`;

/**
 * Why a handed-over ipinfo is not as `given` (the ipinfos of the pod's annotation, which floatip's
 * bind wrote with the Binding) gives its address, or undefined when it is. The address may be the
 * pod's and still be put on another VLAN, behind another gateway or in a wider prefix than its
 * subnet's, which the pod's creator has no say in either.
 */
export function notAsGiven(info: IPInfo, given: readonly IPInfo[]): string | undefined {
  const ip = canonicalAddress(addressOf(info));
  const same = given.find((g) => canonicalAddress(addressOf(g)) === ip);
  if (!same) return `its annotation ${CNI_ARGS_ANNOTATION} names no such address`;
  const prefix = (i: IPInfo) => i.ip.slice(i.ip.indexOf('/'));
  const gateway = (i: IPInfo) => (isIP(i.gateway) ? canonicalAddress(i.gateway) : i.gateway);
  if (prefix(info) === prefix(same) && info.vlan === same.vlan && gateway(info) === gateway(same))
    return undefined;
  return `floatip gave it as ${described(same)} (annotation ${CNI_ARGS_ANNOTATION})`;
}

/**
 * Refuses (code 106) unless every address of `ipinfos` (checked: planInterfaces) is `pod`'s by its
 * FloatingIP object, whichever way the ipinfos came (`source` names it in the refusal), and, when
 * they were handed over, is as the pod's annotation (`given`) gives it.
 */
export async function checkHeld(
  target: ApiTarget,
  pod: PodIdentity,
  ipinfos: readonly IPInfo[],
  timeoutMs: number,
  source: IPInfoSource = 'annotation',
  given?: readonly IPInfo[],
): Promise<void> {
  const who = `${pod.namespace}/${pod.name}`;
  for (const info of ipinfos) {
    const text = addressOf(info);
    const ip = canonicalAddress(text);
    // canonicalAddress reads `::ffff:198.51.100.23` as 198.51.100.23: that spelling must not pass
    // for the pod's IPv4 address (planInterfaces refuses it first; this holds without it)
    if (isIP(text) !== isIP(ip)) {
      throw new CniError(
        Code.badAnnotation,
        `pod ${who} ${source} names ${text}, an IPv4-mapped IPv6 address: not an address floatip gives`,
      );
    }
    const res = await get(target, floatingIPPath(ip), timeoutMs);
    let why: string | undefined;
    if (res.status === 404) why = 'no FloatingIP object holds it';
    else if (res.status === 200) {
      let object: unknown;
      try {
        object = JSON.parse(res.body);
      } catch {
        throw new CniError(Code.apiServer, `getting the FloatingIP of ${ip}: the answer is not JSON`);
      }
      why = notHeldBy(pod, ip, object);
    } else {
      const hint = res.status === 403 ? ' (the ClusterRole of manifests/cni-rbac.yaml allows it)' : '';
      throw new CniError(
        Code.apiServer,
        `getting the FloatingIP of ${ip} for pod ${who}: HTTP ${res.status}${hint}: ${statusMessage(res)}`,
      );
    }
    if (why !== undefined) {
      throw new CniError(
        Code.notAllocated,
        `pod ${who} ${source} names ${ip}, which floatip has not given it: ${why}`,
      );
    }
    const unlike = given && notAsGiven(info, given);
    if (unlike) {
      throw new CniError(
        Code.notAllocated,
        `pod ${who} ${source} gives ${ip} as ${described(info)}, not as floatip gave it: ${unlike}`,
      );
    }
  }
}
