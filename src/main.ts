#!/usr/bin/env node
// floatip's command line. Each subcommand lives in its own module; this file only dispatches.
const commands: Record<string, string> = {
  serve: 'run the scheduler extender and REST API',
  'dev-apiserver': 'run the embedded Kubernetes API server alone (development aid, not a production store)',
};

function usage(): string {
  const lines = Object.entries(commands).map(([name, help]) => `  ${name.padEnd(16)} ${help}`);
  return `usage: floatip <command> [flags]\n\ncommands:\n${lines.join('\n')}\n`;
}

async function main(argv: string[]): Promise<number> {
  const [command] = argv;
  if (!command || command === '--help' || command === '-h') {
    process.stdout.write(usage());
    return 0;
  }
  if (command === 'serve') {
    process.stdout.write(
      'floatip: the IPAM core is built; the extender and REST API are not yet. Nothing to serve.\n',
    );
    return 0;
  }
  if (command === 'dev-apiserver') {
    const { runDevApiServer } = await import('./apiserver/cli.js');
    return runDevApiServer(argv.slice(1));
  }
  process.stderr.write(`floatip: unknown command "${command}"\n${usage()}`);
  return 2;
}

process.exitCode = await main(process.argv.slice(2));
