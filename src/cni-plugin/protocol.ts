// The CNI protocol as floatip-cni speaks it (CNI specification 1.0.0 and 1.1.0, and the 0.3/0.4
// results a runtime on an older configuration asks for): the environment, the network
// configuration on stdin, error objects and results. No I/O here.
import { clip } from '../clip.js';
import { MAX_NESTING, nestedDeeperThan, quoted } from './caller-input.js';
import { fromPre030, validPrevResult } from './prev-result.js';

/** The versions this plugin answers in; VERSION lists them. */
export const SUPPORTED_VERSIONS = ['0.3.0', '0.3.1', '0.4.0', '1.0.0', '1.1.0'] as const;
/** What the delegates are asked for: Debian's containernetworking-plugins 1.1 speak up to 1.0.0. */
export const DELEGATE_VERSION = '1.0.0';

/** The spec's well-known codes (0-99) and floatip-cni's own (100+). */
export const Code = {
  incompatibleVersion: 1,
  unsupportedField: 2,
  unknownContainer: 3,
  invalidEnvironment: 4,
  ioFailure: 5,
  decodeFailure: 6,
  invalidConfig: 7,
  tryAgainLater: 11,
  notAvailable: 50,
  noAnnotation: 101,
  badAnnotation: 102,
  uidMismatch: 103,
  apiServer: 104,
  delegateFailed: 105,
  notAllocated: 106,
} as const;

/** A failure the runtime gets as a CNI error object on stdout (never a stack trace). */
export class CniError extends Error {
  constructor(
    readonly code: number,
    msg: string,
    readonly details?: string,
  ) {
    super(msg);
  }
}

export type Command = 'ADD' | 'DEL' | 'CHECK' | 'VERSION' | 'STATUS' | 'GC';
const COMMANDS: readonly string[] = ['ADD', 'DEL', 'CHECK', 'VERSION', 'STATUS', 'GC'];

/**
 * `CNI_ARGS`: `K=V;K=V` (kubelet sends IgnoreUnknown, K8S_POD_NAMESPACE, _NAME, _UID, _INFRA_CONTAINER_ID),
 * read as galaxy-k8s-vlan reads it (galaxy's cniutil.ParseCNIArgs), where floatip-cni takes its place:
 * key and value trimmed of spaces, a pair without `=` skipped, the last of a repeated key kept. A
 * pair without `=` was refused (code 4), failing an ADD that galaxy's plugin made.
 */
export function parseCniArgsEnv(text: string | undefined): Map<string, string> {
  const args = new Map<string, string>();
  for (const pair of (text ?? '').split(';')) {
    const eq = pair.indexOf('=');
    if (eq < 0) continue;
    args.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
  }
  return args;
}

export interface Environment {
  readonly command: Command;
  readonly containerId: string;
  readonly netns: string;
  readonly ifname: string;
  readonly args: Map<string, string>;
  /** Where the delegates are looked for. */
  readonly path: readonly string[];
}

// the state file of an attachment is named after these, so they may not climb out of its directory,
// and `<container>:<ifname>.json` must fit a file name (255 bytes; runtimes' IDs are 64 characters)
const CONTAINER_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,233}$/;
const IFNAME = /^[^/\s:]{1,15}$/;
// libcni's ValidateInterfaceName besides: 15 bytes (IFNAMSIZ), not characters, and not `.` or `..`;
// they passed here to fail in the delegate as its error (105), not the runtime's (4)
export const isIfname = (name: string): boolean =>
  IFNAME.test(name) && Buffer.byteLength(name) <= 15 && name !== '.' && name !== '..';

export function readCommand(env: NodeJS.ProcessEnv): Command {
  const command = env.CNI_COMMAND ?? '';
  if (!COMMANDS.includes(command)) {
    throw new CniError(
      Code.invalidEnvironment,
      `CNI_COMMAND ${quoted(command)} is not one of ${COMMANDS.join(', ')}`,
    );
  }
  return command as Command;
}

/** The CNI_* variables the command needs (the spec's list per operation). */
export function readEnvironment(env: NodeJS.ProcessEnv): Environment {
  const command = readCommand(env);
  const attachment = command === 'ADD' || command === 'DEL' || command === 'CHECK';
  const need = (name: string, required: boolean): string => {
    const value = env[name] ?? '';
    if (required && value === '')
      throw new CniError(Code.invalidEnvironment, `${name} is required for ${command}`);
    return value;
  };
  const containerId = need('CNI_CONTAINERID', attachment);
  if (containerId !== '' && !CONTAINER_ID.test(containerId)) {
    throw new CniError(
      Code.invalidEnvironment,
      `CNI_CONTAINERID ${quoted(containerId)} is not a container ID (letters, digits, '_', '.', '-'; at most 234)`,
    );
  }
  const ifname = need('CNI_IFNAME', attachment);
  if (ifname !== '' && !isIfname(ifname)) {
    throw new CniError(
      Code.invalidEnvironment,
      `CNI_IFNAME ${quoted(ifname)} is not an interface name (at most 15 bytes, no '/', ':' or space, not '.' or '..')`,
    );
  }
  const netns = need('CNI_NETNS', command === 'ADD' || command === 'CHECK');
  // the spec's sandbox is the namespace's full path; a relative one names a file of the caller's
  // directory, which ADD stored and a DEL from elsewhere resolved to nothing, leaving the interface
  if (netns !== '' && !netns.startsWith('/')) {
    throw new CniError(
      Code.invalidEnvironment,
      `CNI_NETNS ${quoted(netns)} is not an absolute path: the network namespace is named by its full path`,
    );
  }
  return {
    command,
    containerId,
    netns,
    ifname,
    args: parseCniArgsEnv(env.CNI_ARGS),
    // STATUS, as VERSION, needs no CNI_PATH (the spec's STATUS requires only CNI_COMMAND): where it
    // is given, STATUS looks for the delegate in it
    path: need('CNI_PATH', command !== 'VERSION' && command !== 'STATUS')
      .split(':')
      .filter((dir) => dir !== ''),
  };
}

/** The delegate's own configuration: its `type` and fields (master, mtu, mode, ...), passed on as given. */
export type DelegateConfig = Readonly<Record<string, unknown>> & { readonly type: string };

export interface NetworkConfig {
  readonly cniVersion: string;
  readonly name: string;
  /** How to reach the API server; absent only under galaxy's daemon, which hands over the ipinfos. */
  readonly kubeconfig?: string;
  readonly delegate: DelegateConfig;
  /** How long ADD waits for the pod's annotation (the binding and the CNI call can race). */
  readonly annotationTimeoutMs: number;
  /** Each API request's own limit. */
  readonly requestTimeoutMs: number;
  /** How long one delegate may run before it is killed and its command fails. */
  readonly delegateTimeoutMs: number;
  /** What ADD configured, per attachment, for DEL, CHECK and GC. */
  readonly stateDir: string;
  readonly args?: Readonly<Record<string, unknown>>;
  readonly prevResult?: Result;
  /** GC: the attachments still in use (`cni.dev/valid-attachments`; libcni also sends `cni.dev/attachments`). */
  readonly validAttachments?: readonly { containerID: string; ifname: string }[];
}

export const DEFAULT_STATE_DIR = '/var/lib/cni/floatip';

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const seconds = (raw: unknown, field: string, fallback: number, positive = false): number => {
  if (raw === undefined) return fallback * 1000;
  if (typeof raw !== 'number' || !(raw >= 0) || (positive && raw === 0) || raw > 3600) {
    throw new CniError(
      Code.invalidConfig,
      `${field} must be a number of seconds from ${positive ? 'above 0' : '0'} to 3600, not ${quoted(raw)}`,
    );
  }
  // whole milliseconds, at least one where 0 is refused: a timer or a child's timeout takes no
  // fraction (1.0005 s failed every ADD, code 100) and 0.0001 s would round to no limit at all
  const ms = Math.round(raw * 1000);
  return positive ? Math.max(1, ms) : ms;
};

/** The network configuration on stdin; VERSION needs only its cniVersion. */
export function parseNetworkConfig(stdin: string, command: Command): NetworkConfig {
  if (nestedDeeperThan(stdin)) {
    throw new CniError(
      Code.decodeFailure,
      `network configuration on stdin is nested over ${MAX_NESTING} levels deep: no configuration is`,
    );
  }
  let raw: unknown;
  try {
    raw = JSON.parse(stdin);
  } catch (err) {
    throw new CniError(
      Code.decodeFailure,
      `network configuration on stdin is not JSON: ${(err as Error).message}`,
    );
  }
  if (!isObject(raw))
    throw new CniError(Code.decodeFailure, 'network configuration on stdin is not a JSON object');
  const cniVersion = raw.cniVersion;
  if (typeof cniVersion !== 'string' || !(SUPPORTED_VERSIONS as readonly string[]).includes(cniVersion)) {
    throw new CniError(
      Code.incompatibleVersion,
      cniVersion === undefined
        ? 'the network configuration has no cniVersion (libcni reads none as 0.1.0): give one floatip-cni supports'
        : `cniVersion ${quoted(cniVersion)} is not supported`,
      `floatip-cni supports ${SUPPORTED_VERSIONS.join(', ')}`,
    );
  }
  const since = (version: string) => compareVersions(cniVersion, version) >= 0;
  if ((command === 'STATUS' || command === 'GC') && !since('1.1.0')) {
    throw new CniError(
      Code.incompatibleVersion,
      `${command} needs cniVersion 1.1.0, the configuration says ${cniVersion}`,
    );
  }
  if (command === 'CHECK' && !since('0.4.0')) {
    throw new CniError(
      Code.incompatibleVersion,
      `CHECK needs cniVersion 0.4.0 or later, the configuration says ${cniVersion}`,
    );
  }
  const name = typeof raw.name === 'string' ? raw.name : '';
  const delegate = raw.delegate;
  if (command !== 'VERSION') {
    // it names the state's directory, a file name: a longer one failed at the state as code 5
    if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,254}$/.test(name)) {
      throw new CniError(
        Code.invalidConfig,
        `network name ${quoted(raw.name)} is not a valid CNI network name (letters, digits, '_', '.', '-'; at most 255)`,
      );
    }
    if (!isObject(delegate) || typeof delegate.type !== 'string') {
      throw new CniError(
        Code.invalidConfig,
        'delegate must be an object naming the data-plane plugin in "type" (vlan, macvlan, ipvlan or bridge)',
      );
    }
    // a file name in CNI_PATH's directories: `.` and `..` named the directories themselves, which
    // failed only at the spawn (EACCES, code 100), and a '/' would leave them
    if (!/^[A-Za-z0-9_.-]{1,255}$/.test(delegate.type) || delegate.type === '.' || delegate.type === '..') {
      throw new CniError(
        Code.invalidConfig,
        `delegate.type ${quoted(delegate.type)} is not a plugin's file name (letters, digits, '_', '.', '-'; not '.' or '..')`,
      );
    }
    if ('ipam' in delegate) {
      throw new CniError(
        Code.unsupportedField,
        'delegate.ipam: floatip-cni gives the delegate its own static IPAM',
      );
    }
    // the VLAN is the pod's, from its ipinfos: the operator's was dropped (vlan at VLAN 0 becomes a
    // macvlan) or kept (bridge), which put a VLAN-0 pod on the operator's VLAN
    const vlanField = ({ vlan: 'vlanId', bridge: 'vlan' } as Record<string, string>)[delegate.type];
    if (vlanField !== undefined && vlanField in delegate) {
      throw new CniError(
        Code.unsupportedField,
        `delegate.${vlanField}: floatip-cni sets the VLAN of each pod interface from the pod's ipinfos`,
      );
    }
  }
  if (raw.kubeconfig !== undefined && (typeof raw.kubeconfig !== 'string' || raw.kubeconfig === '')) {
    throw new CniError(Code.invalidConfig, 'kubeconfig must be the path of a kubeconfig file');
  }
  if (raw.stateDir !== undefined && (typeof raw.stateDir !== 'string' || !raw.stateDir.startsWith('/'))) {
    throw new CniError(Code.invalidConfig, 'stateDir must be an absolute path');
  }
  // a prevResult is read where DEL, CHECK and ADD use it: its interfaces must be interfaces
  if (raw.prevResult !== undefined && !validPrevResult(raw.prevResult)) {
    throw new CniError(
      Code.invalidConfig,
      'prevResult must be a result: an object whose interfaces are {name, ...}',
    );
  }
  // libcni 1.2 sends the list under both names (the spec's first draft said cni.dev/attachments)
  const key = 'cni.dev/valid-attachments' in raw ? 'cni.dev/valid-attachments' : 'cni.dev/attachments';
  const valid = raw[key];
  // GC deletes every attachment the list does not name: a list it cannot read whole is refused, and
  // so is none at all (the spec's GC input carries it; an absent list is no word that nothing is valid)
  const attachment = (a: unknown) =>
    isObject(a) && typeof a.containerID === 'string' && typeof a.ifname === 'string';
  if (command === 'GC' && !(key in raw)) {
    throw new CniError(
      Code.invalidConfig,
      'GC needs cni.dev/valid-attachments, the attachments still in use: without it every attachment would be deleted',
    );
  }
  if (command === 'GC' && !(Array.isArray(valid) && valid.every(attachment))) {
    throw new CniError(
      Code.invalidConfig,
      'cni.dev/valid-attachments must be a list of {containerID, ifname}',
    );
  }
  return {
    cniVersion,
    name,
    kubeconfig: raw.kubeconfig as string | undefined,
    delegate: delegate as DelegateConfig,
    annotationTimeoutMs: seconds(raw.annotationTimeoutSeconds, 'annotationTimeoutSeconds', 10),
    // a GET without a limit could hold the runtime's ADD for ever
    requestTimeoutMs: seconds(raw.requestTimeoutSeconds, 'requestTimeoutSeconds', 5, true),
    // a delegate stuck in the kernel or on a lock would hold the runtime's call, and the pod's
    // sandbox, for as long as the runtime waits (and its process for ever once the runtime gives up)
    delegateTimeoutMs: seconds(raw.delegateTimeoutSeconds, 'delegateTimeoutSeconds', 30, true),
    stateDir: (raw.stateDir as string | undefined) ?? DEFAULT_STATE_DIR,
    args: isObject(raw.args) ? raw.args : undefined,
    prevResult: isObject(raw.prevResult) ? fromPre030(raw.prevResult) : undefined,
    validAttachments: Array.isArray(valid)
      ? valid.filter(isObject).map((a) => ({ containerID: String(a.containerID), ifname: String(a.ifname) }))
      : undefined,
  };
}

export function compareVersions(a: string, b: string): number {
  const [x, y] = [a, b].map((v) => v.split('.').map(Number));
  for (let i = 0; i < 3; i++) {
    const d = (x![i] ?? 0) - (y![i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

export interface Interface {
  readonly name: string;
  readonly mac?: string;
  readonly sandbox?: string;
  readonly [field: string]: unknown;
}
export interface IPConfig {
  readonly address: string;
  readonly gateway?: string;
  readonly interface?: number;
  readonly version?: string;
}
export interface Route {
  readonly dst: string;
  readonly gw?: string;
  readonly [field: string]: unknown;
}
export interface Result {
  readonly cniVersion: string;
  readonly interfaces?: readonly Interface[];
  readonly ips?: readonly IPConfig[];
  readonly routes?: readonly Route[];
  readonly dns?: Readonly<Record<string, unknown>>;
}

/** A 1.0.0 result in the version the runtime asked for: before 1.0.0 each IP says its family. */
export function resultIn(version: string, result: Result): Result {
  const ips = (result.ips ?? []).map(({ version: _, ...ip }) =>
    compareVersions(version, '1.0.0') < 0 ? { ...ip, version: ip.address.includes(':') ? '6' : '4' } : ip,
  );
  return { ...result, cniVersion: version, ips };
}

/** The error object of the spec, in the configuration's version when it is known. */
export function errorObject(err: CniError, version: string): Record<string, unknown> {
  return {
    // the version asked for, supported or not: a caller's 100,000 characters came back whole in the
    // line kubelet logs, as msg's quoted values did before they were clipped
    cniVersion: clip(version, 100),
    code: err.code,
    msg: err.message,
    ...(err.details !== undefined ? { details: err.details } : {}),
  };
}
