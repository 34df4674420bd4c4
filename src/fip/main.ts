#!/usr/bin/env node
// `kubectl fip` (the package's `kubectl-fip` executable; kubectl runs any kubectl-<name> on PATH).
import { runFip } from './program.js';

const code = await runFip(process.argv.slice(2), {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
});
process.exitCode = code;
