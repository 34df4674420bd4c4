import {
  ReleasePolicy,
  releasePolicyName,
  releasePolicyOf,
  isReleasePolicy,
} from '../../../src/ipam/index.js';

test.each<[{ policy?: string; pool?: string }, ReleasePolicy]>([
  [{}, ReleasePolicy.PodDelete],
  [{ policy: '' }, ReleasePolicy.PodDelete],
  [{ policy: 'immutable' }, ReleasePolicy.Immutable],
  [{ policy: 'never' }, ReleasePolicy.Never],
  [{ policy: 'Immutable' }, ReleasePolicy.PodDelete],
  [{ policy: 'nevr' }, ReleasePolicy.PodDelete],
  [{ policy: 'immutable', pool: 'p1' }, ReleasePolicy.Never],
  [{ pool: 'p1' }, ReleasePolicy.Never],
  [{ policy: 'immutable', pool: '' }, ReleasePolicy.Immutable],
])('annotations %j give policy %i', (annotations, policy) => {
  expect(releasePolicyOf(annotations)).toBe(policy);
});

test('policy names and stored values are galaxy’s', () => {
  expect([0, 1, 2].map((p) => releasePolicyName(p as ReleasePolicy))).toEqual(['', 'immutable', 'never']);
  expect([0, 1, 2, 3, -1, '1', null].map(isReleasePolicy)).toEqual([
    true,
    true,
    true,
    false,
    false,
    false,
    false,
  ]);
});
