// The doors between rooms are enforced, and say what the README says: an import a room may not make
// fails `npm run lint`, one it may make passes, and the README's layout table lists exactly the rules.
import { readFileSync } from 'node:fs';
import { ESLint } from 'eslint';
import { DOORS, EVERY_ROOM, MODULES } from '../../eslint.doors.js';

const ROOT = new URL('../../', import.meta.url);
const eslint = new ESLint({ cwd: ROOT.pathname });

/** The "may import" column of the README's layout table, by room. */
function readmeDoors(): Record<string, string[]> {
  const readme = readFileSync(new URL('README.md', ROOT), 'utf8');
  const layout = readme.slice(readme.indexOf('## Layout'), readme.indexOf('One owner per fact'));
  const doors: Record<string, string[]> = {};
  for (const line of layout.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    if (cells.length < 5 || !cells[1]!.startsWith('`src/')) continue;
    const targets = cells[3] === 'nothing' ? [] : [...cells[3]!.matchAll(/`([a-z]+)`/g)].map((m) => m[1]!);
    if (cells[3] === 'everything') continue;
    for (const path of cells[1]!.matchAll(/`src\/([a-z-]+)(\/|\.ts)`/g)) doors[path[1]!] = targets;
  }
  return doors;
}

test('the README’s layout table and the lint rules say the same', () => {
  expect(readmeDoors()).toEqual(DOORS);
});

/** The lint messages for a file in `room` that imports `target`. */
async function importing(room: string, target: string): Promise<string[]> {
  const folder = !MODULES.includes(room);
  const file = folder ? `src/${room}/door-check.ts` : `src/${room}.ts`;
  const name = `${target}${MODULES.includes(target) ? '.js' : '/x.js'}`;
  const path = `${folder ? '../' : './'}${name}`;
  const [result] = await eslint.lintText(`import type { X } from '${path}';\nexport type Y = X;\n`, {
    filePath: new URL(file, ROOT).pathname,
  });
  return result!.messages
    .filter((m) => m.ruleId === '@typescript-eslint/no-restricted-imports')
    .map((m) => m.message);
}

const rooms = Object.keys(DOORS);
test.each(rooms)('src/%s may import exactly the rooms the table names', async (room) => {
  for (const target of rooms.filter((t) => t !== room)) {
    const refused = (await importing(room, target)).length > 0;
    expect({ room, target, refused }).toEqual({
      room,
      target,
      refused: !DOORS[room]!.includes(target) && !EVERY_ROOM.includes(target),
    });
  }
});

test('every room may import the leaves every room shares, and they import no room', () => {
  for (const leaf of EVERY_ROOM) expect({ leaf, imports: DOORS[leaf] }).toEqual({ leaf, imports: [] });
});

test('the core may use no package but its own two', async () => {
  const [result] = await eslint.lintText(
    "import { KubeConfig } from '@kubernetes/client-node';\nexport const k = KubeConfig;\n",
    {
      filePath: new URL('src/ipam/door-check.ts', ROOT).pathname,
    },
  );
  expect(result!.messages.map((m) => m.message)).toEqual([
    expect.stringContaining('src/ipam/ is pure: no I/O, no Kubernetes types'),
  ]);
});
