import { CniArgsError, addressOf, formatCniArgs, parseCniArgs } from '../../../src/cni/args.js';
import { formatRange } from '../../../src/ipam/index.js';

test("the spec's example parses: groups in order, ipinfos", () => {
  const args = parseCniArgs(
    JSON.stringify({
      request_ip_range: [['10.0.0.200~10.0.0.238'], ['10.0.0.2~10.0.0.30'], ['10.0.0.60~10.0.0.80']],
      common: {
        ipinfos: [
          { ip: '10.0.0.200/24', vlan: 0, gateway: '10.0.0.1' },
          { ip: '10.0.0.2/24', vlan: 0, gateway: '10.0.0.1' },
        ],
      },
    }),
  );
  expect(args.groups.map((g) => g.map(formatRange))).toEqual([
    ['10.0.0.200~10.0.0.238'],
    ['10.0.0.2~10.0.0.30'],
    ['10.0.0.60~10.0.0.80'],
  ]);
  expect(args.ipinfos.map(addressOf)).toEqual(['10.0.0.200', '10.0.0.2']);
});

test('absent, empty, {} and null (as Go decodes it into galaxy’s struct) mean nothing asked', () => {
  for (const text of [undefined, '', '{}', 'null', ' null '])
    expect(parseCniArgs(text)).toEqual({ groups: [], ipinfos: [] });
});

test.each([
  ['{', /^unmarshal pod cni args: /],
  ['[]', /^unmarshal pod cni args: not a JSON object$/],
  ['{"request_ip_range":["10.0.0.1"]}', /request_ip_range must be a list of lists/],
  ['{"request_ip_range":[["10.0.0.9~10.0.0.1"]]}', /^bad IPRange format "10.0.0.9~10.0.0.1"$/],
  ['{"request_ip_range":[[5]]}', /^bad IPRange format 5$/],
  [
    JSON.stringify({ request_ip_range: Array.from({ length: 65 }, () => ['10.0.0.1~10.0.0.9']) }),
    /^request_ip_range has 65 groups, one interface each; floatip gives a pod at most 64$/,
  ],
  // Go's net.ParseIP refuses a zone; floatip once dropped it and allocated fd00:100::50
  ['{"request_ip_range":[["fd00:100::50%eth0"]]}', /^bad IPRange format "fd00:100::50%eth0"$/],
])('%s is refused', (text, message) => {
  expect(() => parseCniArgs(text)).toThrow(CniArgsError);
  expect(() => parseCniArgs(text)).toThrow(message);
});

test('64 groups, one interface each, are taken', () => {
  const groups = Array.from({ length: 64 }, (_, i) => [`10.0.${i}.1~10.0.${i}.9`]);
  expect(parseCniArgs(JSON.stringify({ request_ip_range: groups })).groups).toHaveLength(64);
});

test("bind's output is galaxy's: compact, ordered, normalised, unknown keys dropped", () => {
  const args = parseCniArgs(
    '{"zzz":1,"request_ip_range":[["10.0.0.5~10.0.0.5","10.0.0.7~10.0.0.9"]],"common":{"other":"x"}}',
  );
  const written = formatCniArgs({ ...args, ipinfos: [{ ip: '10.0.0.5/24', vlan: 2, gateway: '10.0.0.1' }] });
  expect(written).toBe(
    '{"request_ip_range":[["10.0.0.5","10.0.0.7~10.0.0.9"]],"common":{"ipinfos":[{"ip":"10.0.0.5/24","vlan":2,"gateway":"10.0.0.1"}]}}',
  );
  expect(
    formatCniArgs({ groups: [], ipinfos: [{ ip: '10.49.27.205/24', vlan: 2, gateway: '10.49.27.1' }] }),
  ).toBe('{"common":{"ipinfos":[{"ip":"10.49.27.205/24","vlan":2,"gateway":"10.49.27.1"}]}}');
  expect(formatCniArgs({ groups: [], ipinfos: [] })).toBe('{"common":{}}');
});

test('IPv6 and dual stack: one ipinfo per family', () => {
  const text = formatCniArgs({
    groups: [],
    ipinfos: [
      { ip: '10.0.100.10/24', vlan: 0, gateway: '10.0.100.1' },
      { ip: 'fd00:100::10/64', vlan: 0, gateway: 'fd00:100::1' },
    ],
  });
  expect(parseCniArgs(text).ipinfos.map(addressOf)).toEqual(['10.0.100.10', 'fd00:100::10']);
});

test('keys are matched as galaxy’s Go decoder matches them: case-insensitively, the last naming a field', () => {
  const args = parseCniArgs(
    '{"REQUEST_IP_RANGE":[["10.0.0.5"]],"Common":{"IPInfos":[{"IP":"10.0.0.5/24","Vlan":2,"GateWay":"10.0.0.1"}]}}',
  );
  expect(args.groups.map((g) => g.map(formatRange))).toEqual([['10.0.0.5']]);
  expect(args.ipinfos).toEqual([{ ip: '10.0.0.5/24', vlan: 2, gateway: '10.0.0.1' }]);
  // the last key wins; a null sets a list to nil
  expect(parseCniArgs('{"request_ip_range":[["10.0.0.5"]],"Request_IP_Range":null}').groups).toEqual([]);
  // and what bind writes is galaxy's own spelling
  expect(formatCniArgs(args)).toBe(
    '{"request_ip_range":[["10.0.0.5"]],"common":{"ipinfos":[{"ip":"10.0.0.5/24","vlan":2,"gateway":"10.0.0.1"}]}}',
  );
});

test.each([
  ['{"common":5}', 'unmarshal pod cni args: common is not an object'],
  ['{"common":{"ipinfos":{"ip":"10.0.0.5/24"}}}', 'unmarshal pod cni args: ipinfos is not a list'],
  [
    '{"common":{"ipinfos":[{"ip":"10.0.0.5/24","vlan":"5","gateway":"10.0.0.1"}]}}',
    'unmarshal pod cni args: ipinfo 0 {"ip":"10.0.0.5/24","vlan":"5","gateway":"10.0.0.1"} is not {"ip": string, "vlan": number, "gateway": string}',
  ],
  [
    '{"common":{"ipinfos":[{"ip":"10.0.0.5/24"},{"ip":5}]}}',
    'unmarshal pod cni args: ipinfo 1 {"ip":5} is not {"ip": string, "vlan": number, "gateway": string}',
  ],
  [
    '{"common":{"ipinfos":[null]}}',
    'unmarshal pod cni args: ipinfo 0 null is not {"ip": string, "vlan": number, "gateway": string}',
  ],
  [
    '{"common":{"ipinfos":[{"ip":"10.0.0.5/24","gateway":1}]}}',
    'unmarshal pod cni args: ipinfo 0 {"ip":"10.0.0.5/24","gateway":1} is not {"ip": string, "vlan": number, "gateway": string}',
  ],
  // a vlan is Go's uint16: a whole number from 0 to 65535, written without a fraction or exponent
  ...[
    ['5.0', '5.0'],
    ['5e0', '5e0'],
    ['-0.0', '-0.0'],
    ['1.5', '1.5'],
    ['-1', '-1'],
    ['65536', '65536'],
  ].map(([vlan, written]) => [
    `{"common":{"ipinfos":[{"ip":"10.0.0.5/24","vlan":${vlan},"gateway":"10.0.0.1"}]}}`,
    `unmarshal pod cni args: ipinfo 0 vlan ${written} is not a uint16 (an integer from 0 to 65535, written without a fraction or an exponent)`,
  ]),
  // keys as Go matches them, and a key written twice: the first is refused as it is decoded
  [
    '{"COMMON":{"IpInfos":[{"ip":"10.0.0.5/24"},{"ip":"10.0.0.6/24","VLAN":2.0}]}}',
    'unmarshal pod cni args: ipinfo 1 vlan 2.0 is not a uint16 (an integer from 0 to 65535, written without a fraction or an exponent)',
  ],
  [
    '{"common":{"ipinfos":[{"ip":"10.0.0.5/24","vlan":2.0,"vlan":2}]}}',
    'unmarshal pod cni args: ipinfo 0 vlan 2.0 is not a uint16 (an integer from 0 to 65535, written without a fraction or an exponent)',
  ],
])('ipinfos of a type Go refuses are refused, not read leniently: %s', (text, message) => {
  expect(() => parseCniArgs(text)).toThrow(new CniArgsError(message));
});

test('numbers written with a fraction elsewhere are only what Go reads them as: ignored or text', () => {
  const args = parseCniArgs(
    '{"weight":1.5,"common":{"x":2.0,"ipinfos":[{"ip":"10.0.0.5/24","vlan":65535,"gateway":"10.0.0.1","mtu":1.0e3}]}}',
  );
  expect(args.ipinfos).toEqual([{ ip: '10.0.0.5/24', vlan: 65535, gateway: '10.0.0.1' }]);
});

test('common named twice, exactly or as Go folds it, is refused: Go merges the two, JSON.parse keeps the last', () => {
  const info = '{"ip":"10.0.0.5/24","vlan":0,"gateway":"10.0.0.1"}';
  for (const [text, key] of [
    [`{"common":{"ipinfos":[${info}]},"common":{}}`, 'common'],
    [`{"common":{"ipinfos":[${info}]},"common":null}`, 'common'],
    [`{"COMMON":{"ipinfos":[${info}]},"common":{}}`, 'common'],
  ] as const) {
    expect(() => parseCniArgs(text)).toThrow(
      `unmarshal pod cni args: ${key} names common a second time (Go's decoder merges the two, so galaxy's daemon and floatip would read different ipinfos): write it once`,
    );
  }
  // what Go and JSON.parse read alike named twice: the last list, an unknown key, a nested field
  const ranges = parseCniArgs('{"request_ip_range":[["10.0.0.1"]],"request_ip_range":[["10.0.0.2"]]}');
  expect(ranges.groups.map((g) => g.map(formatRange))).toEqual([['10.0.0.2']]);
  expect(parseCniArgs(`{"x":1,"x":2,"common":{"ipinfos":[${info}],"ipinfos":[]}}`).ipinfos).toEqual([]);
});
