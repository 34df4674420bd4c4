// `npm run soak`: the churn of E2E-R1 at length: FLOATIP_SOAK_OPERATIONS operations (30,000) or
// FLOATIP_SOAK_MINUTES (90), whichever comes first, every fault kind cycled, then the same
// invariants; the figures are printed at the end (and written to <run dir>/soak-figures.json).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FAULT_KINDS } from './churn-faults.js';
import { churnCluster, describeFigures, runChurn } from './churn.js';
import { runDir } from './cluster.js';
import { scenario } from './floatip.js';
import { INVARIANTS } from './ipam-invariants.js';
import { note } from './suite.js';

const ns = 'e2e-soak';
const OPERATIONS = Number(process.env.FLOATIP_SOAK_OPERATIONS ?? 30_000);
const MINUTES = Number(process.env.FLOATIP_SOAK_MINUTES ?? 90);
const cluster = churnCluster(ns);

scenario(
  `SOAK churn: ${OPERATIONS} operations or ${MINUTES} minutes under every fault kind, cycled`,
  async () => {
    const replicas = await cluster.startReplicas('30s');
    const started = new Date();
    const figures = await runChurn(
      {
        namespace: ns,
        operations: OPERATIONS,
        maxDurationMs: MINUTES * 60_000,
        opsPerSecond: Number(process.env.FLOATIP_SOAK_RATE ?? 12),
        concurrency: 6,
        faults: FAULT_KINDS,
        faultGapMs: 15_000,
        resyncSeconds: 30,
        seed: Number(process.env.FLOATIP_SOAK_SEED ?? 1),
        operator: { gapMs: 1000 },
      },
      replicas,
    );
    const text = describeFigures(figures);
    note(`SOAK from ${started.toISOString()} to ${new Date().toISOString()}:\n${text}`);
    writeFileSync(join(runDir(), 'soak-figures.json'), JSON.stringify({ started, figures }, null, 2));
    expect(figures.problems).toEqual([]);
    expect(Object.values(figures.invariants)).toEqual([...INVARIANTS, 'stuck'].map(() => 0));
    // kube-scheduler v1.37.2's own exits (kubernetes PR 141255) are counted; any other is not allowed
    expect(figures.schedulerExits.total - figures.schedulerExits.onRelist).toBe(0);
  },
);
