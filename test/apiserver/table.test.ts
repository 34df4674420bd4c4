// Table cells as kube-apiserver computes them: ages, pod status, node status and roles, CRD columns.
import { firstResult } from '../../src/apiserver/jsonpath.js';
import type { ResourceType } from '../../src/apiserver/registry.js';
import { builtinResources } from '../../src/apiserver/registry.js';
import { humanDuration, toTable } from '../../src/apiserver/table.js';

const NOW = Date.parse('2026-12-01T00:00:00Z');
const type = (plural: string): ResourceType => builtinResources().find((r) => r.plural === plural)!;
const cells = (rt: ResourceType, o: Record<string, unknown>) =>
  (toTable(rt, [o], { resourceVersion: '1' }, 'None', NOW) as { rows: { cells: unknown[] }[] }).rows[0]!
    .cells;

test.each([
  [0, '0s'],
  [119_000, '119s'],
  [9 * 60_000 + 5_000, '9m5s'],
  [179 * 60_000, '179m'],
  [7 * 3600_000 + 30 * 60_000, '7h30m'],
  [47 * 3600_000, '47h'],
  [3 * 86400_000 + 5 * 3600_000, '3d5h'],
  [400 * 86400_000, '400d'],
  [(6 * 365 + 336) * 86400_000, '6y336d'],
  [-5_000, '<invalid>'],
])('age of %d ms is %s', (ms, text) => {
  expect(humanDuration(ms)).toBe(text);
});

test('jsonpath: escaped dots, brackets, indexes', () => {
  const o = { metadata: { labels: { 'floatip.io/node': 'n1' } }, spec: { list: [{ a: 1 }, { a: 2 }] } };
  expect(firstResult(o, '.metadata.labels.floatip\\.io/node')).toBe('n1');
  expect(firstResult(o, ".metadata.labels['floatip.io/node']")).toBe('n1');
  expect(firstResult(o, '.spec.list[1].a')).toBe(2);
  expect(firstResult(o, '.spec.list[-1].a')).toBe(2);
  expect(firstResult(o, '.spec.list[*].a')).toBe(1);
  expect(firstResult(o, '.spec.missing')).toBeUndefined();
  expect(firstResult(o, '.spec.list[x]')).toBeUndefined();
});

describe('pods', () => {
  const pod = (status: object, extra: object = {}) => ({
    metadata: { name: 'p', creationTimestamp: '2026-11-30T23:59:00Z' },
    spec: { containers: [{ name: 'a' }, { name: 'b' }], nodeName: 'n1' },
    status,
    ...extra,
  });
  test('running and ready', () => {
    const running = { running: {} };
    expect(
      cells(
        type('pods'),
        pod({
          phase: 'Running',
          podIP: '10.0.0.5',
          containerStatuses: [
            { ready: true, state: running, restartCount: 1 },
            { ready: false, state: running, restartCount: 2 },
          ],
        }),
      ),
    ).toEqual(['p', '1/2', 'Running', '3', '60s', '10.0.0.5', 'n1', '<none>', '<none>']);
  });
  test('a waiting container names the reason; deletion says Terminating; init containers', () => {
    expect(
      cells(
        type('pods'),
        pod({
          phase: 'Pending',
          containerStatuses: [{ state: { waiting: { reason: 'ContainerCreating' } } }],
        }),
      )[2],
    ).toBe('ContainerCreating');
    expect(
      cells(type('pods'), pod({ phase: 'Running' }, { metadata: { name: 'p', deletionTimestamp: 'x' } }))[2],
    ).toBe('Terminating');
    const init = pod({ phase: 'Pending', initContainerStatuses: [{ state: { running: {} } }] }, {});
    (init.spec as Record<string, unknown>).initContainers = [{ name: 'i' }];
    expect(cells(type('pods'), init)[2]).toBe('Init:0/1');
  });
});

test('nodes: status with SchedulingDisabled, sorted roles, first InternalIP', () => {
  const node = {
    metadata: {
      name: 'n1',
      labels: {
        'node-role.kubernetes.io/worker': '',
        'node-role.kubernetes.io/control-plane': '',
        'kubernetes.io/role': 'edge',
      },
    },
    spec: { unschedulable: true },
    status: {
      conditions: [{ type: 'Ready', status: 'False' }],
      addresses: [
        { type: 'Hostname', address: 'n1' },
        { type: 'InternalIP', address: '10.0.1.11' },
      ],
      nodeInfo: { kubeletVersion: 'v1.20.2' },
    },
  };
  expect(cells(type('nodes'), node)).toEqual([
    'n1',
    'NotReady,SchedulingDisabled',
    'control-plane,edge,worker',
    '<unknown>',
    'v1.20.2',
    '10.0.1.11',
    '<none>',
    '<unknown>',
    '<unknown>',
    '<unknown>',
  ]);
});

test('custom resources: the CRD’s columns by type, a Name column first, null where nothing is found', () => {
  const rt: ResourceType = {
    ...type('nodes'),
    crdName: 'x',
    printerColumns: [
      {
        name: 'Node',
        type: 'string',
        format: '',
        description: '',
        priority: 0,
        jsonPath: '.metadata.labels.floatip\\.io/node',
      },
      {
        name: 'Policy',
        type: 'integer',
        format: '',
        description: 'p',
        priority: 0,
        jsonPath: '.spec.policy',
      },
      {
        name: 'Attribute',
        type: 'string',
        format: '',
        description: '',
        priority: 1,
        jsonPath: '.spec.attribute',
      },
      {
        name: 'Updated',
        type: 'date',
        format: '',
        description: '',
        priority: 0,
        jsonPath: '.spec.updateTime',
      },
    ],
  };
  const table = toTable(
    rt,
    [{ metadata: { name: '10.0.0.1' }, spec: { policy: 2, updateTime: '2026-11-30T00:00:00Z' } }],
    { resourceVersion: '7' },
    'Metadata',
    NOW,
  ) as {
    columnDefinitions: { name: string; description: string; priority: number }[];
    rows: { cells: unknown[] }[];
  };
  expect(table.columnDefinitions.map((c) => [c.name, c.priority])).toEqual([
    ['Name', 0],
    ['Node', 0],
    ['Policy', 0],
    ['Attribute', 1],
    ['Updated', 0],
  ]);
  expect(table.columnDefinitions[1]!.description).toBe(
    'Custom resource definition column (in JSONPath format): .metadata.labels.floatip\\.io/node',
  );
  expect(table.rows[0]!.cells).toEqual(['10.0.0.1', null, 2, null, '24h']);
});

describe('events: kube-apiserver’s columns, so that `kubectl get events` reads as against a cluster', () => {
  const event = (extra: object = {}) => ({
    metadata: { name: '10.0.100.10.bt2m8', namespace: 'default', creationTimestamp: '2026-11-30T23:58:00Z' },
    involvedObject: { apiVersion: 'galaxy.k8s.io/v1alpha1', kind: 'FloatingIP', name: '10.0.100.10' },
    reason: 'FloatingIPReleased',
    message: 'released 10.0.100.10 from NULL_default_NULL_demo\n',
    source: { component: 'floatip' },
    firstTimestamp: '2026-11-30T23:58:00Z',
    lastTimestamp: '2026-11-30T23:59:00Z',
    count: 3,
    type: 'Normal',
    ...extra,
  });
  test('LAST SEEN, TYPE, REASON, OBJECT, MESSAGE by default; the rest with -o wide; no Name column first', () => {
    const table = toTable(type('events'), [event()], { resourceVersion: '1' }, 'None', NOW) as {
      columnDefinitions: { name: string; priority: number }[];
      rows: { cells: unknown[] }[];
    };
    expect(table.columnDefinitions.map((c) => [c.name, c.priority])).toEqual([
      ['Last Seen', 0],
      ['Type', 0],
      ['Reason', 0],
      ['Object', 0],
      ['Subobject', 1],
      ['Source', 1],
      ['Message', 0],
      ['First Seen', 1],
      ['Count', 1],
      ['Name', 1],
    ]);
    expect(table.rows[0]!.cells).toEqual([
      '60s',
      'Normal',
      'FloatingIPReleased',
      'floatingip/10.0.100.10',
      '',
      'floatip',
      'released 10.0.100.10 from NULL_default_NULL_demo',
      '2m',
      3,
      '10.0.100.10.bt2m8',
    ]);
  });
  test('a new-style event: eventTime, series, reporting controller and instance; no lastTimestamp is the first', () => {
    const cellsOf = (e: Record<string, unknown>) => cells(type('events'), e);
    const modern = event({
      firstTimestamp: undefined,
      lastTimestamp: undefined,
      count: undefined,
      source: {},
      eventTime: '2026-11-30T23:57:00.000000Z',
      reportingComponent: 'kube-scheduler',
      reportingInstance: 'cp-1',
      involvedObject: { kind: 'Node' },
    });
    expect(cellsOf(modern)).toEqual([
      '3m',
      'Normal',
      'FloatingIPReleased',
      'node',
      '',
      'kube-scheduler, cp-1',
      'released 10.0.100.10 from NULL_default_NULL_demo',
      '3m',
      1,
      '10.0.100.10.bt2m8',
    ]);
    const series = cellsOf({
      ...modern,
      series: { count: 7, lastObservedTime: '2026-11-30T23:59:30.000000Z' },
    });
    expect([series[0], series[8]]).toEqual(['30s', 7]);
    expect(cellsOf(event({ firstTimestamp: undefined, lastTimestamp: undefined }))[0]).toBe('<unknown>');
  });
});
