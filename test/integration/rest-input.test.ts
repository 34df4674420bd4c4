// The REST API against hostile and awkward input, over real HTTP (what a fuzzer and galaxy's own
// clients sent): names that are paths, bodies that name nothing, query strings as Go and Python
// encode them, and releases big enough to hold the process's event loop, which the scheduler
// extender shares. Scenarios are numbered so a failure names one.
import { request } from 'node:http';
import { ReleasePolicy } from '../../src/ipam/index.js';
import { capturedLog } from './helpers.js';
import { World } from './world.js';

const CONFIG = [
  {
    nodeSubnets: ['10.0.1.0/24'],
    ips: ['10.0.100.2~10.0.100.20'],
    subnet: '10.0.100.0/24',
    gateway: '10.0.100.1',
  },
  {
    nodeSubnets: ['10.0.2.0/24'],
    ips: ['fd00:100::2~fd00:100::ffff:ffff:ffff:fffe'],
    subnet: 'fd00:100::/64',
    gateway: 'fd00:100::1',
  },
];

let world: World;

beforeEach(async () => {
  world = await World.start({ config: CONFIG });
});

afterEach(() => world.checkAndStop());

type Json = Record<string, unknown>;
const answer = async (method: string, path: string, body?: unknown) => {
  const r = await world.rest(method, path, body);
  return [r.status, r.json as Json] as const;
};
const hold = (ip: string, key: string) =>
  world.floatip.store.allocateIP(ip, key, { policy: ReleasePolicy.Never, nodeName: '', podUid: '' });

/** A request sent as written: fetch would normalise `/v1/pool/.` to `/v1/pool/` before sending. */
function raw(method: string, path: string): Promise<[number, Json]> {
  const url = new URL(world.floatip.apiUrl);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, method, path }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve([res.statusCode ?? 0, JSON.parse(text) as Json]));
    });
    req.on('error', reject);
    req.end();
  });
}

const POOL_NAME_RULE =
  "lower-case letters, digits and '-' in parts joined by '.', each starting and ending with a letter or digit; at most 253 characters";

describe('I1 pool names are Kubernetes object names, checked before anything reaches the API server', () => {
  test('I1a `.`, `..`, their escapes, an escaped `/`, upper case, too long: 400 for GET and DELETE; every Pool survives', async () => {
    for (const name of ['p1', 'p2.example']) {
      expect(await answer('POST', '/v1/pool', { name, size: 1 })).toEqual([200, { code: 200, message: '' }]);
    }
    const cases: [string, string][] = [
      ['.', '.'],
      ['..', '..'],
      ['%2e', '.'],
      ['%2E%2e', '..'],
      ['a%2Fb', 'a/b'],
      ['P1', 'P1'],
      ['p1.', 'p1.'],
      ['-p1', '-p1'],
      ['p_1', 'p_1'],
      ['a'.repeat(254), 'a'.repeat(254)],
    ];
    for (const method of ['GET', 'DELETE']) {
      for (const [segment, name] of cases) {
        expect([method, segment, ...(await raw(method, `/v1/pool/${segment}`))]).toEqual([
          method,
          segment,
          400,
          {
            code: 400,
            message: `bad request: pool name ${JSON.stringify(name)} is not a Kubernetes object name (${POOL_NAME_RULE})`,
          },
        ]);
      }
      // no route for these, as in galaxy's router
      expect(await raw(method, '/v1/pool/a/b')).toEqual([
        404,
        { code: 404, message: `not found: no route ${method} /v1/pool/a/b` },
      ]);
      expect((await raw(method, '/v1/pool/'))[0]).toBe(405);
    }
    // quoted as galaxy quotes a bad ip (Go's %q: `\x00`, `\x7f`, `\u00a0`), not as JSON (`\u0000`)
    for (const [body, quoted] of [
      ['x\u0000', '"x\\x00"'],
      ['x\u007f\u00a0\u0007\u000b', '"x\\x7f\\u00a0\\a\\v"'],
      ['Pé', '"Pé"'],
    ]) {
      expect(await answer('POST', '/v1/pool', { name: body, size: 1 })).toEqual([
        400,
        {
          code: 400,
          message: `bad request: pool name ${quoted} is not a Kubernetes object name (${POOL_NAME_RULE})`,
        },
      ]);
    }
    expect((await raw('GET', '/v1/pool/x%00'))[1]).toEqual({
      code: 400,
      message: `bad request: pool name "x\\x00" is not a Kubernetes object name (${POOL_NAME_RULE})`,
    });
    const ip = await answer('POST', '/v1/ip', { ips: [{ ip: 'x\u0000' }] });
    expect(ip[1]).toEqual({ code: 400, message: 'bad request: "x\\x00" is not a valid ip (body.ips[0].ip)' });
    for (const name of ['p1', 'p2.example']) {
      expect(await answer('GET', `/v1/pool/${name}`)).toEqual([
        200,
        { code: 200, message: '', pool: { name, size: 1, preAllocateIP: false } },
      ]);
    }
  });
});

describe('I2 POST /v1/ip names what it releases', () => {
  test('I2a no `ips`, a misspelt one, an unknown field: 400 naming the field, nothing released; an empty list is a 200', async () => {
    await hold('10.0.100.2', 'pool__p1_');
    expect(await answer('POST', '/v1/ip', {})).toEqual([
      400,
      { code: 400, message: 'bad request: body.ips: is required' },
    ]);
    expect(await answer('POST', '/v1/ip', { ip: [{ ip: '10.0.100.2', poolName: 'p1' }] })).toEqual([
      400,
      { code: 400, message: 'bad request: body.ips: is required' },
    ]);
    expect(
      await answer('POST', '/v1/ip', { ips: [{ ip: '10.0.100.2', poolName: 'p1' }], dryrun: true }),
    ).toEqual([400, { code: 400, message: 'bad request: body.dryrun: unknown field' }]);
    expect(world.floatip.allocator.get('10.0.100.2')?.key).toBe('pool__p1_');
    // galaxy's clients post what they found releasable, which may be nothing
    expect(await answer('POST', '/v1/ip', { ips: [] })).toEqual([200, { code: 200, message: '' }]);
  });

  test('I2b a dryRun without a value (`?dryRun`, `?dryRun=`, first of a repeat) is a 400 naming it, not a real release', async () => {
    await hold('10.0.100.2', 'pool__p1_');
    const body = { ips: [{ ip: '10.0.100.2', poolName: 'p1' }] };
    const message =
      'bad request: query.dryRun: must be boolean (dryRun=true or dryRun=false), and the request gives it no value';
    for (const query of ['?dryRun', '?dryRun=', '?dryRun=&dryRun=true', '?keyword=x&dryRun']) {
      expect([query, ...(await answer('POST', `/v1/ip${query}`, body))]).toEqual([
        query,
        400,
        { code: 400, message },
      ]);
    }
    expect(await answer('POST', '/v1/ip?dryRun=1', body)).toEqual([
      400,
      { code: 400, message: 'bad request: query.dryRun: must be boolean' },
    ]);
    expect(world.floatip.allocator.get('10.0.100.2')?.key).toBe('pool__p1_');
    // empty integers still count as absent, as galaxy's Atoi failing took its default
    expect((await answer('GET', '/v1/ip?page=&size='))[0]).toBe(200);
  });
});

describe('I2c a dry run asked where none will be made', () => {
  test('a misspelt dryRun on a release, or a dryRun on a pool write, is a 400 and changes nothing; on a read it is ignored', async () => {
    await hold('10.0.100.2', 'pool__p1_');
    const body = { ips: [{ ip: '10.0.100.2', poolName: 'p1' }] };
    for (const name of ['dryrun', 'dry_run', 'Dry-Run', 'DRYRUN'])
      expect(await answer('POST', `/v1/ip?${name}=true`, body)).toEqual([
        400,
        {
          code: 400,
          message: `bad request: query.${name}: unknown parameter; the dry run is asked with dryRun (case-sensitive), and without it POST /v1/ip changes what it names`,
        },
      ]);
    expect(world.floatip.allocator.get('10.0.100.2')?.key).toBe('pool__p1_');
    expect(await answer('POST', '/v1/pool?dryRun=true', { name: 'p8', size: 0 })).toEqual([
      400,
      {
        code: 400,
        message:
          'bad request: query.dryRun: POST /v1/pool has no dry run; without the parameter it changes what it names',
      },
    ]);
    expect((await answer('GET', '/v1/pool/p8'))[0]).toBe(404);
    expect(await answer('POST', '/v1/pool', { name: 'p8', size: 0 })).toEqual([
      200,
      { code: 200, message: '' },
    ]);
    expect((await answer('DELETE', '/v1/pool/p8?dry_run=1'))[0]).toBe(400);
    expect((await answer('GET', '/v1/pool/p8'))[0]).toBe(200);
    // reads change nothing, and galaxy's rule stands for them: unknown parameters are ignored
    expect((await answer('GET', '/v1/ip?dryrun=true'))[0]).toBe(200);
    expect((await answer('GET', '/v1/pool/p8?dryRun=true'))[0]).toBe(200);
  });
});

describe('I3 query strings read as galaxy read them (Go url.ParseQuery)', () => {
  test('I3a `+` is a space, escapes decode, reserved characters stand for themselves, the first repeat counts', async () => {
    await hold('10.0.100.2', 'sts_ns1_web_web-0');
    await hold('10.0.100.3', 'sts_ns1_web_web-1');
    const ips = async (query: string) => {
      const [status, body] = await answer('GET', `/v1/ip?${query}`);
      return [query, status, ((body.content as Json[] | undefined) ?? []).map((i) => i.ip)];
    };
    const cases: [string, string[]][] = [
      // Go's and Python's clients encode a space as `+`
      ['keyword=web&sort=ip+desc', ['10.0.100.3', '10.0.100.2']],
      ['keyword=web&sort=IP%20DESC', ['10.0.100.3', '10.0.100.2']],
      ['keyword=web+0', []],
      ['keyword=web%2D0', ['10.0.100.2']],
      ['keyword=web-1&keyword=web-0', ['10.0.100.3']],
      ['keyword=a:b', []],
      ['podName=web,x', []],
      ['namespace=ns1&appName=web&podName=web-0@x/y', []],
      ['namespace=ns1&appName=web&podName=web-0', ['10.0.100.2']],
      // a parameter galaxy did not know is ignored, brackets or not
      ['keyword[x]=1&keyword=web-1', ['10.0.100.3']],
    ];
    for (const [query, expected] of cases) expect(await ips(query)).toEqual([query, 200, expected]);
    const [status, body] = await answer('POST', '/v1/ip?dryRun=true', {
      ips: [{ ip: '10.0.100.2', namespace: 'ns1', appName: 'web', podName: 'web-0' }],
    });
    expect([status, body.dryRun]).toEqual([200, true]);
  });

  test('I3b what Go refuses is a 400 in its words: a malformed escape, a `;`', async () => {
    const cases: [string, string][] = [
      ['keyword=%zz', 'query: invalid URL escape "%zz"'],
      ['keyword=web%', 'query: invalid URL escape "%"'],
      ['size=2;page=1', 'query: invalid semicolon separator in query'],
      ['keyword=a%3Bb&x=1;', 'query: invalid semicolon separator in query'],
    ];
    for (const [query, message] of cases) {
      expect([query, ...(await answer('GET', `/v1/ip?${query}`))]).toEqual([
        query,
        400,
        { code: 400, message: `bad request: ${message}` },
      ]);
    }
    // and in a path, where the validator said `v1.ip.%zz: malformed uri'`
    const paths: [string, string][] = [
      ['/v1/ip/%zz', '%zz'],
      ['/v1/pool/p%', '%'],
      ['/v1/pool/%e2%28%a1%zZ', '%zZ'],
    ];
    for (const [path, escape] of paths)
      expect([path, ...(await answer('GET', path))]).toEqual([
        path,
        400,
        { code: 400, message: `bad request: path ${path}: invalid URL escape "${escape}"` },
      ]);
    expect(await answer('GET', '/v1/pool/%e2%28')).toEqual([
      400,
      { code: 400, message: 'bad request: path /v1/pool/%e2%28: its escapes are not UTF-8' },
    ]);
    expect(await answer('GET', '/v1/ip?keyword=a%3Bb')).toEqual([
      200,
      { last: true, totalElements: 0, totalPages: 0, first: true, numberOfElements: 0, size: 10, number: 0 },
    ]);
  });
});

describe('I4 releases are bounded, and never hold the event loop the extender shares', () => {
  const MAX = 10_000;
  /** `n` entries naming free IPv6 addresses and a pod each: the cheapest work there is, per entry. */
  const entries = (n: number) =>
    Array.from({ length: n }, (_, i) => ({
      ip: `fd00:100::${(i + 2).toString(16)}`,
      namespace: 'ns1',
      appName: 'web',
      podName: `web-${i}`,
    }));

  test('I4a past 10,000 entries a 400, past 5 MiB a 413', async () => {
    // the count is refused before any entry is looked at: the last one is not even an address
    const over = [...entries(MAX), { ip: 'not-an-ip' }];
    expect(await answer('POST', '/v1/ip?dryRun=true', { ips: over })).toEqual([
      400,
      { code: 400, message: `bad request: body.ips: must NOT have more than ${MAX} items` },
    ]);
    const huge = { ips: entries(MAX).map((e) => ({ ...e, appName: 'a'.repeat(500) })) };
    expect(await answer('POST', '/v1/ip?dryRun=true', huge)).toEqual([
      413,
      { code: 413, message: `request entity too large: the request body is over ${5 * 2 ** 20} bytes` },
    ]);
  });

  test('I4b a maximal dry run: every entry answered, one log line, and the extender answers meanwhile', async () => {
    // the REST API as production builds it (no answer validation), logging where the test can read it
    const { log, lines } = capturedLog();
    const api = await world.serveRest({ log });
    const f = world.floatip;
    const body = JSON.stringify({ ips: entries(MAX) });

    const start = performance.now();
    let finished = 0;
    const release = fetch(`${api}/v1/ip?dryRun=true`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body,
    }).then(async (res) => {
      const json = (await res.json()) as Json;
      finished = performance.now();
      return [res.status, json] as const;
    });
    // kube-scheduler's side, meanwhile: one call after another, each timed
    const waits: number[] = [];
    while (!finished) {
      const sent = performance.now();
      const res = await fetch(`${f.extenderUrl}/healthz`);
      await res.text();
      if (!finished) waits.push(performance.now() - sent);
    }
    const [status, json] = await release;
    const took = finished - start;

    expect(status).toBe(202);
    expect((json.unreleased as string[]).length).toBe(MAX);
    expect((json.reasons as string[])[MAX - 1]).toBe(
      `fd00:100::${(MAX + 1).toString(16)} is not allocated (already released)`,
    );
    expect((json.details as string[]).length).toBe(MAX);
    // one summary line, not one per entry
    const about = lines.filter((l) => l.msg === 'release through POST /v1/ip answered');
    expect(lines.length).toBe(about.length);
    expect(about).toEqual([
      expect.objectContaining({ dryRun: true, entries: MAX, released: 0, unreleased: MAX }),
    ]);
    // the extender was answered all along. Held in one piece, the release let 3 or 4 calls through
    // and made one wait for over 90 % of it; sliced, the longest wait is the body's parsing and
    // validation, under a fifth of the release
    expect(waits.length).toBeGreaterThan(10);
    expect(Math.max(...waits) / took).toBeLessThan(0.5);
  });
});

describe('I6 pool size and preAllocateIP', () => {
  test('I6a null is the default, as Go leaves the field zero (galaxy); past int32 is a 400 naming the bound', async () => {
    expect(await answer('POST', '/v1/pool', { name: 'nulls', size: null, preAllocateIP: null })).toEqual([
      200,
      { code: 200, message: '' },
    ]);
    expect(await answer('GET', '/v1/pool/nulls')).toEqual([
      200,
      { code: 200, message: '', pool: { name: 'nulls', size: 0, preAllocateIP: false } },
    ]);
    expect(await answer('POST', '/v1/pool', { name: 'huge', size: 2147483648 })).toEqual([
      400,
      { code: 400, message: 'bad request: body.size: must be <= 2147483647' },
    ]);
  });

  test('I6d a body is read as UTF-8 whatever charset its Content-Type names, and a byte-order mark is no white space, as galaxy read them', async () => {
    const post = async (type: string, bytes: Buffer) => {
      const res = await fetch(`${world.floatip.apiUrl}/v1/pool`, {
        method: 'POST',
        headers: { 'Content-Type': type },
        body: bytes,
      });
      return [res.status, await res.json()];
    };
    // UTF-8 bytes labelled UTF-16, Latin-1 or nothing known are still UTF-8 (body-parser read them
    // as labelled, or refused the label with a 415): the name is quoted as written, the integer
    // check reads the same text, and a good body is stored
    for (const charset of ['utf-16le', 'latin1', 'x-unknown']) {
      const type = `application/json; charset=${charset}`;
      expect(await post(type, Buffer.from('{"name":"p\u00e9","size":0}'))).toEqual([
        400,
        { code: 400, message: expect.stringContaining('bad request: pool name "p\u00e9" is not') },
      ]);
      expect(await post(type, Buffer.from('{"name":"p1","size":1.0}'))).toEqual([
        400,
        { code: 400, message: expect.stringContaining('body.size: must be integer, not 1.0') },
      ]);
      expect(await post(type, Buffer.from(`{"name":"p-${charset}","size":0}`))).toEqual([
        200,
        { code: 200, message: '' },
      ]);
      expect((await answer('GET', `/v1/pool/p-${charset}`))[0]).toBe(200);
    }
    // a body in UTF-16 is no JSON to Go's decoder, whatever its label says
    const utf16 = await post(
      'application/json; charset=utf-16le',
      Buffer.from('{"name":"pw","size":0}', 'utf16le'),
    );
    expect([utf16[0], (utf16[1] as { message: string }).message]).toEqual([
      400,
      expect.stringMatching(/^bad request: invalid JSON: /),
    ]);
    // a UTF-8 byte-order mark before the object: refused, as on the extender port and by galaxy
    const mark = Buffer.from([0xef, 0xbb, 0xbf]);
    const bom = await post('application/json', Buffer.concat([mark, Buffer.from('{"name":"pb","size":0}')]));
    expect([bom[0], (bom[1] as { message: string }).message]).toEqual([
      400,
      expect.stringMatching(/^bad request: invalid JSON: /),
    ]);
    expect((await answer('GET', '/v1/pool/pb'))[0]).toBe(404);
    expect((await answer('GET', '/v1/pool/pw'))[0]).toBe(404);
  });

  test('I6b an integer written with a fraction or an exponent is a 400, as Go decoded it; elsewhere such numbers pass', async () => {
    const refusal = (field: string, written: string) => [
      400,
      {
        code: 400,
        message: `bad request: ${field}: must be integer, not ${written} (Go's decoder reads no integer written with a fraction or an exponent)`,
      },
    ];
    for (const written of ['1.0', '1e3', '2E0', '1.0e0', '-0.0', '10.00'])
      expect(await answer('POST', '/v1/pool', `{"name":"p1","size":${written}}`)).toEqual(
        refusal('body.size', written),
      );
    // a key written twice: Go refuses the first as it decodes, whatever the second is
    expect(await answer('POST', '/v1/pool', '{"name":"p1","size":1.0,"size":2}')).toEqual(
      refusal('body.size', '1.0'),
    );
    // an escaped key is the same key; the same digits in a string are only text
    expect(await answer('POST', '/v1/pool', '{"name":"p1","\\u0073ize":4.0}')).toEqual(
      refusal('body.size', '4.0'),
    );
    expect((await answer('GET', '/v1/pool/p1'))[0]).toBe(404);
    expect(await answer('POST', '/v1/pool', '{"name":"p1","size":-0}')).toEqual([
      200,
      { code: 200, message: '' },
    ]);
    expect(await answer('POST', '/v1/pool', '{ "size" : 2 , "name" : "p1.0e1" }')).toEqual([
      200,
      { code: 200, message: '' },
    ]);

    // a release entry's policy: the whole release is refused, nothing released
    await hold('10.0.100.2', 'pool__p1_');
    const entry = '{"ip":"10.0.100.2","poolName":"p1"}';
    expect(
      await answer('POST', '/v1/ip', `{"ips":[${entry},{"ip":"10.0.100.3","poolName":"p1","policy":2.0}]}`),
    ).toEqual(refusal('body.ips[1].policy', '2.0'));
    expect(world.floatip.allocator.get('10.0.100.2')?.key).toBe('pool__p1_');
    // a field the entry does not know is ignored, as Go ignored it, whatever the number
    expect(
      await answer(
        'POST',
        '/v1/ip',
        `{"ips":[{"ip":"10.0.100.2","poolName":"p1","weight":1.5e0,"policy":2}]}`,
      ),
    ).toEqual([200, { code: 200, message: '' }]);
    expect(world.floatip.allocator.get('10.0.100.2')?.key ?? '').toBe('');
  });

  test('I6c a body nested 100,000 deep around 100,000 numbers is read in one pass: answered, and the integer after it still checked', async () => {
    // each number's path was built in full: 120 KB of this held the event loop for 9 s
    const deep = `${'['.repeat(100_000)}${Array(100_000).fill('1.0').join(',')}${']'.repeat(100_000)}`;
    await hold('10.0.100.2', 'pool__p1_');
    const entry = `{"ip":"10.0.100.2","poolName":"p1","x":${deep}`;
    expect(await answer('POST', '/v1/ip', `{"ips":[${entry},"policy":2.0}]}`)).toEqual([
      400,
      {
        code: 400,
        message:
          "bad request: body.ips[0].policy: must be integer, not 2.0 (Go's decoder reads no integer written with a fraction or an exponent)",
      },
    ]);
    expect(world.floatip.allocator.get('10.0.100.2')?.key).toBe('pool__p1_');
    expect(await answer('POST', '/v1/ip', `{"ips":[${entry},"policy":2}]}`)).toEqual([
      200,
      { code: 200, message: '' },
    ]);
    expect(world.floatip.allocator.get('10.0.100.2')?.key ?? '').toBe('');
  });
});

describe('I5 pre-allocation is bounded per request', () => {
  test('I5a more than 10,000 pods’ worth at once: 400 before anything is written; within it, done', async () => {
    const [status, body] = await answer('POST', '/v1/pool', {
      name: 'big',
      size: 567_762_977,
      preAllocateIP: true,
    });
    expect([status, body.message]).toEqual([
      400,
      "bad request: pre-allocating 567762977 pods' worth of addresses for pool big is over the limit of 10000 per request; grow the pool in steps",
    ]);
    expect((await answer('GET', '/v1/pool/big'))[0]).toBe(404);
    expect(world.floatip.allocator.size).toBe(0);
    // the same pool grows in a step within the bound
    expect(await answer('POST', '/v1/pool', { name: 'big', size: 3, preAllocateIP: true })).toEqual([
      200,
      { code: 200, message: '', realPoolSize: 3 },
    ]);
  });
});
