// The floating-IP configuration: galaxy's `floatingip-config` JSON array, parsed and validated once.
// Each element ("entry") is a set of pod address ranges inside one pod subnet, plus the node subnets
// whose nodes may host those addresses.
import {
  type Cidr,
  type Family,
  cidrContains,
  formatAddress,
  formatCidr,
  maskAddress,
  parseAddress,
  parseCidr,
} from './address.js';
import { clip } from '../clip.js';
import { type ConfigProblem, InvalidConfigError, IpamError } from './errors.js';
import { type IPRange, formatRange, parseRange } from './range.js';
import { goIntegersWithFraction, goStruct } from './go-json.js';

export interface PoolEntry {
  /** Position in the configuration array, used in every message about this entry. */
  readonly index: number;
  readonly family: Family;
  /** Canonical CIDR text of each node subnet, masked and de-duplicated, in the order written. */
  readonly nodeSubnets: readonly string[];
  readonly nodeSubnetCidrs: readonly Cidr[];
  /** Ascending, disjoint and non-adjacent, all inside `subnet`. */
  readonly ranges: readonly IPRange[];
  /** The pod subnet: the gateway masked with the prefix length of `subnet`. */
  readonly subnet: Cidr;
  readonly gateway: bigint;
  readonly vlan: number;
}

export interface PoolConfig {
  /** In the order written. */
  readonly entries: readonly PoolEntry[];
}

export const EMPTY_CONFIG: PoolConfig = { entries: [] };

/**
 * Parses a configuration from its JSON text (the ConfigMap value) or an already decoded array.
 * Galaxy's rules (docs/galaxy.md#entries-and-validation) plus: the gateway lies inside `subnet` as written, an entry uses one
 * address family, and no address belongs to two entries. Reports every problem, not just the first.
 */
export function parsePoolConfig(input: unknown): PoolConfig {
  let decoded = input;
  if (typeof input === 'string') {
    try {
      decoded = JSON.parse(input);
    } catch (err) {
      throw new InvalidConfigError([
        { entry: -1, field: '', value: '', message: `not JSON: ${(err as Error).message}` },
      ]);
    }
  }
  if (!Array.isArray(decoded)) {
    throw new InvalidConfigError([
      { entry: -1, field: '', value: '', message: 'the configuration must be a JSON array of entries' },
    ]);
  }
  const problems: ConfigProblem[] = [];
  const entries: PoolEntry[] = [];
  decoded.forEach((raw, index) => {
    const entry = parseEntry(raw, index, problems);
    if (entry) entries.push(entry);
  });
  if (typeof input === 'string') problems.push(...fractionVlans(input));
  findOverlaps(entries, problems);
  if (problems.length > 0) throw new InvalidConfigError(problems);
  return { entries };
}

/**
 * How many characters of a value (and of a message quoting it) a problem keeps: the ConfigMap
 * value may be 1 MiB, and a problem's text goes into a log line, a Warning Event and an admission
 * denial, each of which a whole megabyte would break or bury.
 */
const QUOTED = 200;

/**
 * A value as JSON for a problem, cut to QUOTED characters. JSON.stringify recurses, so a value
 * nested some thousands deep (`[[[[...]]]]` fits in a ConfigMap) throws a RangeError, which would
 * escape as a crash of the judgement instead of a problem: such a value is named by its kind.
 */
function quote(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value);
  } catch {
    text = Array.isArray(value) ? '[...]' : '{...}';
  }
  return clip(text, QUOTED);
}

function parseEntry(raw: unknown, index: number, problems: ConfigProblem[]): PoolEntry | undefined {
  const before = problems.length;
  const problem = (field: string, value: unknown, message: string): void => {
    // messages from the address parsers quote the text again
    problems.push({
      entry: index,
      field,
      value: value === undefined ? '' : quote(value),
      message: clip(message, 2 * QUOTED),
    });
  };
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    problem('', raw, 'an entry must be a JSON object');
    return undefined;
  }
  // galaxy decodes it with Go's encoding/json: keys case-insensitively, the last naming a field
  const fields = goStruct(raw as Record<string, unknown>, ENTRY);

  const nodeSubnetCidrs = parseNodeSubnets(fields, problem);

  let gateway: ReturnType<typeof parseAddress> | undefined;
  if (fields.gateway === undefined || fields.gateway === null || fields.gateway === '') {
    problem('gateway', fields.gateway, 'gateway is empty');
  } else if (typeof fields.gateway !== 'string') {
    problem('gateway', fields.gateway, 'gateway must be an IP address string');
  } else {
    gateway = tryParse(
      () => parseAddress(fields.gateway as string),
      (m) => problem('gateway', fields.gateway, m),
    );
  }

  let written: Cidr | undefined;
  if (fields.subnet === undefined || fields.subnet === null) {
    problem('subnet', fields.subnet, 'subnet is empty');
  } else if (typeof fields.subnet !== 'string') {
    problem('subnet', fields.subnet, 'subnet must be a CIDR string');
  } else {
    written = tryParse(
      () => parseCidr(fields.subnet as string),
      (m) => problem('subnet', fields.subnet, m),
    );
  }

  let subnet: Cidr | undefined;
  if (gateway && written) {
    if (gateway.family !== written.family) {
      problem(
        'gateway',
        fields.gateway,
        `gateway is IPv${gateway.family} but subnet ${formatCidr(written)} is IPv${written.family}: one address family per entry`,
      );
    } else if (!cidrContains(written, gateway)) {
      problem('gateway', fields.gateway, `gateway is not in subnet ${formatCidr(written)}`);
    } else {
      subnet = {
        family: gateway.family,
        network: maskAddress(gateway, written.prefix),
        prefix: written.prefix,
      };
    }
  }

  const ranges = parseRanges(fields.ips, subnet, problem);

  let vlan = 0;
  if (fields.vlan !== undefined && fields.vlan !== null) {
    if (
      typeof fields.vlan === 'number' &&
      Number.isInteger(fields.vlan) &&
      fields.vlan >= 0 &&
      fields.vlan <= 65535
    ) {
      vlan = fields.vlan;
    } else {
      problem('vlan', fields.vlan, 'vlan must be an integer from 0 to 65535');
    }
  }

  if (problems.length > before || !subnet || !gateway) return undefined;
  return {
    index,
    family: subnet.family,
    nodeSubnets: nodeSubnetCidrs.map(formatCidr),
    nodeSubnetCidrs,
    ranges,
    subnet,
    gateway: gateway.value,
    vlan,
  };
}

/** Each entry's vlan written `5.0` or `5e0`: Go's decoder refuses them for a uint16, JSON.parse reads 5. */
const fractionVlans = (text: string): ConfigProblem[] =>
  [...goIntegersWithFraction(text, [['*', 'vlan']])].map(({ path, written }) => ({
    entry: path[0] as number,
    field: 'vlan',
    value: clip(written, QUOTED),
    message: 'vlan must be an integer from 0 to 65535, written without a fraction or an exponent',
  }));

/** galaxy's pool entry as Go holds its fields: CIDRs and addresses are pointers or slices, the vlan a uint16. */
const ENTRY = {
  nodeSubnets: 'nullable',
  routableSubnet: 'nullable',
  ips: 'nullable',
  subnet: 'nullable',
  gateway: 'nullable',
  vlan: 'value',
} as const;

type Problem = (field: string, value: unknown, message: string) => void;

function tryParse<T>(parse: () => T, report: (message: string) => void): T | undefined {
  try {
    return parse();
  } catch (err) {
    if (err instanceof IpamError) {
      report(err.message);
      return undefined;
    }
    throw err;
  }
}

function parseNodeSubnets(fields: Record<string, unknown>, problem: Problem): Cidr[] {
  // galaxy: a present routableSubnet (deprecated) replaces nodeSubnets entirely
  const routable = fields.routableSubnet;
  const present = routable !== undefined && routable !== null;
  const field = present ? 'routableSubnet' : 'nodeSubnets';
  const written: unknown[] = present
    ? [routable]
    : Array.isArray(fields.nodeSubnets)
      ? fields.nodeSubnets
      : [];
  if (
    !present &&
    fields.nodeSubnets !== undefined &&
    fields.nodeSubnets !== null &&
    !Array.isArray(fields.nodeSubnets)
  ) {
    problem('nodeSubnets', fields.nodeSubnets, 'nodeSubnets must be a list of CIDR strings');
    return [];
  }
  if (written.length === 0) {
    problem('nodeSubnets', fields.nodeSubnets, 'node subnet is empty');
    return [];
  }
  const seen = new Set<string>();
  const cidrs: Cidr[] = [];
  written.forEach((text, i) => {
    const where = present ? field : `${field}[${i}]`;
    if (typeof text !== 'string') {
      problem(where, text, 'a node subnet must be a CIDR string');
      return;
    }
    const cidr = tryParse(
      () => parseCidr(text),
      (m) => problem(where, text, m),
    );
    if (cidr && !seen.has(formatCidr(cidr))) {
      seen.add(formatCidr(cidr));
      cidrs.push(cidr);
    }
  });
  return cidrs;
}

/**
 * The entry's ranges, in its subnet. Without a subnet (its gateway or subnet is wrong) each range
 * is still read, so that its own mistakes are reported with the others, and none is kept.
 */
function parseRanges(ips: unknown, subnet: Cidr | undefined, problem: Problem): IPRange[] {
  if (ips === undefined || ips === null) return [];
  if (!Array.isArray(ips)) {
    problem('ips', ips, 'ips must be a list of ranges ("a" or "a~b")');
    return [];
  }
  const ranges: IPRange[] = [];
  if (!subnet) {
    ips.forEach((text: unknown, i) => {
      if (typeof text !== 'string') problem(`ips[${i}]`, text, 'a range must be a string ("a" or "a~b")');
      else
        tryParse(
          () => parseRange(text),
          (m) => problem(`ips[${i}]`, text, m),
        );
    });
    return ranges;
  }
  const subnetText = formatCidr(subnet);
  ips.forEach((text: unknown, i) => {
    const field = `ips[${i}]`;
    if (typeof text !== 'string') {
      problem(field, text, 'a range must be a string ("a" or "a~b")');
      return;
    }
    const range = tryParse(
      () => parseRange(text),
      (m) => problem(field, text, m),
    );
    if (!range) return;
    if (range.family !== subnet.family) {
      problem(
        field,
        text,
        `range is IPv${range.family} but subnet ${subnetText} is IPv${subnet.family}: one address family per entry`,
      );
      return;
    }
    const inSubnet = (value: bigint): boolean => cidrContains(subnet, { family: range.family, value });
    if (!inSubnet(range.first) || !inSubnet(range.last)) {
      problem(field, text, `ip range ${formatRange(range)} not in subnet ${subnetText}`);
      return;
    }
    const previous = ranges[ranges.length - 1];
    if (previous && range.first < previous.last + 2n) {
      problem(
        field,
        text,
        `ip range ${formatRange(previous)} and ${formatRange(range)} can be merge to one or has wrong order`,
      );
      return;
    }
    ranges.push(range);
  });
  return ranges;
}

// No address may belong to two entries: it would have two gateways, and two owners could be handed it.
function findOverlaps(entries: readonly PoolEntry[], problems: ConfigProblem[]): void {
  const all = entries.flatMap((entry) => entry.ranges.map((range, i) => ({ entry, range, i })));
  all.sort((a, b) => a.range.family - b.range.family || (a.range.first < b.range.first ? -1 : 1));
  let widest: (typeof all)[number] | undefined;
  for (const item of all) {
    if (widest && widest.range.family === item.range.family && item.range.first <= widest.range.last) {
      problems.push({
        entry: item.entry.index,
        field: `ips[${item.i}]`,
        value: JSON.stringify(formatRange(item.range)),
        message: `overlaps floatingips[${widest.entry.index}].ips[${widest.i}] ${formatRange(widest.range)}: an address may belong to one entry only`,
      });
    }
    if (!widest || widest.range.family !== item.range.family || item.range.last > widest.range.last)
      widest = item;
  }
}

/** galaxy's canonical form of one entry (docs/galaxy.md#entries-and-validation): what it logs, and what parses back to the same entry. */
export function serializePoolEntry(entry: PoolEntry): Record<string, unknown> {
  const out: Record<string, unknown> = {
    nodeSubnets: [...entry.nodeSubnets],
    ips: entry.ranges.map(formatRange),
    subnet: formatCidr(entry.subnet),
    gateway: formatAddress(entry.family, entry.gateway),
  };
  if (entry.vlan !== 0) out.vlan = entry.vlan;
  return out;
}

export const serializePoolConfig = (config: PoolConfig): string =>
  JSON.stringify(config.entries.map(serializePoolEntry));

/**
 * galaxy's order of precedence between entries: by gateway, ascending (IPv4 before IPv6), ties by
 * position. It decides which entry a node's subnet is looked up in first and which entry gives first.
 */
export function entriesInGatewayOrder(config: PoolConfig): PoolEntry[] {
  return [...config.entries].sort(
    (a, b) =>
      a.family - b.family || (a.gateway < b.gateway ? -1 : a.gateway > b.gateway ? 1 : a.index - b.index),
  );
}
