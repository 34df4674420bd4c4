import { apiServerFailedPoolCall } from '../../e2e/churn-answers.js';

test('a Pool call the API server failed under a fault is a sensible answer, in the words floatip passes on', () => {
  const seen = [
    // kube-apiserver while etcd restarts (soak seed 5570, 2026-12-06)
    [
      503,
      '/v1/pool/churn-pool',
      '{"code":503,"message":"service unavailable: get pools.galaxy.k8s.io \\"churn-pool\\": rpc error: code = Unavailable desc = transport is closing"}',
    ],
    [
      500,
      '/v1/pool',
      '{"code":500,"message":"server error: failed to create Pool: etcdserver: request timed out"}',
    ],
    [
      503,
      '/v1/pool/p',
      '{"code":503,"message":"service unavailable: delete pools: connect ECONNREFUSED 127.0.0.1:6443"}',
    ],
  ] as const;
  for (const [status, path, text] of seen) expect(apiServerFailedPoolCall(status, path, text)).toBe(true);
});

test('floatip’s own failures, other paths and other statuses are not', () => {
  expect(
    apiServerFailedPoolCall(
      500,
      '/v1/pool',
      '{"code":500,"message":"server error: Cannot read properties of undefined"}',
    ),
  ).toBe(false);
  expect(
    apiServerFailedPoolCall(
      503,
      '/v1/ip',
      '{"code":503,"message":"service unavailable: rpc error: code = Unavailable desc = x"}',
    ),
  ).toBe(false);
  expect(
    apiServerFailedPoolCall(502, '/v1/pool', '{"code":502,"message":"service unavailable: socket hang up"}'),
  ).toBe(false);
});
