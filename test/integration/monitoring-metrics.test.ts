// The alerts and the dashboard cannot rot: every metric they name, every label they match, group
// by or print, and every label value they match exists on a running floatip's /metrics (on the
// embedded API server, after one allocation, a refusal, a release and a requeue made the series).
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { World } from './world.js';
import { eventually } from './helpers.js';

type Samples = Map<string, Record<string, string>[]>;

/** name -> the label sets of its samples, from the Prometheus text format. */
function samplesOf(text: string): Samples {
  const samples: Samples = new Map();
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? \S+$/.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    samples.set(m[1]!, [...(samples.get(m[1]!) ?? []), labels]);
  }
  return samples;
}

/** What in one query (and the legend that prints its result) is not on /metrics. */
export function problemsOf(expr: string, legend: string, samples: Samples): string[] {
  const problems: string[] = [];
  const names = [...new Set([...expr.matchAll(/\b((?:floatip|galaxy)_\w+)/g)].map((m) => m[1]!))];
  if (names.length === 0) problems.push(`${expr}: names no floatip metric`);
  for (const name of names) if (!samples.has(name)) problems.push(`metric ${name} is not exported`);
  const labelsOf = (name: string) => samples.get(name) ?? [];
  for (const selector of expr.matchAll(/\b((?:floatip|galaxy)_\w+)\s*\{([^}]*)\}/g)) {
    const name = selector[1]!;
    for (const matcher of selector[2]!.matchAll(/(\w+)\s*(=~|!~|!=|=)\s*"([^"]*)"/g)) {
      const [, label, op, value] = matcher as unknown as [string, string, string, string];
      const values = new Set(labelsOf(name).flatMap((l) => (l[label] === undefined ? [] : [l[label]])));
      if (values.size === 0) {
        problems.push(`${name} has no label ${label}`);
        continue;
      }
      // the queries' regular expressions are plain alternatives; each must be a value that occurs
      const wanted = op === '=~' || op === '!~' ? value.split('|') : [value];
      for (const v of wanted) if (!values.has(v)) problems.push(`${name}{${label}="${v}"} does not occur`);
    }
  }
  const grouped = [...expr.matchAll(/\b(?:by|without)\s*\(([^)]*)\)/g)].flatMap((m) =>
    m[1]!.split(',').map((s) => s.trim()),
  );
  const printed = [...legend.matchAll(/\{\{\s*(\w+)\s*\}\}/g)].map((m) => m[1]!);
  for (const label of new Set([...grouped, ...printed])) {
    if (!names.some((n) => labelsOf(n).some((l) => l[label] !== undefined))) {
      problems.push(`${expr}: label ${label} is on none of ${names.join(', ')}`);
    }
  }
  return problems;
}

interface Query {
  readonly where: string;
  readonly expr: string;
  readonly legend: string;
}

function queries(): Query[] {
  const rules = parse(readFileSync('manifests/monitoring/alerts.rules.yml', 'utf8')) as {
    groups: { rules: { alert: string; expr: string }[] }[];
  };
  const dashboard = JSON.parse(readFileSync('manifests/monitoring/grafana-dashboard.json', 'utf8')) as {
    panels: { title: string; targets: { expr: string; legendFormat?: string }[] }[];
  };
  return [
    ...rules.groups.flatMap((g) =>
      g.rules.map((r) => ({ where: `alert ${r.alert}`, expr: r.expr, legend: '' })),
    ),
    ...dashboard.panels.flatMap((p) =>
      p.targets.map((t) => ({ where: `panel "${p.title}"`, expr: t.expr, legend: t.legendFormat ?? '' })),
    ),
  ];
}

const CONFIG = [
  {
    nodeSubnets: ['10.0.1.0/24'],
    ips: ['10.0.100.10~10.0.100.12'],
    subnet: '10.0.100.0/24',
    gateway: '10.0.100.1',
  },
];

test('every metric, label and label value of the alerts and the dashboard is on /metrics', async () => {
  const world = await World.start({ config: CONFIG });
  try {
    await world.node('a1', '10.0.1.11');
    expect((await world.rest('POST', '/v1/pool', { name: 'p1', size: 2 })).status).toBe(200);
    await eventually('the Pool in floatip’s cache', async () => world.floatip.pools.get('p1') !== undefined);
    await world.floatip.store.allocateIP('10.0.100.12', 'pool__p1_dp_ns1_web_web-1', {
      policy: 2,
      nodeName: 'a1',
      podUid: 'u1',
    });
    const p1 = await world.pod({ name: 'p1' });
    const p2 = await world.pod({ name: 'p2' });
    const p3 = await world.pod({ name: 'p3' });
    expect(await world.filter(p1, ['a1'])).toBeDefined();
    expect(await world.bind(p1, 'a1')).toBe('');
    expect(await world.bind(p2, 'a1')).toBe('');
    expect(await world.bind(p3, 'a1')).toMatch(/^no enough available ips left/);
    await world.filter(p3, ['a1']);
    await world.deletePod('p2');
    await world.settle();
    let samples: Samples = new Map();
    await eventually('a requeue and a release on /metrics', async () => {
      const res = await fetch(`${world.floatip.apiUrl}/metrics`);
      samples = samplesOf(await res.text());
      return samples.has('floatip_requeued_pods_total') && samples.has('floatip_releases_total');
    });
    const problems = queries().flatMap((q) =>
      problemsOf(q.expr, q.legend, samples).map((p) => `${q.where}: ${p}`),
    );
    expect(problems).toEqual([]);
  } finally {
    await world.stop();
  }
});

test('the check finds a metric, a label and a value that are not there', () => {
  const samples = samplesOf('floatip_leader 1\nfloatip_addresses{entry="0",state="free"} 3\n');
  expect(
    problemsOf(
      'sum by (pool) (floatip_nope_total) + floatip_addresses{state=~"free|gone",zone="a"}',
      '{{entry}}',
      samples,
    ),
  ).toEqual([
    'metric floatip_nope_total is not exported',
    'floatip_addresses{state="gone"} does not occur',
    'floatip_addresses has no label zone',
    'sum by (pool) (floatip_nope_total) + floatip_addresses{state=~"free|gone",zone="a"}: label pool is on none of floatip_nope_total, floatip_addresses',
  ]);
  expect(problemsOf('max by (entry) (floatip_addresses{state="free"})', '{{entry}}', samples)).toEqual([]);
});

test('the gauges and counter added for the alerts move: pool addresses and size, configuration refused, resync outcomes', async () => {
  const world = await World.start({ config: CONFIG });
  const value = async (series: string): Promise<number | undefined> => {
    const text = await (await fetch(`${world.floatip.apiUrl}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith(`${series} `));
    return line === undefined ? undefined : Number(line.slice(series.length + 1));
  };
  try {
    expect((await world.rest('POST', '/v1/pool', { name: 'p1', size: 3 })).status).toBe(200);
    await eventually('the Pool in floatip’s cache', async () => world.floatip.pools.get('p1') !== undefined);
    const attrs = { policy: 2, nodeName: 'a1', podUid: 'u1' };
    await world.floatip.store.allocateIP('10.0.100.11', 'pool__p1_dp_ns1_web_web-1', attrs);
    await world.floatip.store.allocateIP('10.0.100.12', 'pool__p1_', { ...attrs, podUid: '' });
    expect(await value('floatip_pool_size{pool="p1"}')).toBe(3);
    expect(await value('floatip_pool_addresses{pool="p1",state="in-use"}')).toBe(1);
    expect(await value('floatip_pool_addresses{pool="p1",state="parked"}')).toBe(1);

    expect(await value('floatip_config_refused')).toBe(0);
    const edit = (floatingips: string) =>
      world.core.replaceNamespacedConfigMap({
        name: 'floatingip-config',
        namespace: 'kube-system',
        body: { metadata: { name: 'floatingip-config' }, data: { floatingips } },
      });
    await edit('[{"ips": ');
    await eventually('the refusal on /metrics', async () => (await value('floatip_config_refused')) === 1);
    await edit(JSON.stringify(CONFIG));
    await eventually('the valid edit on /metrics', async () => (await value('floatip_config_refused')) === 0);

    expect(await value('floatip_resyncs_total{outcome="success"}')).toBe(0);
    expect(await value('floatip_resyncs_total{outcome="failure"}')).toBe(0);
    await world.floatip.lifecycle.resync();
    expect(await value('floatip_resyncs_total{outcome="success"}')).toBe(1);
    // a pod gone unnoticed whose address cannot be released: that pass missed a leak
    await world.floatip.store.allocateIP('10.0.100.10', 'NULL_ns1_NULL_ghost', {
      policy: 0,
      nodeName: 'a1',
      podUid: 'g',
    });
    await world.floatip.lifecycle.resync();
    world.server.faults.failNext({ verb: 'delete', resource: 'floatingips' }, 500, { times: 20 });
    world.server.faults.failNext({ verb: 'patch', resource: 'floatingips' }, 500, { times: 20 });
    await world.floatip.lifecycle.resync();
    expect(await value('floatip_resyncs_total{outcome="failure"}')).toBe(1);
  } finally {
    await world.stop();
  }
});
