// Requests to the extender port (src/extender/http.ts), generated: kube-scheduler's messages as it
// sends them (the captured v1.20 fixtures, and ones built from the world's pods and nodes), the
// same mutated at any node, bodies that are not JSON, wrong content types, a declared size over
// the limit, and every path and method, known or not.
import { readFileSync } from 'node:fs';
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import fc from 'fast-check';
import { Req } from './http.js';
import { JSON_TYPE, body } from './bodies.js';
import { hostileValue } from './json-tree.js';

const FIXTURES = new URL('../fixtures/kube-scheduler-1.20/', import.meta.url);
const fixture = (name: string): unknown => JSON.parse(readFileSync(new URL(name, FIXTURES), 'utf8'));

export type ReadVerb = 'filter' | 'prioritize' | 'priority' | 'preempt';

export interface ExtenderContext {
  readonly pods: readonly V1Pod[];
  readonly nodes: readonly V1Node[];
  readonly names: readonly string[];
}

export function extenderRequests(ctx: ExtenderContext) {
  const nodeNames = [...ctx.nodes.map((n) => n.metadata!.name!), 'no-such-node', 'fixture-node-a'];
  const pod = fc.constantFrom(
    ...ctx.pods,
    ...['filter.nodes.json', 'preempt.victims.json'].map((f) => (fixture(f) as { Pod: V1Pod }).Pod),
  );
  const names = fc.subarray(nodeNames);
  const filterArgs = fc.oneof(
    fc.record({ Pod: pod, Nodes: fc.constant(null), NodeNames: names }),
    fc.record({
      Pod: pod,
      Nodes: fc.subarray([...ctx.nodes]).map((items) => ({ metadata: {}, items })),
      NodeNames: fc.constant(null),
    }),
    fc.constantFrom(
      ...['filter.nodes.json', 'filter.nodenames.json', 'filter.after-preempt.json'].map(fixture),
    ),
  );
  const uid = fc.oneof(fc.constantFrom(...ctx.pods.map((p) => p.metadata!.uid!)), fc.uuid(), fc.constant(''));
  const preemptArgs = fc.oneof(
    fc.constantFrom(...['preempt.victims.json', 'preempt.metavictims.json'].map(fixture)),
    fc.record({
      Pod: pod,
      NodeNameToVictims: fc.constant(null),
      NodeNameToMetaVictims: fc.dictionary(
        fc.constantFrom(...nodeNames),
        fc.record({ Pods: fc.array(fc.record({ UID: uid }), { maxLength: 3 }), NumPDBViolations: fc.nat(3) }),
        { maxKeys: 4 },
      ),
    }),
    fc.record({
      Pod: pod,
      NodeNameToVictims: fc.dictionary(
        fc.constantFrom(...nodeNames),
        fc.record({ Pods: fc.subarray([...ctx.pods], { maxLength: 3 }), NumPDBViolations: fc.nat(3) }),
        { maxKeys: 4 },
      ),
      NodeNameToMetaVictims: fc.constant(null),
    }),
  );
  const bindArgs = fc.oneof(
    // a pod the world has, as the scheduler names it
    fc
      .tuple(fc.constantFrom(...ctx.pods), fc.constantFrom(...nodeNames), fc.boolean())
      .map(([p, node, withUid]) => ({
        PodName: p.metadata!.name,
        PodNamespace: p.metadata!.namespace,
        PodUID: withUid ? p.metadata!.uid : '',
        Node: node,
      })),
    fc.record({
      PodName: fc.constantFrom(...ctx.names),
      PodNamespace: fc.constantFrom('ns1', 'default', 'kube-system', 'nope', ''),
      PodUID: uid,
      Node: fc.constantFrom(...nodeNames),
    }),
    fc.constant(fixture('bind.json')),
  );
  const value = hostileValue(ctx.names);
  const post = (verb: string, valid: fc.Arbitrary<unknown>) =>
    body(valid, value, 2).map(([b, headers]) => new Req('extender', 'POST', `/v1/${verb}`, headers, b));
  const read: Record<ReadVerb, fc.Arbitrary<unknown>> = {
    filter: filterArgs,
    prioritize: filterArgs,
    priority: filterArgs,
    preempt: preemptArgs,
  };
  return {
    /** filter, prioritize (and priority) and preempt: read-only whatever they answer. */
    reads: fc.oneof(...(Object.keys(read) as ReadVerb[]).map((verb) => post(verb, read[verb]))),
    binds: post('bind', bindArgs),
    /** Everything else: health checks, unknown paths and methods, bodies declared too large. */
    other: fc.oneof(
      fc.tuple(method, extenderPath).map(([m, p]) => new Req('extender', m, p)),
      fc
        .tuple(fc.constantFrom('filter', 'prioritize', 'bind', 'preempt'), filterArgs)
        .map(
          ([verb, m]) =>
            new Req(
              'extender',
              'POST',
              `/v1/${verb}`,
              JSON_TYPE,
              JSON.stringify(m).slice(0, 100),
              300 * 2 ** 20,
            ),
        ),
    ),
  };
}

const method = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('GET', 'POST') },
  { weight: 2, arbitrary: fc.constantFrom('HEAD', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'PROPFIND') },
);

const KNOWN = [
  '/v1/filter',
  '/v1/prioritize',
  '/v1/priority',
  '/v1/bind',
  '/v1/preempt',
  '/healthy',
  '/healthz',
  '/readyz',
];

const extenderPath = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...KNOWN, '/', '/v1', '/v1/') },
  {
    weight: 3,
    arbitrary: fc
      .tuple(fc.constantFrom(...KNOWN), fc.nat(9))
      .map(
        ([p, variant]) =>
          [
            p.toUpperCase(),
            `${p}/`,
            `/${p}`,
            `${p}/x`,
            p.replace('/v1/', '/v1//'),
            p.replace(/[a-z]$/, (c) => `%${c.charCodeAt(0).toString(16)}`),
            `/v1/..${p}`,
            p.replace('/v1/', '/v1/./'),
            `/%2e%2e${p}`,
            `${p}?x=1&Pod=%7B%7D`,
          ][variant]!,
      ),
  },
  { weight: 2, arbitrary: fc.webPath().map((p) => p || '/') },
  { weight: 1, arbitrary: fc.string().map((s) => `/v1/${encodeURIComponent(s)}`) },
);
