// `npm run soak`: the churn of E2E-R1 at length: FLOATIP_SOAK_OPERATIONS operations (30,000) or
// FLOATIP_SOAK_MINUTES (90), whichever comes first, every fault kind cycled, then the same
// invariants; the figures are printed at the end (and written to <run dir>/soak-figures.json).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FAULT_KINDS, Replicas } from './churn-faults.js';
import { cleanUpChurn, describeFigures, prepareChurn, runChurn } from './churn.js';
import { runDir } from './cluster.js';
import type { FakeKubelet } from './fake-kubelet.js';
import { scenario, stopAllFloatips } from './floatip.js';
import { INVARIANTS } from './ipam-state.js';
import { note, startFloatip } from './suite.js';

const ns = 'e2e-soak';
const OPERATIONS = Number(process.env.FLOATIP_SOAK_OPERATIONS ?? 30_000);
const MINUTES = Number(process.env.FLOATIP_SOAK_MINUTES ?? 90);
let kubelet: FakeKubelet | undefined;
let replicas: Replicas | undefined;

beforeAll(async () => {
  kubelet = await prepareChurn(ns);
});

afterAll(async () => {
  await replicas?.close();
  await stopAllFloatips();
  await startFloatip({ name: 'soak-cleanup' });
  await cleanUpChurn(ns, kubelet);
  await stopAllFloatips();
});

scenario(
  `SOAK churn: ${OPERATIONS} operations or ${MINUTES} minutes under every fault kind, cycled`,
  async () => {
    replicas = await Replicas.start('30s');
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
      },
      replicas,
    );
    const text = describeFigures(figures);
    note(`SOAK from ${started.toISOString()} to ${new Date().toISOString()}:\n${text}`);
    writeFileSync(join(runDir(), 'soak-figures.json'), JSON.stringify({ started, figures }, null, 2));
    expect(figures.problems).toEqual([]);
    expect(Object.values(figures.invariants)).toEqual([...INVARIANTS, 'stuck'].map(() => 0));
  },
);
