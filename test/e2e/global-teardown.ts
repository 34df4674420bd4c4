// jest globalTeardown for the e2e suite. FLOATIP_E2E_KEEP=1 leaves the cluster up to look at after a
// failure: `test/e2e/kube/e2e.sh env` prints its kubeconfig and kubectl, `e2e.sh down` stops it.
// Self-contained for the same reason as global-setup.ts.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const E2E_SH = fileURLToPath(new URL('./kube/e2e.sh', import.meta.url));

export default async function globalTeardown(): Promise<void> {
  if (process.env.FLOATIP_E2E_KEEP === '1') {
    process.stderr.write(`\ne2e: FLOATIP_E2E_KEEP=1, cluster left running (${E2E_SH} down stops it)\n`);
    return;
  }
  await new Promise<void>((resolve, reject) => {
    const child = spawn(E2E_SH, ['down'], { stdio: ['ignore', 'ignore', 'inherit'] });
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`${E2E_SH} down: exit code ${code}`)),
    );
  });
}
