// kube-scheduler's extender wire format (k8s.io/kube-scheduler/extender/v1): its requests, decoded.
// Its Go types carry no JSON tags, so the scheduler sends capitalised keys (`Pod`, `Nodes`,
// `NodeNames`, `PodName`, ...); older clients send lower-case ones. Keys are matched as Go's decoder
// matches them, at every level, the Pod's and Nodes' own fields too (wire-fields.ts); the scheduler
// sends those in their usual camelCase. Map keys (annotations, resource names) are exact, as in Go.
// One decoder per message; bad input is a WireError, which the server answers with 400 and its
// message. The answers are wire-answers.ts.
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { goIntegersWithFraction, goStruct } from '../ipam/index.js';
import { apiType, goTypes } from './go-types.js';
import type { KnownNodes } from './full-nodes.js';
import { type Span, elementsAt } from './json-spans.js';
import {
  type Json,
  WireError,
  asObject,
  element,
  field,
  fitsGoIntegers,
  fitsGoType,
  keyOf,
  longIntegers,
  optionalList,
  optionalObject,
  optionalString,
  optionalStringArray,
  stringMap,
  stringMapOfQuantities,
} from './wire-fields.js';

/**
 * The pod of a request, reduced to what floatip reads from it (its identity, annotations, owners
 * and the resources its containers ask for), every one of those fields type-checked.
 */
function decodePod(value: unknown, what: string, text?: Buffer): V1Pod {
  const pod = goStruct(asObject(value, what), POD);
  const meta = goStruct(asObject(pod.metadata, `${what}.metadata`), POD_META);
  const name = optionalString(meta.name, `${what}.metadata.name`);
  if (!name) throw new WireError(`${what}.metadata.name is missing`);
  const namespace = optionalString(meta.namespace, `${what}.metadata.namespace`);
  const uid = optionalString(meta.uid, `${what}.metadata.uid`);
  const owners = optionalList(meta.ownerReferences, `${what}.metadata.ownerReferences`).map((o, i) => {
    const where = `${what}.metadata.ownerReferences[${i}]`;
    const owner = goStruct(element(o, where), OWNER);
    return {
      apiVersion: optionalString(owner.apiVersion, `${where}.apiVersion`) ?? '',
      kind: optionalString(owner.kind, `${where}.kind`) ?? '',
      name: optionalString(owner.name, `${where}.name`) ?? '',
      uid: optionalString(owner.uid, `${where}.uid`) ?? '',
    };
  });
  const spec = goStruct(optionalObject(pod.spec, `${what}.spec`) ?? {}, POD_SPEC);
  const containers = optionalList(spec.containers, `${what}.spec.containers`).map((c, i) => {
    const where = `${what}.spec.containers[${i}]`;
    const container = goStruct(element(c, where), CONTAINER);
    const resources = goStruct(optionalObject(container.resources, `${where}.resources`) ?? {}, RESOURCES);
    return {
      name: optionalString(container.name, `${where}.name`) ?? '',
      resources: {
        requests: stringMapOfQuantities(resources.requests, `${where}.resources.requests`),
        limits: stringMapOfQuantities(resources.limits, `${where}.resources.limits`),
      },
    };
  });
  const nodeName = optionalString(spec.nodeName, `${what}.spec.nodeName`);
  fitsGoType(value, POD_TYPE, what, text);
  return {
    metadata: {
      name,
      // "" when missing, as Go reads it: galaxy keys such a pod NULL__NULL_<name>, and floatip's
      // `?? 'default'` elsewhere would make it default's pod, with default's addresses
      namespace: namespace ?? '',
      ...(uid !== undefined ? { uid } : {}),
      annotations: stringMap(meta.annotations, `${what}.metadata.annotations`),
      ownerReferences: owners,
    },
    spec: { containers, ...(nodeName ? { nodeName } : {}) },
  };
}

// Every other field as Go's decoder would have read it into k8s.io/api's types: galaxy refused a
// whole request whose Pod or Node had any field of the wrong type (with a 500), so floatip refuses
// it too (with a 400), not only when the field is one it reads
const POD_TYPE = apiType('V1Pod');
const NODE_TYPE = apiType('V1Node');
const EXTENDER_ARGS = goTypes.struct({
  Pod: POD_TYPE,
  Nodes: goTypes.struct({ items: goTypes.list(NODE_TYPE) }),
  NodeNames: goTypes.list(goTypes.string),
});
const BINDING_ARGS = goTypes.struct({
  PodName: goTypes.string,
  PodNamespace: goTypes.string,
  PodUID: goTypes.string,
  Node: goTypes.string,
});
/** ExtenderArgs above its Pod and Nodes, whose own fields are checked as each is decoded (once). */
const EXTENDER_ARGS_SHALLOW = goTypes.struct({
  Pod: goTypes.struct({}),
  Nodes: goTypes.struct({ items: goTypes.list(goTypes.struct({})) }),
  NodeNames: goTypes.list(goTypes.string),
});
const PREEMPTION_ARGS = goTypes.struct({
  Pod: POD_TYPE,
  NodeNameToVictims: goTypes.map(
    goTypes.struct({ Pods: goTypes.list(POD_TYPE), NumPDBViolations: goTypes.int64 }),
  ),
  NodeNameToMetaVictims: goTypes.map(
    goTypes.struct({
      Pods: goTypes.list(goTypes.struct({ UID: goTypes.string })),
      NumPDBViolations: goTypes.int64,
    }),
  ),
});

// The fields of k8s.io/api's types that floatip reads, as Go holds them (a struct is a value: a
// null leaves it as it was)
const POD = { metadata: 'value', spec: 'value' } as const;
const POD_META = {
  name: 'value',
  namespace: 'value',
  uid: 'value',
  annotations: 'nullable',
  ownerReferences: 'nullable',
} as const;
const OWNER = { apiVersion: 'value', kind: 'value', name: 'value', uid: 'value' } as const;
const POD_SPEC = { containers: 'nullable', nodeName: 'value' } as const;
const CONTAINER = { name: 'value', resources: 'value' } as const;
const RESOURCES = { requests: 'nullable', limits: 'nullable' } as const;
const NODE = { metadata: 'value', status: 'value' } as const;
const NODE_META = { name: 'value', resourceVersion: 'value' } as const;
const NODE_STATUS = { addresses: 'nullable' } as const;
const NODE_ADDRESS = { type: 'value', address: 'value' } as const;

/** A full Node of a request, reduced to its name, version and addresses, type-checked. */
function decodeNode(value: unknown, what: string, text?: Buffer): V1Node {
  const node = goStruct(asObject(value, what), NODE);
  const meta = goStruct(asObject(node.metadata, `${what}.metadata`), NODE_META);
  const name = optionalString(meta.name, `${what}.metadata.name`);
  if (name === undefined) throw new WireError(`${what}.metadata.name is missing`);
  const resourceVersion = optionalString(meta.resourceVersion, `${what}.metadata.resourceVersion`);
  const statusObject = optionalObject(node.status, `${what}.status`);
  const status = statusObject && goStruct(statusObject, NODE_STATUS);
  const addresses = optionalList(status?.addresses, `${what}.status.addresses`).map((a, i) => {
    const where = `${what}.status.addresses[${i}]`;
    const address = goStruct(element(a, where), NODE_ADDRESS);
    return {
      type: optionalString(address.type, `${where}.type`) ?? '',
      address: optionalString(address.address, `${where}.address`) ?? '',
    };
  });
  fitsGoType(value, NODE_TYPE, what, text);
  return {
    metadata: { name, ...(resourceVersion !== undefined ? { resourceVersion } : {}) },
    ...(status ? { status: { addresses } } : {}),
  };
}

/**
 * A request's Pod, decoded once per parsed value: the reader (full-nodes.ts) hands filter and then
 * prioritize the same parsed Pod when the scheduler sent the same bytes; neither value nor decoded
 * pod is ever written to.
 */
const decodedPods = new WeakMap<object, V1Pod>();
function requestPod(value: unknown, text?: Buffer): V1Pod {
  if (typeof value !== 'object' || value === null) return decodePod(value, 'Pod');
  let pod = decodedPods.get(value);
  if (!pod) decodedPods.set(value, (pod = decodePod(value, 'Pod', text)));
  return pod;
}

/** ExtenderArgs: the filter and prioritize request. */
export interface ExtenderArgs {
  readonly pod: V1Pod;
  /** Full Node objects (nodeCacheCapable: false), decoded. */
  readonly nodes?: V1Node[];
  /**
   * Where each of `nodes` is in the request text, when it was given: its answer echoes those bytes.
   * Found when first asked (one scan of the text): an answer with no node passing needs none.
   */
  readonly nodeSpans?: () => Span[];
  /** Node names only (nodeCacheCapable: true). */
  readonly nodeNames?: string[];
  /** The Nodes list's `kind` and `apiVersion` where the caller sent them: the answer's list echoes them. */
  readonly nodeListType?: string;
}

/**
 * Decodes a filter or prioritize request. With the request's text (`raw`, what `body` was parsed
 * from), the full Nodes' places in it are found too, and integers written with a fraction. With
 * `known` (full-nodes.ts), `body` holds placeholders at Nodes.items and the nodes are known already;
 * `podText`: the text of body's Pod, read on its own (full-nodes.ts).
 */
export function decodeExtenderArgs(
  body: unknown,
  raw?: Buffer,
  known?: KnownNodes,
  podText?: Buffer,
): ExtenderArgs {
  const args = asObject(body, 'the request body');
  const podValue = field(args, 'Pod', 'nullable');
  const pod = requestPod(podValue, podText);
  // the parts whose own texts were read for fractions (the Pod, the nodes the reader cut) need no
  // second reading; any other request is read whole
  let readWhole = podText === undefined && podValue !== undefined && podValue !== null;
  const nodesKey = keyOf(args, 'Nodes', 'nullable');
  const nodesField = nodesKey === undefined ? undefined : args[nodesKey];
  let nodes: V1Node[] | undefined;
  let nodeSpans: (() => Span[]) | undefined;
  let nodeListType: string | undefined;
  let cut: KnownNodes | undefined;
  if (nodesField !== undefined && nodesField !== null) {
    const list = asObject(nodesField, 'Nodes');
    const itemsKey = keyOf(list, 'items', 'nullable');
    const items = itemsKey === undefined ? undefined : list[itemsKey];
    if (items !== undefined && items !== null && !Array.isArray(items))
      throw new WireError('Nodes.items must be a list');
    // the reader cut the text at Nodes.items exactly; a later `nodes` or `Items` is what Go reads,
    // and it is whole in `body`
    const cutAt = nodesKey === 'Nodes' && itemsKey === 'items' ? known : undefined;
    cut = cutAt;
    if (cutAt && items?.length !== cutAt.spans.length) {
      // the reader cut the text where JSON.parse's object has no such list: cannot happen for a text
      // JSON.parse accepts (both take a key's last value), so this is a bug, not the caller's mistake
      throw new Error('the request was read at other nodes than it has');
    }
    nodeListType = typeMetaOf(list);
    nodes = cutAt
      ? cutAt.spans.map((_, i) => cutAt.node(i))
      : ((items as unknown[] | null | undefined) ?? []).map((n, i) => decodeNode(n, `Nodes.items[${i}]`));
    if (!cutAt && nodes.length > 0) readWhole = true;
    if (cutAt) nodeSpans = () => cutAt.spans;
    else if (raw && Array.isArray(items)) {
      let found: Span[] | undefined;
      nodeSpans = () => (found ??= elementsAt(raw, [nodesKey!, itemsKey!])!);
    }
  }
  const nodeNames = optionalStringArray(field(args, 'NodeNames', 'nullable'), 'NodeNames');
  if (!nodes && !nodeNames)
    throw new WireError('the request names no nodes: neither Nodes nor NodeNames is set');
  // every key naming a field must fit it, not only the one that wins; the Pod and Nodes were
  // checked as each was decoded (the nodes the reader cut hold placeholders here)
  // (the winning Pod and NodeNames keys were checked as decoded: not again, a list of 5,000 names
  // on every call)
  const top: Json = known ? { ...args, Nodes: { ...(args.Nodes as Json), items: null } } : { ...args };
  for (const key of [keyOf(args, 'Pod', 'nullable'), keyOf(args, 'NodeNames', 'nullable')])
    if (key !== undefined) delete top[key];
  fitsGoType(top, EXTENDER_ARGS_SHALLOW, '');
  // Go decoded the nodes the reader cut at Nodes.items even where a later key won (`nodes`)
  if (known && !cut) known.spans.forEach((_, i) => known.node(i));
  if (readWhole && raw) fitsGoIntegers(raw, EXTENDER_ARGS);
  return {
    pod,
    ...(nodes ? { nodes } : {}),
    ...(nodeSpans ? { nodeSpans } : {}),
    ...(nodeNames ? { nodeNames } : {}),
    ...(nodeListType ? { nodeListType } : {}),
  };
}

/** `"kind":...,"apiVersion":...,` of a list, as Go encodes its TypeMeta (empty ones omitted), or undefined. */
function typeMetaOf(list: Record<string, unknown>): string | undefined {
  let out = '';
  for (const name of ['kind', 'apiVersion']) {
    const value = field(list, name, 'value');
    if (typeof value === 'string' && value !== '') out += `${JSON.stringify(name)}:${JSON.stringify(value)},`;
  }
  return out || undefined;
}

/** A Node of a full-Node request, decoded (full-nodes.ts remembers it by its bytes). */
export const decodeRequestNode = (value: unknown, index: number, text?: Buffer): V1Node =>
  decodeNode(value, `Nodes.items[${index}]`, text);

/** ExtenderBindingArgs. */
export interface BindingArgs {
  readonly podName: string;
  readonly podNamespace: string;
  readonly podUID: string;
  readonly node: string;
}

export function decodeBindingArgs(body: unknown): BindingArgs {
  const args = asObject(body, 'the request body');
  // every key naming a field must fit it, not only the one that wins
  fitsGoType(args, BINDING_ARGS, '');
  const text = (name: string, required: boolean): string => {
    const value = field(args, name, 'value');
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
    // an empty or missing namespace is "" to Go, and galaxy looks the pod up there (and finds none)
    podNamespace: text('PodNamespace', false),
    podUID: text('PodUID', false),
    node: text('Node', true),
  };
}

/** Victims on one node, reduced to their UIDs (MetaVictims). */
export interface MetaVictims {
  /** null: the meta map's Pods was null or absent (Go's nil slice), answered `null` as galaxy does. */
  readonly pods: { readonly uid: string }[] | null;
  readonly numPDBViolations: number;
  /** The int64 as written where a double does not hold it (past 2^53): the answer echoes it exactly. */
  readonly numPDBViolationsText?: string;
}

/** ExtenderPreemptionArgs, with full victims reduced to the meta form, as galaxy does. */
export interface PreemptionArgs {
  readonly pod: V1Pod;
  /** null: neither map had a node, nor was the meta map sent at all (galaxy's nil map, answered `null`). */
  readonly victims: Map<string, MetaVictims> | null;
}

const META = 'NodeNameToMetaVictims';
const FULL = 'NodeNameToVictims';

/**
 * `raw`: the body's text, in which a NumPDBViolations written `1.0` or `1e0` is refused as Go's
 * decoder refuses it for an int (JSON.parse reads it as 1), and one past 2^53 read as written.
 */
export function decodePreemptionArgs(body: unknown, raw?: Buffer): PreemptionArgs {
  const [fraction] = raw
    ? goIntegersWithFraction(raw.toString(), [
        ['NodeNameToMetaVictims', '*', 'NumPDBViolations'],
        ['NodeNameToVictims', '*', 'NumPDBViolations'],
      ])
    : [];
  if (fraction)
    throw new WireError(
      `victims of ${fraction.path[1]}: NumPDBViolations must be an integer, not ${fraction.written}`,
    );
  const args = asObject(body, 'the request body');
  const pod = requestPod(field(args, 'Pod', 'nullable'));
  const victims = new Map<string, MetaVictims>();
  const writtenInteger = longIntegers(raw);
  const given = (name: string) => {
    const value = field(args, name, 'nullable');
    return value === undefined || value === null ? undefined : asObject(value, name);
  };
  const meta = given(META);
  const full = given(FULL);
  const fullCount = full ? Object.keys(full).length : 0;
  // galaxy builds the meta map from the full one only when the meta map is empty and the full is not
  const isMeta = meta !== undefined && (Object.keys(meta).length > 0 || fullCount === 0);
  const source = isMeta ? meta : fullCount > 0 ? full : undefined;
  for (const [node, v] of Object.entries(source ?? {})) {
    const where = `victims of ${node}`;
    const entry = asObject(v, where);
    const given = field(entry, 'Pods', 'nullable');
    const uids = optionalList(given, `${where}: Pods`).map((p, i) => {
      // pointers to Go: galaxy read a null victim's UID through a nil pointer (a panic, a 500)
      const pod = asObject(p, `${where}: Pods[${i}]`);
      const meta = isMeta
        ? undefined
        : optionalObject(field(pod, 'metadata', 'value'), `${where}: Pods[${i}].metadata`);
      const uid = isMeta ? field(pod, 'UID', 'value') : meta && field(meta, 'uid', 'value');
      return { uid: optionalString(uid, `${where}: Pods[${i}] UID`) ?? '' };
    });
    const pdb = field(entry, 'NumPDBViolations', 'value') ?? 0;
    // int64's bounds are checked in the text (fitsGoType below): past 2^53 a number is not exact
    if (typeof pdb !== 'number' || !Number.isInteger(pdb))
      throw new WireError(`${where}: NumPDBViolations must be an integer`);
    const text = Number.isSafeInteger(pdb)
      ? undefined
      : writtenInteger([
          keyOf(args, isMeta ? META : FULL, 'nullable'),
          node,
          keyOf(entry, 'NumPDBViolations', 'value'),
        ]);
    // a meta entry goes back as it came; one built from the full map has a list, as the scheduler's own
    const pods = isMeta && (given === undefined || given === null) ? null : uids;
    victims.set(node, { pods, numPDBViolations: pdb, ...(text ? { numPDBViolationsText: text } : {}) });
  }
  // Go decoded the whole message, both maps whichever galaxy then used: every field must fit
  fitsGoType(args, PREEMPTION_ARGS, '', raw);
  return { pod, victims: source === undefined ? null : victims };
}
