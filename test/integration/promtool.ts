// Debian's promtool (package `prometheus`) for the alert rule tests: used where it is, else
// installed with apt-get when this process may (root), once per machine under a file lock so that
// parallel runs wait for one install. .ci/run installs it beforehand too.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const PROMTOOL = '/usr/bin/promtool';

export function ensurePromtool(): string {
  if (existsSync(PROMTOOL)) return PROMTOOL;
  if (process.getuid?.() !== 0) {
    throw new Error(`no ${PROMTOOL}, and only root can install it: run \`apt-get install -y prometheus\``);
  }
  const script = `test -x ${PROMTOOL} || { apt-get update -qq && apt-get install -y -qq -o DPkg::Lock::Timeout=600 prometheus; }`;
  const install = spawnSync('flock', ['/tmp/floatip-promtool-install.lock', 'sh', '-c', script], {
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    encoding: 'utf8',
  });
  if (install.status !== 0 || !existsSync(PROMTOOL)) {
    throw new Error(
      `installing Debian's prometheus (for promtool) failed: ${install.stderr || install.error?.message}`,
    );
  }
  return PROMTOOL;
}

/** Runs promtool; its exit code and everything it printed. */
export function promtool(args: readonly string[], cwd: string): { code: number | null; output: string } {
  const result = spawnSync(ensurePromtool(), args, { cwd, encoding: 'utf8' });
  return { code: result.status, output: `${result.stdout}${result.stderr}` };
}
