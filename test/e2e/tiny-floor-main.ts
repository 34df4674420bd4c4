// The tiny extender as a process of its own (test/e2e/tiny-floor.ts bundles and starts it), so that
// bench:e2e reads the floor's CPU from its process accounting as it reads floatip's. Its options
// come as JSON in argv[2]; it prints one line when it listens, and on SIGTERM closes and prints what
// it saw (calls, filter forms, bind errors) as one JSON line before it exits.
import { startTinyExtender } from './tiny-extender.js';

const options = JSON.parse(process.argv[2] ?? '{}') as {
  recordObjects?: boolean;
  watch?: boolean;
  port?: number;
};
const tiny = await startTinyExtender(options);
process.stdout.write('listening\n');
process.once('SIGTERM', () => {
  void tiny.close().finally(() => {
    const seen = { calls: tiny.calls, filterForms: [...tiny.filterForms], bindErrors: tiny.bindErrors };
    process.stdout.write(`${JSON.stringify(seen)}\n`, () => process.exit(0));
  });
});
