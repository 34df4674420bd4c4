// Errors, by what a caller should do about them (after Calico's taxonomy). Every error floatip
// raises has one of these kinds, here or, structurally, in the rooms that cannot import the core
// (src/kube/); each edge maps the kind once: the REST API to an HTTP status, bind to an Event
// reason, the release queue to retry or not.
//   validation  - the input is wrong: show it to whoever sent it (HTTP 400, a Warning Event); retrying
//                 the same input cannot help;
//   conflict    - the state is not what the caller decided on: re-read and decide again;
//   wait        - nothing is wrong, but not now: no free address, the app at its limit, a previous
//                 incarnation not dealt with yet; the caller tries again when that changes;
//   unavailable - this replica cannot act now (not the leader, no configuration): try another, later;
//   transient   - the API server or the network failed: retry, quietly.
// Every message names the IP, key and subnet involved, so a log line alone says what happened.
import { printable } from '../clip.js';

export type ErrorKind = 'validation' | 'conflict' | 'wait' | 'unavailable' | 'transient';

const KINDS: ReadonlySet<string> = new Set<ErrorKind>([
  'validation',
  'conflict',
  'wait',
  'unavailable',
  'transient',
]);

/**
 * The kind of any error: its own `kind` where it has one of the five; otherwise undefined (a bug,
 * or a failure nobody classified: an edge answers it as a server error).
 */
export function kindOf(err: unknown): ErrorKind | undefined {
  const kind = (err as { kind?: unknown } | null)?.kind;
  return typeof kind === 'string' && KINDS.has(kind) ? (kind as ErrorKind) : undefined;
}

export abstract class IpamError extends Error {
  abstract readonly kind: ErrorKind;
  override get name(): string {
    return this.constructor.name;
  }
}

export class InvalidAddressError extends IpamError {
  readonly kind = 'validation';
  constructor(
    readonly text: string,
    what = 'invalid IP address',
  ) {
    super(`${what}: ${JSON.stringify(text)}`);
  }
}

export class InvalidRangeError extends IpamError {
  readonly kind = 'validation';
  constructor(
    readonly text: string,
    /** What is wrong with it (`its end "x" is not an IP address`), where galaxy said nothing. */
    readonly why?: string,
  ) {
    // galaxy's wording first, which operators may grep for; the range is anyone's ConfigMap text,
    // shown in an Event, a log line and the webhook's refusal
    super(printable(`invalid ip range ${text}${why === undefined ? '' : `: ${why}`}`));
  }
}

/** One thing wrong with a pool configuration, located precisely. */
export interface ConfigProblem {
  /** Position of the entry in the configuration array. */
  readonly entry: number;
  /** The field, with an element index where it is a list: "ips[1]". */
  readonly field: string;
  /** The offending value as written, JSON-encoded; "" when the field is absent. */
  readonly value: string;
  readonly message: string;
}

/** `floatingips[<entry>].<field> <value>: <message>`; `floatingips: ...` for the whole text. */
export function formatConfigProblem(p: ConfigProblem): string {
  const where = p.entry < 0 ? 'floatingips' : `floatingips[${p.entry}]${p.field === '' ? '' : `.${p.field}`}`;
  return `${where}${p.value === '' ? '' : ` ${p.value}`}: ${p.message}`;
}

/**
 * How many problems an InvalidConfigError's message names before it says how many more: a 1 MiB
 * ConfigMap value can hold 500,000 bad entries, and a message naming them all (20 MB) is refused
 * as the Warning Event it must become (413) and floods the log and the admission denial.
 */
const NAMED_PROBLEMS = 20;

export class InvalidConfigError extends IpamError {
  readonly kind = 'validation';
  /** `problems` holds every problem; the message names the first NAMED_PROBLEMS. */
  constructor(readonly problems: readonly ConfigProblem[]) {
    const named = problems.slice(0, NAMED_PROBLEMS).map(formatConfigProblem).join('; ');
    const more = problems.length - NAMED_PROBLEMS;
    super(`invalid floating IP configuration: ${named}${more > 0 ? `; and ${more} more problems` : ''}`);
  }
}

export class NoFreeIPError extends IpamError {
  readonly kind = 'wait';
  constructor(
    readonly key: string,
    readonly nodeSubnet: string,
    detail: string,
  ) {
    // "no enough available ips left" is galaxy's text; kept as the start for compatibility of alerts
    super(`no enough available ips left: ${detail} for ${key} in node subnet ${nodeSubnet}`);
  }
}

export class NotInConfigError extends IpamError {
  readonly kind = 'validation';
  constructor(readonly ip: string) {
    super(`${ip} is not in any configured range`);
  }
}

/** The address is free: whoever decided to change it saw an older state. */
export class NotAllocatedError extends IpamError {
  readonly kind = 'conflict';
  constructor(readonly ip: string) {
    super(`${ip} is not allocated`);
  }
}

export class AlreadyAllocatedError extends IpamError {
  readonly kind = 'conflict';
  constructor(
    readonly ip: string,
    readonly holder: string,
  ) {
    super(`${ip} already been allocated to ${holder}`);
  }
}

export class OwnerConflictError extends IpamError {
  readonly kind = 'conflict';
  constructor(
    readonly ip: string,
    readonly expected: string,
    readonly actual: string,
  ) {
    super(`${ip} is held by ${actual}, not ${expected}`);
  }
}

export class ReservedIPError extends IpamError {
  readonly kind = 'conflict';
  constructor(
    readonly ip: string,
    readonly key: string,
  ) {
    super(`${ip} is reserved (key ${key}); delete its FloatingIP object to free it`);
  }
}

/** What unpark was to take is gone (another pod took it meanwhile): decide again. */
export class NoParkedIPError extends IpamError {
  readonly kind = 'conflict';
  constructor(
    readonly parkedKey: string,
    readonly nodeSubnet: string,
  ) {
    super(`failed to find floatIP by key ${parkedKey} in node subnet ${nodeSubnet}`);
  }
}

export class UnsupportedAppTypeError extends IpamError {
  readonly kind = 'validation';
  constructor(readonly pod: string) {
    super(`unsupported app type (pod ${pod})`);
  }
}

/**
 * A pod's key holds addresses a configuration change left outside every entry (kept as orphans):
 * no node subnet can use them, so the pod can go nowhere until they are released or configured
 * again. Said instead of NoFIPLeft on every node, which points at the wrong cause.
 */
export class HeldOutsideConfigError extends IpamError {
  readonly kind = 'wait';
  constructor(
    readonly key: string,
    readonly ips: readonly string[],
  ) {
    super(heldOutsideText(key, ips));
  }
}

function heldOutsideText(key: string, ips: readonly string[]): string {
  const [is, it] = ips.length === 1 ? ['is', 'it'] : ['are', 'them'];
  return `${ips.join(', ')} of ${key} ${is} outside the floating IP configuration (kept as ${ips.length === 1 ? 'an orphan' : 'orphans'}), so no node can use ${it}: release ${it} (POST /v1/ip, kubectl fip release) or add ${it} to the configuration again`;
}

/** galaxy's reason strings, which kube-scheduler shows in its FailedNodes. */
export type NodeSubnetReason = 'FloatingIPPlugin:UnknowNode' | 'FloatingIPPlugin:NoFIPConfigNode';

export class NodeSubnetError extends IpamError {
  readonly kind = 'validation';
  constructor(
    readonly reason: NodeSubnetReason,
    readonly addresses: readonly string[],
  ) {
    super(`${reason} (node addresses: ${addresses.length ? addresses.join(', ') : 'none'})`);
  }
}

/** A pod's release policy cannot apply to it (galaxy's supportReserveIPPolicy), or not with its ranges. */
export class PolicyNotSupportedError extends IpamError {
  readonly kind = 'validation';
}

/** An app (Deployment or Pool) already holds as many addresses as it may: wait for one to come back. */
export class AppLimitError extends IpamError {
  readonly kind = 'wait';
  constructor(
    message: string,
    /** Keys counted against the limit start with this. */
    readonly countPrefix: string,
  ) {
    super(message);
  }
}

/**
 * The UID rule: a re-created pod waits until its previous incarnation's addresses are dealt with
 * (galaxy's words: `waiting for delete event of <key> before reuse this ip`).
 */
export class WaitingForDeleteError extends IpamError {
  readonly kind = 'wait';
  constructor(readonly key: string) {
    super(`waiting for delete event of ${key} before reuse this ip`);
  }
}
