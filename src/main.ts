#!/usr/bin/env node
// floatip's command line. Each subcommand lives in its own module; this file only dispatches.
import { Command, CommanderError } from 'commander';
import { serve } from './cli/serve.js';
import { serveCommand } from './cli/serve-flags.js';

async function main(argv: string[]): Promise<number> {
  const program = new Command('floatip')
    .description('floating-IP IPAM for Kubernetes: a kube-scheduler extender, drop-in for galaxy-ipam')
    .exitOverride()
    .configureOutput({ outputError: (text, write) => write(text.split('\n')[0] + '\n') });
  program.addCommand(serveCommand(serve).exitOverride());
  program
    .command('dev-apiserver')
    .description('run the embedded Kubernetes API server alone (development aid, not a production store)')
    .helpOption(false)
    .allowUnknownOption()
    .argument('[args...]')
    .action(async (args: string[]) => {
      const { runDevApiServer } = await import('./apiserver/cli.js');
      process.exitCode = await runDevApiServer(args);
    });
  try {
    await program.parseAsync(argv, { from: 'user' });
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : 2;
    process.stderr.write(`floatip: ${(err as Error).message}\n`);
    return 1;
  }
}

process.exitCode = await main(process.argv.slice(2));
