#!/usr/bin/env node
// floatip-cni: the node side. The runtime execs it with CNI_* variables and the network
// configuration on stdin; it answers on stdout, a result or a CNI error object (exit 1), and
// never a stack trace. Its imports are kept to what each command needs (the start is on the pod
// start path: README, "The node side: floatip-cni").
import { add, check, del, gc, status, version } from './commands.js';
import {
  CniError,
  Code,
  type Command,
  errorObject,
  parseNetworkConfig,
  readCommand,
  readEnvironment,
  SUPPORTED_VERSIONS,
} from './protocol.js';

/**
 * More than any network configuration is, a GC's list of every attachment on the node included
 * (about 100 bytes each). Without a bound, a runaway writer held the plugin at 1.2 GB for 600 MB of
 * stdin and then failed it with V8's string limit as code 100.
 */
const STDIN_LIMIT = 16 * 2 ** 20;

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin) {
    size += (chunk as Buffer).length;
    if (size > STDIN_LIMIT) {
      // stop reading: the writer gets EPIPE, not an answer it would wait for
      process.stdin.destroy();
      throw new CniError(
        Code.decodeFailure,
        `network configuration on stdin is over ${STDIN_LIMIT} bytes: no configuration is that large`,
      );
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The cniVersion stdin asks for, if it is JSON naming one. */
function askedVersion(stdin: string): string | undefined {
  try {
    const asked = (JSON.parse(stdin) as { cniVersion?: unknown } | null)?.cniVersion;
    return typeof asked === 'string' && asked !== '' ? asked : undefined;
  } catch {
    return undefined;
  }
}

async function run(command: Command, stdin: string): Promise<unknown> {
  // a runtime asks with its own version, perhaps newer than any here, or with nothing, to learn
  // which this plugin speaks: VERSION always answers that (as the reference plugins do)
  if (command === 'VERSION') {
    const asked = askedVersion(stdin);
    const known = SUPPORTED_VERSIONS as readonly string[];
    return version(asked !== undefined && known.includes(asked) ? asked : known[known.length - 1]!);
  }
  const network = parseNetworkConfig(stdin, command);
  const env = readEnvironment(process.env);
  switch (command) {
    case 'ADD':
      return add(network, env);
    case 'DEL':
      return del(network, env);
    case 'CHECK':
      return check(network, env);
    case 'GC':
      return gc(network, env);
    case 'STATUS':
      return status(network, env);
  }
}

async function main(): Promise<number> {
  // run by hand, from a terminal: say what this is, as the reference plugins do, instead of waiting
  // for a stdin no one will close
  if (!process.env.CNI_COMMAND) {
    process.stderr.write(
      'CNI floatip-cni plugin: puts the floating IPs floatip gave a pod on its interfaces; a container runtime runs it with CNI_COMMAND (ADD, DEL, CHECK, VERSION, STATUS, GC) and the network configuration on stdin\n' +
        `CNI protocol versions supported: ${SUPPORTED_VERSIONS.join(', ')}\n`,
    );
    return 0;
  }
  let cniVersion = '1.1.0';
  try {
    const stdin = await readStdin();
    // parseNetworkConfig says what is wrong with stdin; the error answers in the version asked
    cniVersion = askedVersion(stdin) ?? cniVersion;
    const answer = await run(readCommand(process.env), stdin);
    if (answer !== undefined) process.stdout.write(`${JSON.stringify(answer)}\n`);
    return 0;
  } catch (err) {
    const failure =
      err instanceof CniError
        ? err
        : new CniError(100, `floatip-cni failed: ${err instanceof Error ? err.message : String(err)}`);
    process.stdout.write(`${JSON.stringify(errorObject(failure, cniVersion))}\n`);
    return 1;
  }
}

process.exitCode = await main();
