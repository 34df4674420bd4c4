// The alerts (manifests/monitoring/): the PrometheusRule and the plain rules file are the same
// rules, and `promtool test rules` (Debian's) passes every case of alerts.promtool.yml, each alert
// with series that fire it and series that must not.
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { promtool } from './promtool.js';

const RULES = 'manifests/monitoring/alerts.rules.yml';
const CASES = 'test/integration/alerts.promtool.yml';

interface Rule {
  alert: string;
  expr: string;
  annotations: Record<string, string>;
}
interface ExpAlert {
  exp_labels: Record<string, string>;
  exp_annotations?: Record<string, string>;
}
interface Case {
  alert_rule_test: { eval_time: string; alertname: string; exp_alerts: ExpAlert[] }[];
}

const rules = (parse(readFileSync(RULES, 'utf8')) as { groups: { rules: Rule[] }[] }).groups.flatMap(
  (g) => g.rules,
);
const byName = new Map(rules.map((r) => [r.alert, r]));

/** A rule's annotation as Prometheus renders it for an alert with these labels (templates use $labels only). */
function render(template: string, labels: Record<string, string>, where: string): string {
  const text = template.replace(/\{\{ \$labels\.(\w+) \}\}/g, (_all, name: string) => {
    const value = labels[name];
    if (value === undefined)
      throw new Error(`${where}: the template names label ${name}, which the alert does not carry`);
    return value;
  });
  if (text.includes('{{'))
    throw new Error(`${where}: only {{ $labels.x }} templates are used (and tested): ${template}`);
  return text;
}

/** The cases with every expected alert's annotations filled in from its rule. */
function casesWithAnnotations(): { rule_files: string[]; tests: Case[] } {
  const file = parse(readFileSync(CASES, 'utf8')) as { rule_files: string[]; tests: Case[] };
  for (const c of file.tests) {
    for (const t of c.alert_rule_test) {
      const rule = byName.get(t.alertname);
      if (!rule) throw new Error(`${CASES}: no alert ${t.alertname} in ${RULES}`);
      for (const e of t.exp_alerts) {
        e.exp_annotations = Object.fromEntries(
          Object.entries(rule.annotations).map(([k, v]) => [
            k,
            render(v, e.exp_labels, `${t.alertname}.${k}`),
          ]),
        );
      }
    }
  }
  return file;
}

function runCases(file: unknown): { code: number | null; output: string } {
  const dir = mkdtempSync(join(tmpdir(), 'floatip-alerts-'));
  try {
    copyFileSync(RULES, join(dir, 'alerts.rules.yml'));
    writeFileSync(join(dir, 'cases.yml'), stringify(file));
    return promtool(['test', 'rules', 'cases.yml'], dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('the PrometheusRule holds exactly the plain rules file’s groups', () => {
  const operator = parse(readFileSync('manifests/monitoring/alerts.yaml', 'utf8')) as Record<string, unknown>;
  expect(operator).toMatchObject({ apiVersion: 'monitoring.coreos.com/v1', kind: 'PrometheusRule' });
  expect(operator.spec).toEqual(parse(readFileSync(RULES, 'utf8')));
});

test('every alert has a summary and a description, and cases that fire it and that must not', () => {
  const { tests } = casesWithAnnotations();
  const firing = new Set<string>();
  const quiet = new Set<string>();
  for (const t of tests.flatMap((c) => c.alert_rule_test))
    (t.exp_alerts.length > 0 ? firing : quiet).add(t.alertname);
  for (const rule of rules) {
    expect(Object.keys(rule.annotations).sort()).toEqual(['description', 'summary']);
    expect([rule.alert, firing.has(rule.alert), quiet.has(rule.alert)]).toEqual([rule.alert, true, true]);
  }
  expect(rules.map((r) => r.alert)).toEqual([
    'FloatipSubnetAlmostFull',
    'FloatipPoolAlmostFull',
    'FloatipAddressesRunOutWithin24h',
    'FloatipLeakedAddresses',
    'FloatipOrphanedAddresses',
    'FloatipBindFailing',
    'FloatipNoLeader',
    'FloatipReplicasMissing',
    'FloatipResyncFailing',
    'FloatipConfigRefused',
  ]);
});

test('promtool check rules accepts the rules', () => {
  const result = promtool(['check', 'rules', RULES], process.cwd());
  expect([result.code, result.output]).toEqual([0, expect.stringContaining('SUCCESS: 10 rules found')]);
});

test('promtool test rules: every case passes', () => {
  const result = runCases(casesWithAnnotations());
  expect([result.code, result.output]).toEqual([0, expect.stringContaining('SUCCESS')]);
});

test('promtool test rules does judge: a firing case expected quiet fails', () => {
  const file = casesWithAnnotations();
  const firing = file.tests.find((c) => c.alert_rule_test.some((t) => t.exp_alerts.length > 0))!;
  for (const t of firing.alert_rule_test) t.exp_alerts = [];
  const result = runCases(file);
  expect(result.code).not.toBe(0);
  expect(result.output).toMatch(/FloatipSubnetAlmostFull/);
});
