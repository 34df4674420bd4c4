// The `k8s.v1.cni.galaxy.io/args` pod annotation (docs/galaxy.md#the-cni-args-annotation): what a pod asks for
// (`request_ip_range`) and what bind gives it (`common.ipinfos`), which the CNI on the node reads.
// This module is its one decoder and encoder.
import {
  type IPRange,
  type JsonPath,
  type RangeGroup,
  formatRange,
  goIntegersWithFraction,
  goStruct,
  jsonPathText,
  parseRange,
  goFolded,
  repeatedGoKeys,
} from '../ipam/index.js';

export const CNI_ARGS_ANNOTATION = 'k8s.v1.cni.galaxy.io/args';

export interface IPInfo {
  /** `<address>/<prefix length>`, the address not masked. */
  readonly ip: string;
  readonly vlan: number;
  readonly gateway: string;
}

export interface CniArgs {
  /** One address wanted per group; empty means one address per family from anywhere allowed. */
  readonly groups: readonly RangeGroup[];
  readonly ipinfos: readonly IPInfo[];
}

/** A pod's annotation that cannot be read: the pod's owner must fix it. */
export class CniArgsError extends Error {
  readonly kind = 'validation';
}

/** Decodes the annotation; absent, "" or `null` (Go decodes null into a struct as nothing) is `{}`. Errors use galaxy's wording. */
export function parseCniArgs(text: string | undefined): CniArgs {
  if (text === undefined || text === '') return { groups: [], ipinfos: [] };
  let decoded: unknown;
  try {
    decoded = JSON.parse(text);
  } catch (err) {
    throw new CniArgsError(`unmarshal pod cni args: ${(err as Error).message}`);
  }
  const repeated = repeatedCommon(text);
  if (repeated) throw repeatedKey(repeated);
  if (decoded === null) return { groups: [], ipinfos: [] };
  if (typeof decoded !== 'object' || Array.isArray(decoded)) {
    throw new CniArgsError('unmarshal pod cni args: not a JSON object');
  }
  // galaxy decodes it with Go's encoding/json: keys case-insensitively, the last naming a field
  const args = goStruct(decoded as Record<string, unknown>, ARGS);
  if (args.common !== undefined && args.common !== null && !isObject(args.common))
    throw new CniArgsError('unmarshal pod cni args: common is not an object');
  const common = isObject(args.common) ? goStruct(args.common, COMMON) : {};
  const groups = parseGroups(args.request_ip_range);
  const ipinfos = parseIPInfos(common.ipinfos);
  // only ipinfos hold an integer (a pending pod's annotation, read at every filter, has none)
  if (ipinfos.length > 0) refuseFractionVlans(text);
  return { groups, ipinfos };
}

/**
 * `common` named twice, as Go matches keys: Go's decoder merges the two into one struct
 * (`"common":{"ipinfos":[...]},"common":{}` or `"common":null` keeps the first's ipinfos), JSON.parse
 * keeps the last, so galaxy's daemon and this reader would see different addresses. Other fields
 * read alike named twice (the last wins in both: lists, strings, numbers), and unknown keys are
 * ignored by both.
 */
export function repeatedCommon(text: string): JsonPath | undefined {
  for (const path of repeatedGoKeys(text))
    if (path.length === 1 && goFolded(String(path[0])) === 'common') return path;
  return undefined;
}

/** An annotation naming `common` twice: refused, as floatip cannot read it as Go does. */
export const repeatedKey = (path: JsonPath) =>
  new CniArgsError(
    `unmarshal pod cni args: ${jsonPathText(path)} names common a second time (Go's decoder merges the two, so galaxy's daemon and floatip would read different ipinfos): write it once`,
  );

const notUint16 = (index: unknown, written: string) =>
  new CniArgsError(
    `unmarshal pod cni args: ipinfo ${index} vlan ${written} is not a uint16 (an integer from 0 to 65535, written without a fraction or an exponent)`,
  );

/** A vlan written `5.0` or `5e0`, which Go's decoder refuses for a uint16 and JSON.parse reads as 5. */
function refuseFractionVlans(text: string): void {
  const [first] = goIntegersWithFraction(text, [['common', 'ipinfos', '*', 'vlan']]);
  if (first) throw notUint16(first.path[2], first.written);
}

// galaxy's CniArgs, CommonCniArgs and IPInfo, as Go holds their fields
const ARGS = { request_ip_range: 'nullable', common: 'value' } as const;
const COMMON = { ipinfos: 'nullable' } as const;
const IPINFO = { ip: 'nullable', vlan: 'value', gateway: 'nullable' } as const;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * One interface per group: more than any pod has. Matching groups to distinct addresses grows with
 * the square of their number, so a 100 KB annotation of thousands of groups (under the API server's
 * 256 KiB) held floatip's event loop for seconds and ran it out of memory.
 */
export const MAX_RANGE_GROUPS = 64;

function parseGroups(raw: unknown): RangeGroup[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw))
    throw new CniArgsError('unmarshal pod cni args: request_ip_range must be a list of lists');
  if (raw.length > MAX_RANGE_GROUPS) {
    throw new CniArgsError(
      `request_ip_range has ${raw.length} groups, one interface each; floatip gives a pod at most ${MAX_RANGE_GROUPS}`,
    );
  }
  return raw.map((group: unknown) => {
    if (!Array.isArray(group)) {
      throw new CniArgsError('unmarshal pod cni args: request_ip_range must be a list of lists');
    }
    return group.map((range: unknown): IPRange => {
      try {
        if (typeof range !== 'string') throw new Error('not a string');
        return parseRange(range);
      } catch {
        throw new CniArgsError(`bad IPRange format ${JSON.stringify(range)}`);
      }
    });
  });
}

/**
 * Refused as Go's decoder refuses them, or as galaxy's CNI fails on them: an entry that is not an
 * object with an address (a null is Go's zero ipinfo, with no address), a VLAN id that is no number
 * (`"vlan":"5"` read as 0 would put a pod on the untagged network), a gateway that is no string.
 */
function parseIPInfos(raw: unknown): IPInfo[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw new CniArgsError('unmarshal pod cni args: ipinfos is not a list');
  return raw.map((info: unknown, index): IPInfo => {
    const i = isObject(info) ? goStruct(info, IPINFO) : undefined;
    if (
      i === undefined ||
      typeof i.ip !== 'string' ||
      i.ip === '' ||
      !(i.vlan === undefined || i.vlan === null || typeof i.vlan === 'number') ||
      !(i.gateway === undefined || i.gateway === null || typeof i.gateway === 'string')
    ) {
      throw new CniArgsError(
        `unmarshal pod cni args: ipinfo ${index} ${JSON.stringify(info)} is not {"ip": string, "vlan": number, "gateway": string}`,
      );
    }
    if (typeof i.vlan === 'number' && !(Number.isInteger(i.vlan) && i.vlan >= 0 && i.vlan <= 65535))
      throw notUint16(index, JSON.stringify(i.vlan));
    return {
      ip: i.ip,
      vlan: typeof i.vlan === 'number' ? i.vlan : 0,
      gateway: typeof i.gateway === 'string' ? i.gateway : '',
    };
  });
}

/** The address of an ipinfo, without its prefix length. */
export const addressOf = (info: IPInfo): string => info.ip.split('/')[0]!;

/**
 * The annotation bind writes: compact, `request_ip_range` first (ranges normalised, omitted when
 * empty), then `common` (always) with `ipinfos` (omitted when empty); ipinfo keys ip, vlan, gateway.
 */
export function formatCniArgs(args: CniArgs): string {
  const common =
    args.ipinfos.length > 0
      ? { ipinfos: args.ipinfos.map(({ ip, vlan, gateway }) => ({ ip, vlan, gateway })) }
      : {};
  if (args.groups.length === 0) return JSON.stringify({ common });
  return JSON.stringify({ request_ip_range: args.groups.map((g) => g.map(formatRange)), common });
}
