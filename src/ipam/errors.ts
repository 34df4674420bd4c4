// The core's errors, by what a caller should do about them (after Calico's taxonomy):
//   invalid   - the input is wrong: show it to whoever sent it (HTTP 400, an Event), do not retry;
//   exhausted - no address can satisfy the request now: report it, the scheduler tries again later;
//   conflict  - the state is not what the caller decided on: re-read and decide again;
//   not-found - the thing named does not exist.
// Every message names the IP, key and subnet involved, so a log line alone says what happened.

export type IpamErrorKind = 'invalid' | 'exhausted' | 'conflict' | 'not-found';

export abstract class IpamError extends Error {
  abstract readonly kind: IpamErrorKind;
  override get name(): string {
    return this.constructor.name;
  }
}

export class InvalidAddressError extends IpamError {
  readonly kind = 'invalid';
  constructor(
    readonly text: string,
    what = 'invalid IP address',
  ) {
    super(`${what}: ${JSON.stringify(text)}`);
  }
}

export class InvalidRangeError extends IpamError {
  readonly kind = 'invalid';
  constructor(readonly text: string) {
    // galaxy's wording, which operators may grep for
    super(`invalid ip range ${text}`);
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

export const formatConfigProblem = (p: ConfigProblem): string =>
  `floatingips[${p.entry}].${p.field}${p.value === '' ? '' : ` ${p.value}`}: ${p.message}`;

export class InvalidConfigError extends IpamError {
  readonly kind = 'invalid';
  constructor(readonly problems: readonly ConfigProblem[]) {
    super(`invalid floating IP configuration: ${problems.map(formatConfigProblem).join('; ')}`);
  }
}

export class NoFreeIPError extends IpamError {
  readonly kind = 'exhausted';
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
  readonly kind = 'not-found';
  constructor(readonly ip: string) {
    super(`${ip} is not in any configured range`);
  }
}

export class NotAllocatedError extends IpamError {
  readonly kind = 'not-found';
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

export class NoParkedIPError extends IpamError {
  readonly kind = 'exhausted';
  constructor(
    readonly parkedKey: string,
    readonly nodeSubnet: string,
  ) {
    super(`failed to find floatIP by key ${parkedKey} in node subnet ${nodeSubnet}`);
  }
}

export class UnsupportedAppTypeError extends IpamError {
  readonly kind = 'invalid';
  constructor(readonly pod: string) {
    super(`unsupported app type (pod ${pod})`);
  }
}

/** galaxy's reason strings, which kube-scheduler shows in its FailedNodes. */
export type NodeSubnetReason = 'FloatingIPPlugin:UnknowNode' | 'FloatingIPPlugin:NoFIPConfigNode';

export class NodeSubnetError extends IpamError {
  readonly kind = 'not-found';
  constructor(
    readonly reason: NodeSubnetReason,
    readonly addresses: readonly string[],
  ) {
    super(`${reason} (node addresses: ${addresses.length ? addresses.join(', ') : 'none'})`);
  }
}
