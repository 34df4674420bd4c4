#!/usr/bin/env node
// floatip-cni: the node side. The runtime execs it with CNI_* variables and the network
// configuration on stdin; it answers on stdout, a result or a CNI error object (exit 1), and
// never a stack trace. Its imports are kept to what each command needs (the start is on the pod
// start path: README, "The node side: floatip-cni").
import { add, check, del, gc, status, version } from './commands.js';
import {
  CniError,
  type Command,
  errorObject,
  parseNetworkConfig,
  readCommand,
  readEnvironment,
} from './protocol.js';

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

async function run(command: Command, stdin: string): Promise<unknown> {
  const network = parseNetworkConfig(stdin, command);
  const env = readEnvironment(process.env);
  switch (command) {
    case 'VERSION':
      return version(network.cniVersion);
    case 'ADD':
      return add(network, env);
    case 'DEL':
      return del(network, env);
    case 'CHECK':
      return check(network, env);
    case 'GC':
      return gc(network, env);
    case 'STATUS':
      return status(network);
  }
}

async function main(): Promise<number> {
  let cniVersion = '1.1.0';
  try {
    const stdin = await readStdin();
    try {
      const asked = (JSON.parse(stdin) as { cniVersion?: unknown }).cniVersion;
      if (typeof asked === 'string' && asked !== '') cniVersion = asked;
    } catch {
      // parseNetworkConfig says what is wrong with it
    }
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
