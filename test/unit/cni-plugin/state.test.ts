// Where floatip-cni keeps what ADD configured, as the README's configuration table says: an operator
// who sets `stateDir` looks for the files there (and cleans them up by hand after a node's disk moves).
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_STATE_DIR } from '../../../src/cni-plugin/protocol.js';
import { writeState } from '../../../src/cni-plugin/state.js';

const README = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');

test('ADD’s state is <stateDir>/<network>/<container>:<ifname>.json, and the README’s stateDir row says so', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'floatip-cni-state-'));
  try {
    await writeState(dir, 'underlay', {
      containerId: 'c1',
      ifname: 'eth0',
      netns: '/var/run/netns/p',
      interfaces: [],
    });
    expect(existsSync(join(dir, 'underlay', 'c1:eth0.json'))).toBe(true);
  } finally {
    rmSync(dir, { recursive: true });
  }
  const row = README.split('\n').find((line) => line.startsWith('| `stateDir` |'));
  expect(row).toContain('`<stateDir>/<network>/<container>:<ifname>.json`');
  expect(row).toContain(`(default \`${DEFAULT_STATE_DIR}\`)`);
});
