// kube-scheduler's extender wire format (k8s.io/kube-scheduler/extender/v1). Its Go types carry no
// JSON tags, so the scheduler sends capitalised keys (`Pod`, `Nodes`, `NodeNames`, `PodName`, ...);
// older clients send lower-case ones. Keys are matched case-insensitively, as Go's decoder does;
// Kubernetes objects inside (Pod, Node) keep their usual camelCase. One decoder per message; bad
// input is a WireError, which the server answers with 400 and its message.
import type { V1Node, V1Pod } from '@kubernetes/client-node';

export class WireError extends Error {}

type Json = Record<string, unknown>;

/** The value of `name` in `object`, matching the key case-insensitively. */
function field(object: Json, name: string): unknown {
  if (name in object) return object[name];
  const lower = name.toLowerCase();
  for (const key of Object.keys(object)) if (key.toLowerCase() === lower) return object[key];
  return undefined;
}

function asObject(value: unknown, what: string): Json {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new WireError(`${what} must be a JSON object`);
  return value as Json;
}

function optionalStringArray(value: unknown, what: string): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string'))
    throw new WireError(`${what} must be a list of strings`);
  return value as string[];
}

function decodePod(value: unknown, what: string): V1Pod {
  const pod = asObject(value, what) as V1Pod;
  const meta = pod.metadata;
  if (!meta || typeof meta.name !== 'string' || meta.name === '')
    throw new WireError(`${what}.metadata.name is missing`);
  if (meta.namespace !== undefined && typeof meta.namespace !== 'string') {
    throw new WireError(`${what}.metadata.namespace must be a string`);
  }
  return pod;
}

/** ExtenderArgs: the filter and prioritize request. */
export interface ExtenderArgs {
  readonly pod: V1Pod;
  /** Full Node objects (nodeCacheCapable: false). */
  readonly nodes?: V1Node[];
  /** Node names only (nodeCacheCapable: true). */
  readonly nodeNames?: string[];
}

export function decodeExtenderArgs(body: unknown): ExtenderArgs {
  const args = asObject(body, 'the request body');
  const pod = decodePod(field(args, 'Pod'), 'Pod');
  const nodesField = field(args, 'Nodes');
  let nodes: V1Node[] | undefined;
  if (nodesField !== undefined && nodesField !== null) {
    const items = field(asObject(nodesField, 'Nodes'), 'items');
    if (items !== undefined && items !== null && !Array.isArray(items))
      throw new WireError('Nodes.items must be a list');
    nodes = ((items as unknown[] | null | undefined) ?? []).map((n, i) => {
      const node = asObject(n, `Nodes.items[${i}]`) as V1Node;
      if (typeof node.metadata?.name !== 'string')
        throw new WireError(`Nodes.items[${i}].metadata.name is missing`);
      return node;
    });
  }
  const nodeNames = optionalStringArray(field(args, 'NodeNames'), 'NodeNames');
  if (!nodes && !nodeNames)
    throw new WireError('the request names no nodes: neither Nodes nor NodeNames is set');
  return { pod, ...(nodes ? { nodes } : {}), ...(nodeNames ? { nodeNames } : {}) };
}

/** ExtenderBindingArgs. */
export interface BindingArgs {
  readonly podName: string;
  readonly podNamespace: string;
  readonly podUID: string;
  readonly node: string;
}

export function decodeBindingArgs(body: unknown): BindingArgs {
  const args = asObject(body, 'the request body');
  const text = (name: string, required: boolean): string => {
    const value = field(args, name);
    if (value === undefined || value === null) {
      if (required) throw new WireError(`${name} is missing`);
      return '';
    }
    if (typeof value !== 'string') throw new WireError(`${name} must be a string`);
    if (required && value === '') throw new WireError(`${name} is empty`);
    return value;
  };
  return {
    podName: text('PodName', true),
    podNamespace: text('PodNamespace', false) || 'default',
    podUID: text('PodUID', false),
    node: text('Node', true),
  };
}

/** Victims on one node, reduced to their UIDs (MetaVictims). */
export interface MetaVictims {
  readonly pods: { readonly uid: string }[];
  readonly numPDBViolations: number;
}

/** ExtenderPreemptionArgs, with full victims reduced to the meta form, as galaxy does. */
export interface PreemptionArgs {
  readonly pod: V1Pod;
  readonly victims: Map<string, MetaVictims>;
}

export function decodePreemptionArgs(body: unknown): PreemptionArgs {
  const args = asObject(body, 'the request body');
  const pod = decodePod(field(args, 'Pod'), 'Pod');
  const victims = new Map<string, MetaVictims>();
  const meta = field(args, 'NodeNameToMetaVictims');
  const full = field(args, 'NodeNameToVictims');
  const source =
    meta !== undefined && meta !== null && Object.keys(asObject(meta, 'NodeNameToMetaVictims')).length > 0
      ? meta
      : full;
  const isMeta = source === meta;
  if (source !== undefined && source !== null) {
    for (const [node, v] of Object.entries(
      asObject(source, isMeta ? 'NodeNameToMetaVictims' : 'NodeNameToVictims'),
    )) {
      const entry = asObject(v, `victims of ${node}`);
      const pods = field(entry, 'Pods') ?? [];
      if (!Array.isArray(pods)) throw new WireError(`victims of ${node}: Pods must be a list`);
      const uids = pods.map((p, i) => {
        const pod = asObject(p, `victims of ${node}: Pods[${i}]`);
        const uid = isMeta ? field(pod, 'UID') : (pod.metadata as { uid?: unknown } | undefined)?.uid;
        return { uid: typeof uid === 'string' ? uid : '' };
      });
      const pdb = field(entry, 'NumPDBViolations');
      victims.set(node, { pods: uids, numPDBViolations: typeof pdb === 'number' ? pdb : 0 });
    }
  }
  return { pod, victims };
}

// ---- answers, with the scheduler's capitalised keys

export interface FilterResult {
  /** Passing nodes: full objects (as received) or names, matching what was asked. */
  readonly nodes?: V1Node[];
  readonly nodeNames?: string[];
  readonly failedNodes: Record<string, string>;
  readonly error: string;
}

/**
 * The filter answer, as bytes. Node objects are spliced in as pre-serialised bytes
 * (`serialisedNode`), so that echoing thousands of them back costs a copy, not a JSON.stringify.
 */
export function encodeFilterResult(result: FilterResult, serialisedNode: (node: V1Node) => Buffer): Buffer {
  const tail = `,"NodeNames":${result.nodeNames ? JSON.stringify(result.nodeNames) : 'null'},"FailedNodes":${JSON.stringify(result.failedNodes)},"FailedAndUnresolvableNodes":{},"Error":${JSON.stringify(result.error)}}`;
  if (!result.nodes) return Buffer.from(`{"Nodes":null${tail}`);
  const parts: Buffer[] = [Buffer.from('{"Nodes":{"metadata":{},"items":[')];
  result.nodes.forEach((node, i) => {
    if (i > 0) parts.push(COMMA);
    parts.push(serialisedNode(node));
  });
  parts.push(Buffer.from(`]}${tail}`));
  return Buffer.concat(parts);
}

const COMMA = Buffer.from(',');

export interface HostPriority {
  readonly host: string;
  readonly score: number;
}

export const encodePriorities = (list: readonly HostPriority[]): string =>
  JSON.stringify(list.map((p) => ({ Host: p.host, Score: p.score })));

export const encodeBindingResult = (error: string): string => JSON.stringify({ Error: error });

export function encodePreemptionResult(victims: Map<string, MetaVictims>): string {
  const out: Record<string, unknown> = {};
  for (const [node, v] of victims) {
    out[node] = { Pods: v.pods.map((p) => ({ UID: p.uid })), NumPDBViolations: v.numPDBViolations };
  }
  return JSON.stringify({ NodeNameToMetaVictims: out });
}
