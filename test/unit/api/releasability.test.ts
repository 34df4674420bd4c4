// One rule for the list's `releasable` and the release itself (docs/galaxy.md#releasable, with floatip's changes).
import type { V1Pod } from '@kubernetes/client-node';
import { judge } from '../../../src/api/releasability.js';
import { GO_ZERO_TIME, floatingIPJson, formatTime } from '../../../src/api/wire.js';
import { type Allocation, ReleasePolicy } from '../../../src/ipam/index.js';

const held = (key: string, extra: Partial<Allocation> = {}): Allocation => ({
  ip: '10.0.0.5',
  family: 4,
  key,
  policy: ReleasePolicy.Never,
  nodeName: 'n1',
  podUid: 'u1',
  updateTime: 1_700_000_000_123,
  reserved: false,
  ...extra,
});
const pod = (uid: string, phase: string): V1Pod => ({ metadata: { uid }, status: { phase } });

test.each<[string, Allocation | undefined, V1Pod | undefined | 'unknown', boolean, string]>([
  ['free', undefined, undefined, false, ''],
  ['reserved', held('pool__reserved-for-node_', { reserved: true }), undefined, false, ''],
  ['a key that names nothing', held('hello-xx'), undefined, false, ''],
  ['parked at an app', held('dp_ns1_app_'), undefined, true, 'Deleted'],
  ['parked at a pool', held('pool__p1_'), undefined, true, 'Deleted'],
  ['pod gone', held('sts_ns1_web_web-0'), undefined, true, 'Deleted'],
  ['pod running', held('sts_ns1_web_web-0'), pod('u1', 'Running'), false, 'Running'],
  [
    'pod pending, no UID recorded',
    held('sts_ns1_web_web-0', { podUid: '' }),
    pod('u9', 'Pending'),
    false,
    'Pending',
  ],
  ['pod finished, still there', held('sts_ns1_web_web-0'), pod('u1', 'Succeeded'), false, 'Succeeded'],
  ['pod failed (evicted), still there', held('sts_ns1_web_web-0'), pod('u1', 'Failed'), false, 'Failed'],
  ['a newer pod of the same name', held('sts_ns1_web_web-0'), pod('u2', 'Running'), false, 'Running'],
  ['cannot tell', held('sts_ns1_web_web-0'), 'unknown', false, 'Unknown'],
])('%s: releasable %p, status %p', (_, allocation, state, releasable, status) => {
  const judged = judge(allocation, state);
  expect([judged.releasable, judged.status]).toEqual([releasable, status]);
  if (!releasable) expect(judged.reason).toBeTruthy();
});

test.each([
  ['Running', 'pod ns1_web-0 (uid u1) has not finished (phase Running)'],
  ['Pending', 'pod ns1_web-0 (uid u1) has not finished (phase Pending)'],
  ['', 'pod ns1_web-0 (uid u1) has not finished (phase not set)'],
])(
  'a pod in phase %j: galaxy’s reason to the letter, with the real phase; the pod in the detail',
  (phase, detail) => {
    const judged = judge(held('sts_ns1_web_web-0'), pod('u1', phase));
    expect([judged.reason, judged.detail]).toEqual([`releasable is false, pod status ${phase}`, detail]);
  },
);

test('cannot tell: galaxy’s Unknown, and why in the detail', () => {
  expect(judge(held('sts_ns1_web_web-0'), 'unknown')).toEqual({
    releasable: false,
    status: 'Unknown',
    reason: 'releasable is false, pod status Unknown',
    detail: 'cannot tell whether pod ns1_web-0 exists',
  });
});

test('an address held aside for an object floatip cannot read: refused with why, and no label to remove', () => {
  const aside = held('pool__zz_', { reserved: true, podUid: '', nodeName: '' });
  expect(judge(aside, undefined, 'spec.policy 3 is not 0, 1 or 2')).toEqual({
    releasable: false,
    status: '',
    reason: 'releasable is false: 10.0.0.5 has a FloatingIP object floatip cannot read',
    detail:
      'its FloatingIP 10.0.0.5: spec.policy 3 is not 0, 1 or 2; the address is held aside until the object is fixed or deleted (kubectl delete fip 10.0.0.5)',
  });
  // an operator's reservation keeps its words
  expect(judge(aside, undefined).detail).toBe(
    'its FloatingIP 10.0.0.5 has the label "reserved"; remove the label or the object to free it',
  );
});

describe('the FloatingIP JSON object', () => {
  test("galaxy's field order, empty fields and false releasable omitted", () => {
    const json = floatingIPJson('10.0.0.5', held('pool__p1_dp_ns1_app_app-1'), {
      releasable: true,
      status: 'Deleted',
    });
    expect(Object.keys(json)).toEqual([
      'ip',
      'namespace',
      'appName',
      'podName',
      'poolName',
      'policy',
      'appType',
      'updateTime',
      'status',
      'releasable',
    ]);
    expect(json).toMatchObject({
      appType: 'deployment',
      poolName: 'p1',
      updateTime: '2023-11-14T22:13:20.123Z',
    });
    expect(floatingIPJson('10.0.0.6', undefined)).toEqual({
      ip: '10.0.0.6',
      policy: 0,
      updateTime: GO_ZERO_TIME,
    });
    expect(
      Object.keys(
        floatingIPJson('10.0.0.7', held('NULL_ns1_NULL_pod1'), { releasable: false, status: 'Running' }),
      ),
    ).toEqual(['ip', 'namespace', 'appName', 'podName', 'policy', 'appType', 'updateTime', 'status']);
  });

  test.each([
    [0, GO_ZERO_TIME],
    [Date.UTC(2020, 4, 29, 11, 11, 44, 630), '2020-05-29T11:11:44.63Z'],
    [Date.UTC(2020, 4, 29, 11, 11, 44, 0), '2020-05-29T11:11:44Z'],
    [Date.UTC(2020, 4, 29, 11, 11, 44, 7), '2020-05-29T11:11:44.007Z'],
  ])('time %p prints as Go prints it: %p', (ms, text) => expect(formatTime(ms)).toBe(text));
});
