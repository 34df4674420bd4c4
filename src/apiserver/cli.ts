// `floatip dev-apiserver`: runs the embedded API server on its own, for trying floatip (or kubectl) against a
// cluster that is not there.
import { startApiServer, type ApiServerOptions } from './server.js';

export const DEV_APISERVER_HELP = `usage: floatip dev-apiserver [--port N] [--host H] [--state-file F] [--seed demo|none]

Runs floatip's embedded, in-memory Kubernetes-API-compatible server: discovery, namespaces, nodes, pods
(+ binding), configmaps, events, deployments, replicasets, statefulsets, leases, CRDs and the custom
resources they define, with watches, selectors, paging and patches.

It is a development aid and test backend, NEVER a production store: there is no authentication, no
admission and no durability beyond an optional JSON state file. Custom resources are checked against
their CRD's schema, as kube-apiserver checks them (422 Invalid), but not pruned.

flags:
  --port N          port to listen on (default 6080; 0 picks a free one)
  --host H          address to listen on (default 127.0.0.1)
  --state-file F    keep the objects in JSON file F across restarts (loaded at start when it exists;
                    the seed is then ignored)
  --seed demo|none  what a server without a state file starts with (default demo: namespaces default and
                    kube-system, floatip's CRDs, 4 nodes, the floatingip-config ConfigMap, a demo Pool)
  -h, --help        show this help

Stop it with Ctrl-C (SIGINT) or SIGTERM; the state file is written before it exits.
`;

export const DEFAULT_DEV_PORT = 6080;

export interface DevApiServerFlags {
  port: number;
  host: string;
  stateFile?: string;
  seed: 'demo' | 'none';
}

/** Thrown for a command line that cannot be run; the message is one line for the user. */
export class UsageError extends Error {}

/** Strict flag parsing: `--flag value` or `--flag=value`; anything unknown or malformed is a UsageError. */
export function parseDevApiServerFlags(argv: string[]): DevApiServerFlags | 'help' {
  const flags: DevApiServerFlags = { port: DEFAULT_DEV_PORT, host: '127.0.0.1', seed: 'demo' };
  const seen = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (arg === '-h' || arg === '--help') return 'help';
    const m = /^(--[a-z-]+)(?:=(.*))?$/s.exec(arg);
    if (!m) throw new UsageError(`unexpected argument "${arg}"`);
    const flag = m[1] ?? '';
    if (!['--port', '--host', '--state-file', '--seed'].includes(flag))
      throw new UsageError(`unknown flag ${flag}`);
    if (seen.has(flag)) throw new UsageError(`${flag} given more than once`);
    seen.add(flag);
    let value = m[2];
    if (value === undefined) {
      value = argv[i + 1];
      if (value === undefined || value.startsWith('--')) throw new UsageError(`${flag} needs a value`);
      i++;
    }
    switch (flag) {
      case '--port':
        if (!/^\d+$/.test(value) || Number(value) > 65535) {
          throw new UsageError(`--port must be an integer from 0 to 65535, got "${value}"`);
        }
        flags.port = Number(value);
        break;
      case '--host':
        if (value.trim() === '') throw new UsageError('--host must not be empty');
        flags.host = value;
        break;
      case '--state-file':
        if (value.trim() === '') throw new UsageError('--state-file must not be empty');
        flags.stateFile = value;
        break;
      case '--seed':
        if (value !== 'demo' && value !== 'none')
          throw new UsageError(`--seed must be "demo" or "none", got "${value}"`);
        flags.seed = value;
        break;
    }
  }
  return flags;
}

export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** Stops the server when aborted; by default SIGINT and SIGTERM do. */
  signal?: AbortSignal;
  /** Called once the server listens (tests use it to find the URL). */
  onListening?: (url: string) => void;
}

const processIo: CliIo = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
};

/** Runs until SIGINT/SIGTERM (or `io.signal`); resolves to the process exit code. */
export async function runDevApiServer(argv: string[], io: CliIo = processIo): Promise<number> {
  let flags: DevApiServerFlags | 'help';
  try {
    flags = parseDevApiServerFlags(argv);
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr(`floatip dev-apiserver: ${err.message} (see floatip dev-apiserver --help)\n`);
      return 2;
    }
    throw err;
  }
  if (flags === 'help') {
    io.stdout(DEV_APISERVER_HELP);
    return 0;
  }
  const options: ApiServerOptions = {
    port: flags.port,
    host: flags.host,
    seed: flags.seed,
    log: (message) => io.stderr(`${message}\n`),
  };
  if (flags.stateFile) options.stateFile = flags.stateFile;
  let server;
  try {
    server = await startApiServer(options);
  } catch (err) {
    io.stderr(`floatip dev-apiserver: cannot start: ${(err as Error).message}\n`);
    return 1;
  }
  const url = server.url;
  io.stdout(
    `floatip dev-apiserver listening on ${url}\n` +
      `  (a development aid and test backend, never a production store)\n` +
      (flags.stateFile ? `  state file: ${flags.stateFile}\n` : '  state: in memory only\n') +
      `  kubectl:  kubectl --server ${url} get nodes\n` +
      `  curl:     curl ${url}/api/v1/nodes\n` +
      `  stop:     Ctrl-C\n`,
  );
  io.onListening?.(url);

  await new Promise<void>((resolve) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      io.signal?.removeEventListener('abort', stop);
      resolve();
    };
    if (io.signal) {
      if (io.signal.aborted) return stop();
      io.signal.addEventListener('abort', stop);
    }
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  io.stdout('floatip dev-apiserver: stopping\n');
  await server.close();
  return 0;
}
