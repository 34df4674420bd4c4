// kube-scheduler's extender wire format, the way back: the answers to filter, prioritize, bind and
// preempt, with the capitalised keys Go's encoder gives the scheduler's types (they carry no JSON
// tags). Written out rather than JSON.stringify'd where that matters: a filter echoes the request's
// own Node bytes, and a preemption an int64 past 2^53 as it came.
import type { V1Node } from '@kubernetes/client-node';
import { clip, printable } from '../clip.js';
import { joined } from './body-buffers.js';
import type { MetaVictims } from './wire.js';

/**
 * The most characters of an `Error` the scheduler is answered, as of the REST port's refusals, an
 * Event or a log line: a pod's annotation (a range, a pool's name) and a bind's names come back in
 * it, and kube-scheduler copies it into its log and the pod's status at every attempt, so a
 * megabyte written once would come back a megabyte per attempt.
 */
export const ERROR_TEXT_LIMIT = 4096;

/**
 * An `Error` text as it is answered: its terminal-steering characters escaped (kube-scheduler logs
 * it and writes it into the pod's status, where a pod's own annotation text would otherwise reach
 * an operator's terminal raw), clipped at ERROR_TEXT_LIMIT, saying how long it was.
 */
export const answeredError = (message: string): string => clip(printable(message), ERROR_TEXT_LIMIT);

export interface FilterResult {
  /** Passing nodes: full objects (as received) or names, matching what was asked. */
  readonly nodes?: V1Node[];
  readonly nodeNames?: string[];
  readonly failedNodes: Record<string, string>;
  readonly error: string;
  /** The pod asks for no address: every node passed, and galaxy's latency does not count it. */
  readonly notWanted?: true;
}

/**
 * The filter answer, as bytes. Node objects are spliced in as bytes (`serialisedNode`: the request's
 * own), so that echoing thousands of them back costs a copy, not a JSON.stringify; into a buffer
 * from `alloc` when given.
 */
export function encodeFilterResult(
  result: FilterResult,
  serialisedNode: (node: V1Node) => Buffer,
  alloc?: (size: number) => Buffer,
  nodeListType = '',
): Buffer {
  const tail = `,"NodeNames":${result.nodeNames ? JSON.stringify(result.nodeNames) : 'null'},"FailedNodes":${goMap(Object.entries(result.failedNodes), JSON.stringify)},"FailedAndUnresolvableNodes":{},"Error":${JSON.stringify(answeredError(result.error))}}`;
  if (!result.nodes) return Buffer.from(`{"Nodes":null${tail}`);
  const parts: Buffer[] = [Buffer.from(`{"Nodes":{${nodeListType}"metadata":{},"items":[`)];
  result.nodes.forEach((node, i) => {
    if (i > 0) parts.push(COMMA);
    parts.push(serialisedNode(node));
  });
  parts.push(Buffer.from(`]}${tail}`));
  return joined(parts, alloc);
}

const COMMA = Buffer.from(',');

export interface HostPriority {
  readonly host: string;
  readonly score: number;
}

export const encodePriorities = (list: readonly HostPriority[]): string =>
  JSON.stringify(list.map((p) => ({ Host: p.host, Score: p.score })));

export const encodeBindingResult = (error: string): string => JSON.stringify({ Error: answeredError(error) });

export function encodePreemptionResult(victims: Map<string, MetaVictims> | null): string {
  if (victims === null) return '{"NodeNameToMetaVictims":null}';
  // written out rather than JSON.stringify'd: an int64 past 2^53 goes back as it came (a double
  // would print 2^63-1 as 9223372036854776000, which no Go int64 holds)
  const victimsJson = (v: MetaVictims) =>
    `{"Pods":${v.pods === null ? 'null' : JSON.stringify(v.pods.map((p) => ({ UID: p.uid })))},"NumPDBViolations":${v.numPDBViolationsText ?? JSON.stringify(v.numPDBViolations)}}`;
  return `{"NodeNameToMetaVictims":${goMap([...victims], victimsJson)}}`;
}

/**
 * Go's encoder writes a map's keys sorted by their UTF-8 bytes, whatever order they came in (and a JS
 * object would put integer-like names first). UTF-8's byte order is code point order, which UTF-16
 * code units keep except that a surrogate (a code point past U+FFFF) must sort after U+E000-U+FFFF.
 */
const goKeyOrder = (a: string, b: string): number => {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codePointRank(x) - codePointRank(y);
  }
  return a.length - b.length;
};
const codePointRank = (unit: number) =>
  unit >= 0xd800 && unit <= 0xdfff ? unit + 0x2000 : unit >= 0xe000 ? unit - 0x800 : unit;

/** A Go map as JSON: its keys in Go's order, each value as `json` writes it. */
function goMap<V>(entries: [string, V][], json: (value: V) => string): string {
  if (entries.length > 1) entries.sort(([a], [b]) => goKeyOrder(a, b));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${json(v)}`).join(',')}}`;
}
