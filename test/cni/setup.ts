// What the floatip-cni tests need on the machine: Debian's containernetworking-plugins (the
// delegates, /usr/lib/cni) and ping, found or installed with apt-get when this process may (root),
// once per machine under a file lock so that parallel jest workers wait for one install; and the
// plugin built (dist/src/cni-plugin/main.js), as the runtime would exec it.
import { execFile, spawn } from 'node:child_process';
import { accessSync, chmodSync, constants, rmSync } from 'node:fs';
import { promisify } from 'node:util';

export const CNI_BIN = '/usr/lib/cni';
const ROOT = new URL('../../', import.meta.url).pathname;
/** The plugin the tests run: the package's build (as the e2e suite's globalSetup makes it), or buildPlugin()'s. */
export let PLUGIN = `${ROOT}dist/src/cni-plugin/main.js`;
const LOCK = '/tmp/floatip-cni-plugins-install.lock';
const NEEDED: Record<string, string> = {
  [`${CNI_BIN}/macvlan`]: 'containernetworking-plugins',
  '/usr/bin/ping': 'iputils-ping',
};

const executable = (path: string) => {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

/** Installs what is missing of NEEDED, or says in one line what to do. */
export async function ensureDebianPackages(): Promise<void> {
  const missing = Object.entries(NEEDED).filter(([file]) => !executable(file));
  if (missing.length === 0) return;
  const packages = [...new Set(missing.map(([, pkg]) => pkg))].join(' ');
  if (process.getuid?.() !== 0) {
    throw new Error(
      `missing ${missing.map(([f]) => f).join(', ')}: run \`apt-get update && apt-get install -y ${packages}\` (as root)`,
    );
  }
  const tests = missing.map(([file]) => `test -x ${file}`).join(' && ');
  const script = `${tests} || { apt-get update -qq && apt-get install -y -qq -o DPkg::Lock::Timeout=600 ${packages}; }`;
  const code = await new Promise<number | null>((resolve, reject) => {
    const child = spawn('flock', [LOCK, 'sh', '-c', script], {
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
      stdio: 'ignore',
    });
    child.on('error', reject);
    child.on('close', resolve);
  });
  if (code !== 0) throw new Error(`installing ${packages} with apt-get failed (exit ${code})`);
}

/**
 * Builds the plugin and what it imports, alone, into a directory of this process (so that test
 * files building at once do not rewrite each other's or dist/'s files while they run), and makes it
 * executable, as an install does. Returns the directory, for `rmSync` after the tests.
 */
export async function buildPlugin(): Promise<string> {
  const out = `${ROOT}node_modules/.cache/floatip-cni-test/${process.pid}`;
  rmSync(out, { recursive: true, force: true });
  await promisify(execFile)('npx', ['tsc', '-p', 'test/cni/tsconfig.plugin.json', '--outDir', out], {
    cwd: ROOT,
  });
  PLUGIN = `${out}/src/cni-plugin/main.js`;
  chmodSync(PLUGIN, 0o755);
  return out;
}
