// Requests to the REST port (src/api/, openapi/openapi.yaml), generated: GET /v1/ip with the query
// parameters the OpenAPI document lists, valid or not, encoded every way a client may (percent,
// `+` for space, reserved characters left raw, every byte escaped) and mutated (repeated, unknown,
// recased, bracketed keys, broken escapes); addresses, pool names and paths in every spelling;
// releases and pools as listed, mutated, or not JSON.
import fc from 'fast-check';
import { openApiDocument } from '../../src/api/index.js';
import { body } from './bodies.js';
import { Req } from './http.js';
import { hostileValue } from './json-tree.js';

export interface RestContext {
  /** The IPs as GET /v1/ip?size=9999 listed them: valid release entries. */
  readonly listed: readonly Record<string, unknown>[];
  readonly names: readonly string[];
}

// ---- encodings

export type Encoding = 'component' | 'form' | 'minimal' | 'every-byte' | 'every-byte-lower';
const ENCODINGS: Encoding[] = ['component', 'form', 'minimal', 'every-byte', 'every-byte-lower'];
export const encoding = fc.constantFrom(...ENCODINGS);

const hex = (b: number, lower: boolean) => {
  const h = b.toString(16).padStart(2, '0');
  return `%${lower ? h : h.toUpperCase()}`;
};

/** `text` as a query key or value (or a path segment, where `+` is no space), as the encoding writes it. */
export function encode(text: string, how: Encoding, inPath = false): string {
  const bytes = [...Buffer.from(text, 'utf8')];
  switch (how) {
    case 'component':
      return encodeURIComponent(text);
    case 'form':
      return inPath ? encodeURIComponent(text) : encodeURIComponent(text).replace(/%20/g, '+');
    case 'every-byte':
    case 'every-byte-lower':
      return bytes.map((b) => hex(b, how === 'every-byte-lower')).join('');
    case 'minimal':
      // only what would change the meaning (or that HTTP cannot carry) is escaped: `:`, `@`, `,`... stay;
      // a raw `;` in a query is refused, as Go's url.ParseQuery does since Go 1.17
      return bytes
        .map((b) => {
          const c = String.fromCharCode(b);
          const special = inPath ? '%/?#' : '%&#+=;';
          return b <= 0x20 || b >= 0x7f || special.includes(c) ? hex(b, false) : c;
        })
        .join('');
  }
}

// ---- GET /v1/ip

interface Param {
  readonly name: string;
  readonly type: string;
}

function queryParams(path: string, method: string): Param[] {
  const op = openApiDocument().paths[path]![method] as {
    parameters?: { name: string; in: string; schema?: { type?: string } }[];
  };
  return (op.parameters ?? [])
    .filter((p) => p.in === 'query')
    .map((p) => ({ name: p.name, type: p.schema?.type ?? 'string' }));
}

/** Strings a caller may search for: the world's names, sort orders, reserved characters, any text. */
function validText(names: readonly string[]): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...names) },
    {
      weight: 3,
      arbitrary: fc.constantFrom(
        ...[
          'ip',
          'ip asc',
          'ip desc',
          'IP DESC',
          'namespace desc',
          'podname asc',
          'policy',
          'policy desc',
          'nonsense',
        ],
        ...[
          'a:b',
          'a/b',
          'a+b',
          'a b',
          'a&b',
          'a=b',
          '.',
          '..',
          '%2e',
          '100%',
          'é',
          '\u{1f600}',
          '',
          ' ',
          'pool__',
          'sts_',
        ],
      ),
    },
    { weight: 2, arbitrary: fc.string() },
    { weight: 1, arbitrary: fc.string({ unit: 'binary' }) },
  );
}

function validValue(p: Param, names: readonly string[]): fc.Arbitrary<string> {
  if (p.type === 'integer')
    return fc.oneof(
      fc.constantFrom('0', '1', '10', '9999', '10000', '99999', '100000', '-1', '-0'),
      fc.integer().map(String),
    );
  if (p.type === 'boolean') return fc.constantFrom('true', 'false');
  return validText(names);
}

const INVALID: Record<string, string[]> = {
  integer: [
    'abc',
    '1.5',
    '1e3',
    '',
    ' 1',
    '0x10',
    '１',
    'NaN',
    'Infinity',
    '99999999999999999999999',
    '-',
    'true',
    '1,2',
  ],
  boolean: ['TRUE', '1', '0', 'yes', '', 'truee', 'null'],
  string: [],
};

/** One `key=value` pair as text, or a malformed one. */
export interface Pair {
  readonly key: string;
  readonly value: string;
  readonly keyEncoding: Encoding;
  readonly valueEncoding: Encoding;
}

export const pairText = (p: Pair) => `${encode(p.key, p.keyEncoding)}=${encode(p.value, p.valueEncoding)}`;

/** The documented parameters, each at most once, with valid values: the server must answer 200. */
export function validQuery(params: readonly Param[], names: readonly string[]): fc.Arbitrary<Pair[]> {
  return fc.subarray([...params]).chain((chosen) =>
    fc.tuple(
      ...chosen.map((p) =>
        fc.record({
          key: fc.constant(p.name),
          value: validValue(p, names),
          keyEncoding: encoding,
          valueEncoding: encoding,
        }),
      ),
    ),
  );
}

/** A query that may be anything: wrong types, repeated or unknown keys, broken escapes. */
function anyQuery(params: readonly Param[], names: readonly string[]): fc.Arbitrary<string> {
  const pair = fc.oneof(
    { weight: 4, arbitrary: validQuery(params, names).map((pairs) => pairs.map(pairText)) },
    {
      weight: 2,
      arbitrary: fc
        .tuple(fc.constantFrom(...params.filter((p) => INVALID[p.type]!.length > 0)), fc.nat(), encoding)
        .map(([p, i, e]) => [`${p.name}=${encode(INVALID[p.type]![i % INVALID[p.type]!.length]!, e)}`]),
    },
    {
      weight: 2,
      arbitrary: fc.tuple(fc.constantFrom(...params), validText(names), fc.nat(11)).map(([p, v, variant]) => {
        const value = encode(v, 'component');
        return [
          [`${p.name}=${value}`, `${p.name}=${value}`],
          [`${p.name}=1`, `${p.name}=2`],
          [`${p.name.toUpperCase()}=${value}`],
          [`${p.name}[]=${value}`],
          [`${p.name}[a]=${value}`],
          [`${p.name}=%zz`],
          [`${p.name}=%`],
          [`${p.name}=%e9`],
          [p.name],
          [`${p.name}=${value};x=1`],
          [`unknown=${value}`],
          ['', '', `${p.name}=${value}`],
        ][variant]!;
      }),
    },
  );
  return fc.array(pair, { maxLength: 3 }).map((groups) => groups.flat().join('&'));
}

// ---- addresses and pool names

const validAddress = fc.oneof(
  fc.ipV4(),
  fc.ipV6(),
  fc.constantFrom(
    '10.0.100.10',
    '10.0.100.11',
    '10.0.101.10',
    'fd00:100::10',
    'fd00:102::2',
    'FD00:100::10',
    'fd00:100:0:0:0:0:0:10',
    '10.9.9.9',
    '::ffff:10.0.100.10',
    '::',
    '0.0.0.0',
  ),
);

export const address = fc.oneof(
  { weight: 3, arbitrary: validAddress },
  { weight: 1, arbitrary: fc.ipV4Extended() },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '10.0.100',
      '10.0.100.256',
      '10.0.100.10/24',
      'fd00::1%eth0',
      '1.2.3.4.5',
      'localhost',
      '',
      '.',
      '..',
      ' 10.0.100.10',
      '10.0.100.010',
    ),
  },
  { weight: 1, arbitrary: fc.string() },
);

export const poolName = fc.oneof(
  { weight: 2, arbitrary: fc.constantFrom('p1', 'p2', 'p3', 'web') },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      '.',
      '..',
      '%2e',
      '%2E%2E',
      'a/b',
      'a%2fb',
      'P1',
      'Pool-1',
      'a b',
      'a.b',
      '-a',
      'a-',
      '_',
      '*',
      '%00',
      'é',
      'x'.repeat(64),
      'x'.repeat(254),
      'x'.repeat(300),
    ),
  },
  { weight: 1, arbitrary: fc.string({ minLength: 1 }).map(encodeURIComponent) },
);

/** A path segment: raw when `%`-free text was given as already encoded, else encoded one way. */
export const segment = (text: fc.Arbitrary<string>) =>
  fc
    .tuple(text, fc.constantFrom<Encoding | 'raw'>('raw', 'raw', 'component', 'every-byte', 'minimal'))
    .map(([t, e]) =>
      e === 'raw'
        ? [...t].map((c) => (/[\x21-\x7e]/.test(c) ? c : encodeURIComponent(c))).join('')
        : encode(t, e, true),
    );

// ---- the requests

export function restRequests(ctx: RestContext) {
  const ipParams = queryParams('/v1/ip', 'get');
  const query = anyQuery(ipParams, ctx.names);
  const getPath = fc.oneof(
    { weight: 6, arbitrary: query.map((q) => `/v1/ip${q ? `?${q}` : ''}`) },
    { weight: 3, arbitrary: segment(address).map((ip) => `/v1/ip/${ip}`) },
    { weight: 1, arbitrary: query.map((q) => `/v1/subnets${q ? `?${q}` : ''}`) },
    { weight: 2, arbitrary: segment(poolName).map((name) => `/v1/pool/${name}`) },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        ...[
          '/openapi.json',
          '/apidocs.json',
          '/apidocs/',
          '/apidocs',
          '/apidocs/index.html',
          '/apidocs/swagger-ui.css',
          '/metrics',
        ],
        ...[
          '/',
          '/v1',
          '/v1/',
          '/V1/IP',
          '/v1/ip/',
          '/v1//ip',
          '/v1/pool',
          '/v1/pool/',
          '/v1/ip/10.0.100.10/x',
          '/v1/%69p',
          '/%2e%2e/v1/ip',
          '/v1/./ip',
        ],
      ),
    },
    { weight: 1, arbitrary: fc.webPath().map((p) => p || '/') },
  );
  const readMethod = fc.oneof(
    { weight: 8, arbitrary: fc.constant('GET') },
    { weight: 2, arbitrary: fc.constantFrom('HEAD', 'OPTIONS', 'PUT', 'PATCH', 'PROPFIND') },
  );
  const value = hostileValue(ctx.names, { maxString: 17 * 2 ** 20 });
  const release = fc.record({ ips: fc.subarray([...ctx.listed], { minLength: 1, maxLength: 4 }) });
  const pool = fc.record(
    { name: fc.constantFrom('p1', 'p2', 'p3', 'p4', 'web'), size: fc.nat(4), preAllocateIP: fc.boolean() },
    { requiredKeys: ['name'] },
  );
  const dryRun = fc.oneof(
    { weight: 4, arbitrary: fc.constant('') },
    { weight: 4, arbitrary: fc.constantFrom('?dryRun=true', '?dryRun=false') },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '?dryRun=TRUE',
        '?dryRun=1',
        '?dryRun=',
        '?dryRun',
        '?dryRun=true&dryRun=false',
        '?dryrun=true',
        '?dryRun=yes',
      ),
    },
  );
  return {
    /** Every read: GET and the methods no route has. */
    reads: fc.tuple(readMethod, getPath).map(([m, p]) => new Req('api', m, p)),
    /** GET /v1/ip with a valid query, encoded one way, and the same query encoded by encodeURIComponent. */
    validLists: validQuery(ipParams, ctx.names).map((pairs) => ({
      encoded: new Req('api', 'GET', `/v1/ip?${pairs.map(pairText).join('&')}`),
      plain: new Req(
        'api',
        'GET',
        `/v1/ip?${pairs.map((p) => `${encodeURIComponent(p.key)}=${encodeURIComponent(p.value)}`).join('&')}`,
      ),
    })),
    /** GET /v1/ip/{ip} for a valid address, encoded one way and plain. */
    validAddresses: fc
      .tuple(
        validAddress,
        fc.constantFrom<Encoding>('component', 'every-byte', 'every-byte-lower', 'minimal'),
      )
      .map(([ip, e]) => ({
        encoded: new Req('api', 'GET', `/v1/ip/${encode(ip, e, true)}`),
        plain: new Req('api', 'GET', `/v1/ip/${ip}`),
      })),
    releases: fc
      .tuple(dryRun, body(release, value, 3))
      .map(([q, [b, headers]]) => new Req('api', 'POST', `/v1/ip${q}`, headers, b)),
    poolPuts: body(pool, value, 3).map(([b, headers]) => new Req('api', 'POST', '/v1/pool', headers, b)),
    poolDeletes: segment(poolName).map((name) => new Req('api', 'DELETE', `/v1/pool/${name}`)),
  };
}
