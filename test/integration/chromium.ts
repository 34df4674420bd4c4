// Debian's chromium for the browser tests (this machine cannot download a browser of playwright's
// own). Found where Debian puts it, or installed with apt-get when this process may (root, apt-get
// present): once per machine, under a file lock so that parallel jest workers and runs wait for the
// one install rather than race apt. Anything else is one line saying what to do.
import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';

const DEBIAN_CHROMIUM = '/usr/bin/chromium';
const LOCK = '/tmp/floatip-chromium-install.lock';

/**
 * Flags for chromium as root on a machine with no network beyond loopback: without the background
 * networking ones it keeps trying Google's hosts.
 */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

const executable = (path: string) => {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

const onPath = (command: string) =>
  (process.env.PATH ?? '').split(':').some((dir) => dir && executable(`${dir}/${command}`));

function run(command: string, args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

/** The path of a chromium to drive: FLOATIP_CHROMIUM, Debian's, or Debian's just installed. */
export async function ensureChromium(): Promise<string> {
  const chosen = process.env.FLOATIP_CHROMIUM;
  if (chosen) {
    if (executable(chosen)) return chosen;
    throw new Error(`FLOATIP_CHROMIUM=${chosen} is not an executable file`);
  }
  if (executable(DEBIAN_CHROMIUM)) return DEBIAN_CHROMIUM;
  if (process.getuid?.() !== 0 || !onPath('apt-get') || !onPath('flock')) {
    throw new Error(
      `no browser at ${DEBIAN_CHROMIUM}, and this process cannot install one (it needs root, apt-get and flock): run \`apt-get update && apt-get install -y chromium\`, or set FLOATIP_CHROMIUM`,
    );
  }
  // the check is repeated under the lock: whoever waited finds it installed
  const script = `test -x ${DEBIAN_CHROMIUM} || { apt-get update -qq && apt-get install -y -qq -o DPkg::Lock::Timeout=600 chromium; }`;
  const { code, output } = await run('flock', [LOCK, 'sh', '-c', script]);
  if (code !== 0) {
    const last = output.trim().split('\n').pop() ?? '';
    throw new Error(`installing Debian's chromium failed (exit ${code}): ${last}`);
  }
  if (!executable(DEBIAN_CHROMIUM))
    throw new Error(`apt-get installed chromium, but there is no ${DEBIAN_CHROMIUM}`);
  return DEBIAN_CHROMIUM;
}
