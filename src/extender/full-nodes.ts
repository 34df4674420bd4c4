// Reading a full-Node request (nodeCacheCapable: false, galaxy's default) without parsing its Nodes
// again and again. kube-scheduler sends every candidate node's whole object with every filter and
// prioritize call, pod after pod, and a node's object rarely changes between calls: parsing them
// was most of what such a call cost floatip (two JSON.parse of every node per pod). Here the
// request is cut at its nodes (json-spans.ts): the text around them, with each node replaced by 0,
// is parsed as usual (the Pod, NodeNames, every separator: so a request that is not JSON is still
// refused by JSON.parse, with its words); each node whose bytes equal the bytes last seen under its
// name is taken as decoded then, and any other is parsed and decoded on its own. Byte equality, not
// a name or a resourceVersion, is the test, so a node is never decoded from another request's
// bytes than its own.
// The Pod is read once for its filter and prioritize: the scheduler sends both with the same bytes,
// so the second is compared and taken as parsed (and decoded, wire.ts) the first time.
import { randomUUID } from 'node:crypto';
import type { V1Node } from '@kubernetes/client-node';
import { elementsAt, type KnownEnd, type Span } from './json-spans.js';

/** A request's nodes at Nodes.items: their spans, and each node decoded on demand, in order. */
export interface KnownNodes {
  readonly spans: Span[];
  /** Node `i`, decoded (from the bytes last seen under its name, when they are these bytes). */
  node(i: number): V1Node;
}

/** How a request is read: `body` as JSON.parse would give it, except that Nodes.items holds 0s when `known`. */
export interface ReadRequest {
  readonly body: unknown;
  readonly known?: KnownNodes;
  /** The text of body's Pod, when it was parsed from its own bytes (as the scheduler writes it). */
  readonly podText?: Buffer;
}

const ITEMS_PATH = ['Nodes', 'items'] as const;
const PLACEHOLDER = Buffer.from('0');
/** How kube-scheduler begins a filter or prioritize request, and what follows its Pod. */
const POD_KEY = Buffer.from('{"Pod":');
const NODES_KEY = Buffer.from(',"Nodes":');
const ITEMS_KEY = Buffer.from('"items"');
/**
 * Where a Node's name is written: Go writes ObjectMeta's name first (after kind and apiVersion,
 * when the object has them). Only a key to the bytes last seen: a node is taken as known only when
 * all its bytes equal those, so a mark found elsewhere costs a parse, never a wrong node.
 */
const NAME_MARK = Buffer.from('"metadata":{"name":"');
const QUOTE = 0x22;
const OPEN_OBJECT = 0x7b;
const BACKSLASH = 0x5c;

/** How far into a node its name is looked for before its end is known (Go writes it within its first bytes). */
const NAME_WITHIN = 512;

/**
 * The node name in text[at, end), a Node's first bytes, when it is written as kube-scheduler writes
 * it. Read in place: with a Node's name right at its start (an informer's object, without kind and
 * apiVersion: what the scheduler sends) without a Buffer view or a native search per node, which
 * were a third of a full-Node call's cost once every node was known.
 */
function nameOf(text: Buffer, at: number, end: number): string | undefined {
  let from: number;
  const first = at + 1 + NAME_MARK.length;
  if (
    first < end &&
    text[at] === OPEN_OBJECT &&
    text.compare(NAME_MARK, 0, NAME_MARK.length, at + 1, first) === 0
  ) {
    from = first;
  } else {
    const mark = text.subarray(at, end).indexOf(NAME_MARK);
    if (mark < 0) return undefined;
    from = at + mark + NAME_MARK.length;
  }
  for (let i = from; i < end; i++) {
    const c = text[i];
    if (c === QUOTE) return text.toString('utf8', from, i);
    if (c === BACKSLASH) return undefined;
  }
  return undefined;
}

type Known = { readonly known: V1Node };
/** A request's Pod: where its value lies, and the value as parsed. */
type SeenPod = { readonly span: Span; readonly value: unknown };
type Parsed = { readonly bytes: Buffer; readonly name: string | undefined; readonly parsed: unknown };

export class FullNodeReader {
  /** The last bytes seen under each node name, and the node decoded from them. */
  private readonly seen = new Map<string, { readonly bytes: Buffer; readonly node: V1Node }>();

  constructor(
    /** Decodes one parsed Node from its text (the wire decoder's own), `index` for its messages. */
    private readonly decode: (value: unknown, index: number, text: Buffer) => V1Node,
    /** How many nodes are remembered (their bytes: a few KiB each). */
    private readonly limit = 10_000,
    /**
     * How many of their bytes at most: a caller choosing what is sent must not fill memory with
     * huge "nodes" (a real Node is a few KiB; one over a 64th of this is never remembered).
     */
    private readonly limitBytes = 128 * 2 ** 20,
  ) {}

  /** The bytes remembered now. */
  private bytes = 0;
  /** The last Pod read, its bytes and its value as parsed (read-only: it is shared between requests). */
  private lastPod: { readonly bytes: Buffer; readonly value: unknown } | undefined;
  /** What stands in for the Pod while the rest is parsed: a string no caller can know. */
  private readonly podMark = `floatip-pod-${randomUUID()}`;
  private readonly podPlaceholder = Buffer.from(JSON.stringify(this.podMark));

  /**
   * The request read, its nodes decoded where they lie at Nodes.items. Throws what JSON.parse or
   * the decoder throw for a request that is not JSON or a node that is not a Node.
   */
  read(raw: Buffer): ReadRequest {
    const pod = this.podOf(raw);
    // names only (nodeCacheCapable): a text without the bytes "items" has no Nodes.items to cut, so
    // the walk, which would scan the whole Pod in JavaScript to find that out, is skipped (a key
    // written with escapes, "\u0069tems", only costs the plain parse that follows either way)
    if (raw.indexOf(ITEMS_KEY) < 0) return this.parsed(raw, pod, []) ?? this.parsed(raw, undefined, [])!;
    // a node whose bytes are the ones last seen under its name is not scanned for its end: one
    // memcmp instead of a walk over every byte in JavaScript (most of such a call's cost: 117 KB of
    // 50 nodes took 0.6 ms to walk, 7 us to compare)
    const knownAt = new Map<number, V1Node>();
    const knownEnd: KnownEnd = (text, at) => {
      const name = nameOf(text, at, Math.min(text.length, at + NAME_WITHIN));
      const last = name === undefined ? undefined : this.seen.get(name);
      if (!last) return undefined;
      const end = at + last.bytes.length;
      if (end > text.length || text.compare(last.bytes, 0, last.bytes.length, at, end) !== 0)
        return undefined;
      knownAt.set(at, last.node);
      return end;
    };
    let spans: Span[] | undefined;
    try {
      spans = elementsAt(raw, ITEMS_PATH, knownEnd, pod?.span);
    } catch {
      spans = undefined; // not JSON: JSON.parse says why
    }
    if (!spans || spans.length === 0) return this.parsed(raw, pod, []) ?? this.parsed(raw, undefined, [])!;
    const read = this.parsed(raw, pod, spans) ?? this.parsed(raw, undefined, spans);
    // the whole text, for JSON.parse's own words about where it is wrong
    if (!read) return { body: JSON.parse(raw.toString('utf8')) as unknown };
    // every node is known or parsed here, before anything is decoded: a text that is not JSON
    // anywhere is refused as a whole, as JSON.parse of it would be, before the Pod's decoding
    const values = spans.map(([from, to]): Known | Parsed => {
      const seen = knownAt.get(from);
      if (seen) return { known: seen };
      const bytes = raw.subarray(from, to);
      const name = nameOf(raw, from, to);
      const last = name === undefined ? undefined : this.seen.get(name);
      if (last && last.bytes.equals(bytes)) return { known: last.node };
      try {
        return { bytes, name, parsed: JSON.parse(bytes.toString('utf8')) as unknown };
      } catch {
        return { bytes, name, parsed: JSON.parse(raw.toString('utf8')) as unknown }; // throws its words
      }
    });
    const node = (i: number): V1Node => {
      const value = values[i]!;
      if ('known' in value) return value.known;
      const decoded = this.decode(value.parsed, i, value.bytes);
      if (value.name !== undefined && decoded.metadata?.name === value.name)
        this.remember(value.name, value.bytes, decoded);
      return decoded;
    };
    return { ...read, known: { spans, node } };
  }

  /**
   * The Pod of a request written as kube-scheduler writes it (`{"Pod":` first, `,"Nodes":` after
   * it), when its bytes are one whole JSON value: taken as parsed last time when the bytes are the
   * same (the scheduler sends a pod's filter and then its prioritize with the very same Pod), else
   * parsed on its own. A whole value's bytes are read alike wherever they stand (no proper prefix of
   * a JSON value is one, and a number ends at the comma), so the text's Pod is exactly this.
   */
  private podOf(raw: Buffer): SeenPod | undefined {
    if (raw.length < POD_KEY.length || raw.compare(POD_KEY, 0, POD_KEY.length, 0, POD_KEY.length) !== 0)
      return undefined;
    const end = raw.indexOf(NODES_KEY, POD_KEY.length);
    if (end < 0) return undefined;
    const span: Span = [POD_KEY.length, end];
    const bytes = raw.subarray(POD_KEY.length, end);
    const last = this.lastPod;
    if (last && last.bytes.equals(bytes)) return { span, value: last.value };
    let value: unknown;
    try {
      value = JSON.parse(bytes.toString('utf8')) as unknown;
    } catch {
      return undefined; // not a whole value here (a "Nodes" key inside the Pod, or not JSON)
    }
    if (bytes.length <= this.limitBytes / 64) this.lastPod = { bytes: Buffer.from(bytes), value };
    return { span, value };
  }

  /**
   * The text parsed with the Pod (when given) and the nodes at `spans` left out: a placeholder in
   * their place. undefined when that text is not JSON, or when the Pod's placeholder is not what
   * the root's Pod holds (a later "Pod" key, whose value counts as JSON.parse counts it: the
   * placeholder is a string no caller can know, so a caller's own "Pod" is never mistaken for it).
   * With neither left out, JSON.parse of the text itself, throwing its words.
   */
  private parsed(raw: Buffer, pod: SeenPod | undefined, spans: readonly Span[]): ReadRequest | undefined {
    if (!pod && spans.length === 0) return { body: JSON.parse(raw.toString('utf8')) as unknown };
    const cuts: [Span, Buffer][] = spans.map((span) => [span, PLACEHOLDER]);
    if (pod) {
      if (spans.length > 0 && spans[0]![0] < pod.span[1]) return undefined;
      cuts.unshift([pod.span, this.podPlaceholder]);
    }
    const parts: Buffer[] = [];
    let at = 0;
    for (const [[from, to], placeholder] of cuts) {
      parts.push(raw.subarray(at, from), placeholder);
      at = to;
    }
    parts.push(raw.subarray(at));
    let body: unknown;
    try {
      body = JSON.parse(Buffer.concat(parts).toString('utf8')) as unknown;
    } catch {
      return undefined;
    }
    if (!pod) return { body };
    const root = body as Record<string, unknown>;
    if (root.Pod !== this.podMark) return undefined;
    root.Pod = pod.value;
    return { body, podText: raw.subarray(pod.span[0], pod.span[1]) };
  }

  private remember(name: string, bytes: Buffer, node: V1Node): void {
    if (bytes.length > this.limitBytes / 64) return;
    this.forget(name);
    this.seen.set(name, { bytes: Buffer.from(bytes), node });
    this.bytes += bytes.length;
    while (this.seen.size > this.limit || this.bytes > this.limitBytes)
      this.forget(this.seen.keys().next().value!);
  }

  private forget(name: string): void {
    const last = this.seen.get(name);
    if (!last) return;
    this.bytes -= last.bytes.length;
    this.seen.delete(name);
  }
}
