#!/usr/bin/env node
// `kubectl fip` (the package's `kubectl-fip` executable; kubectl runs any kubectl-<name> on PATH).
import { runFip } from './program.js';

// a reader that stops early (`kubectl fip ls | head`) closes the pipe: that ends the output, not
// with a stack trace
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code !== 'EPIPE') throw err;
  process.exit(process.exitCode ?? 0);
});

const code = await runFip(process.argv.slice(2), {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
});
process.exitCode = code;
