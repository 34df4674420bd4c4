// REST writes a hostile or careless caller makes, over real HTTP: writes of one Pool racing each
// other, and a dry run asked in a spelling Go's query parser does not read as `dryRun`. Scenarios
// are numbered so a failure names one.
import { ReleasePolicy } from '../../src/ipam/index.js';
import { World } from './world.js';

const CONFIG = [
  {
    nodeSubnets: ['10.0.1.0/24'],
    ips: ['10.0.100.2~10.0.100.20'],
    subnet: '10.0.100.0/24',
    gateway: '10.0.100.1',
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

describe('W1 POSTs and DELETEs of one Pool arriving together', () => {
  test('W1a every answer is a 200 or a DELETE 404, never a 500, and the Pool ends as the last write left it', async () => {
    // six callers, each alternating creates (with and without pre-allocation) and deletes: a
    // POST used to read the Pool, lose it to a DELETE, read again, lose the create to another
    // POST, ... and answer 500 after five such losses (docs/galaxy.md#creating-a-pool-and-pre-allocating
    // has no 500 but a refused creation)
    const seen: string[] = [];
    const caller = async (c: number) => {
      for (let i = 0; i < 12; i++) {
        if ((c + i) % 2 === 0) {
          const [status, body] = await answer('POST', '/v1/pool', {
            name: 'contended',
            size: 1 + (i % 3),
            preAllocateIP: i % 4 === 0,
          });
          seen.push(`POST ${status} ${String(body.message)}`);
        } else {
          const [status, body] = await answer('DELETE', '/v1/pool/contended');
          seen.push(`DELETE ${status} ${String(body.message)}`);
        }
      }
    };
    await Promise.all([0, 1, 2, 3, 4, 5].map(caller));
    const odd = seen.filter(
      (s) => !/^(POST 200 (|No enough IPs)|DELETE 200 |DELETE 404 not found: pool contended)$/.test(s),
    );
    expect(odd).toEqual([]);
    // and the Pool is still written as asked afterwards
    expect((await answer('POST', '/v1/pool', { name: 'contended', size: 7 }))[0]).toBe(200);
    expect(await answer('GET', '/v1/pool/contended')).toEqual([
      200,
      { code: 200, message: '', pool: { name: 'contended', size: 7, preAllocateIP: false } },
    ]);
  });
});

describe('W2 a dry run asked in a spelling that is not `dryRun`', () => {
  test('W2a `dryRun[]`, `dryRun[0]`, `dry.run`, ` dryRun`, `dryRun ` on a release are a 400 naming it, and nothing is released', async () => {
    await world.floatip.store.allocateIP('10.0.100.2', 'pool__p1_', {
      policy: ReleasePolicy.Never,
      nodeName: '',
      podUid: '',
    });
    const body = { ips: [{ ip: '10.0.100.2', poolName: 'p1' }] };
    // as written on the wire, and as Go's url.ParseQuery names each
    const spellings: [string, string][] = [
      ['dryRun[]', 'dryRun[]'],
      ['dryRun%5B0%5D', 'dryRun[0]'],
      ['dry.run', 'dry.run'],
      ['%20dryRun', ' dryRun'],
      ['dryRun+', 'dryRun '],
    ];
    for (const [wire, name] of spellings)
      expect(await answer('POST', `/v1/ip?${wire}=true`, body)).toEqual([
        400,
        {
          code: 400,
          message: `bad request: query.${name}: unknown parameter; the dry run is asked with dryRun (case-sensitive), and without it POST /v1/ip changes what it names`,
        },
      ]);
    expect(world.floatip.allocator.get('10.0.100.2')?.key).toBe('pool__p1_');
    // a write without any dry run: the same for a Pool's DELETE
    expect((await answer('POST', '/v1/pool', { name: 'p1', size: 1 }))[0]).toBe(200);
    expect((await answer('DELETE', '/v1/pool/p1?dryRun[]=true'))[0]).toBe(400);
    expect((await answer('GET', '/v1/pool/p1'))[0]).toBe(200);
    // the real spelling still works, and reads still ignore what they do not know
    expect((await answer('POST', '/v1/ip?dryRun=true', body))[0]).toBe(200);
    expect((await answer('GET', '/v1/ip?dryRun[]=true'))[0]).toBe(200);
  });
});

describe('W3 a Pool size that is not a whole number', () => {
  test('W3a `1.5`, `-2.5`, `1e400`, `0.0000001` are a 400 naming the number as written, and no Pool is written', async () => {
    // galaxy's Go decoder refused them too (docs/galaxy.md#creating-a-pool-and-pre-allocating: a
    // body that does not decode); `1.0` was already named, `1.5` only got `must be integer`
    for (const written of ['1.5', '-2.5', '1e400', '0.0000001'])
      expect(
        await answer('POST', '/v1/pool', `{"name":"frac","size":${written},"preAllocateIP":true}`),
      ).toEqual([
        400,
        {
          code: 400,
          message: `bad request: body.size: must be integer, not ${written} (Go's decoder reads no integer written with a fraction or an exponent)`,
        },
      ]);
    expect((await answer('GET', '/v1/pool/frac'))[0]).toBe(404);
    expect(world.floatip.allocator.byPool('frac')).toEqual([]);
    // what is no number at all keeps the validator's words
    expect(await answer('POST', '/v1/pool', '{"name":"frac","size":"4"}')).toEqual([
      400,
      { code: 400, message: 'bad request: body.size: must be integer' },
    ]);
  });
});

describe('W4 another writer changing the Pool between floatip’s read and its write', () => {
  // kubectl, another replica or any controller writing the same object: every attempt of floatip's
  // loses, as the API server's 409s say. galaxy answered 500 (its Update and Create failed once);
  // what the caller can act on is a conflict naming the pool, and a retry that then succeeds.
  const pools = { group: 'galaxy.k8s.io', resource: 'pools', namespace: 'kube-system' } as const;
  const contended = (verb: string, name: string) =>
    `pool ${name} was changed by another writer at each of floatip's 5 attempts to ${verb} it; retry`;

  test('W4a a POST that keeps losing the creation to another writer is a 409 naming the pool, then a retry lands', async () => {
    world.server.faults.inject({
      ...pools,
      verb: 'create',
      name: 'raced',
      status: 409,
      reason: 'AlreadyExists',
      message: 'pools.galaxy.k8s.io "raced" already exists',
      times: 5,
    });
    const [status, body] = await answer('POST', '/v1/pool', { name: 'raced', size: 2 });
    expect([status, body]).toEqual([
      409,
      { code: 409, message: expect.stringMatching(/^conflict: /) as unknown },
    ]);
    expect(String(body.message)).toContain(contended('create', 'raced'));
    expect(await answer('POST', '/v1/pool', { name: 'raced', size: 2 })).toEqual([
      200,
      { code: 200, message: '' },
    ]);
    expect((await answer('GET', '/v1/pool/raced'))[1].pool).toEqual({
      name: 'raced',
      size: 2,
      preAllocateIP: false,
    });
  });

  test('W4b a POST whose update keeps meeting a changed object is a 409, and one conflict alone is retried', async () => {
    expect((await answer('POST', '/v1/pool', { name: 'raced', size: 1 }))[0]).toBe(200);
    world.server.faults.failNext({ ...pools, verb: 'patch', name: 'raced' }, 409, {
      times: 5,
      message:
        'Operation cannot be fulfilled on pools.galaxy.k8s.io "raced": the object has been modified; please apply your changes to the latest version and try again',
    });
    const [status, body] = await answer('POST', '/v1/pool', { name: 'raced', size: 3 });
    expect([status, String(body.message)]).toEqual([
      409,
      expect.stringContaining(contended('update', 'raced')),
    ]);
    expect((await answer('GET', '/v1/pool/raced'))[1].pool).toEqual({
      name: 'raced',
      size: 1,
      preAllocateIP: false,
    });
    // one lost attempt is read again and written, as the caller asked
    world.server.faults.failNext({ ...pools, verb: 'patch', name: 'raced' }, 409);
    expect(await answer('POST', '/v1/pool', { name: 'raced', size: 3 })).toEqual([
      200,
      { code: 200, message: '' },
    ]);
    expect((await answer('GET', '/v1/pool/raced'))[1].pool).toEqual({
      name: 'raced',
      size: 3,
      preAllocateIP: false,
    });
  });

  test('W4c a DELETE that keeps meeting a changed object is a 409 naming the pool, then a retry deletes it', async () => {
    expect((await answer('POST', '/v1/pool', { name: 'raced', size: 1 }))[0]).toBe(200);
    world.server.faults.failNext({ ...pools, verb: 'delete', name: 'raced' }, 409, { times: 5 });
    const [status, body] = await answer('DELETE', '/v1/pool/raced');
    expect([status, String(body.message)]).toEqual([
      409,
      expect.stringContaining(contended('delete', 'raced')),
    ]);
    expect((await answer('GET', '/v1/pool/raced'))[0]).toBe(200);
    expect(await answer('DELETE', '/v1/pool/raced')).toEqual([200, { code: 200, message: '' }]);
    expect((await answer('GET', '/v1/pool/raced'))[0]).toBe(404);
  });
});
