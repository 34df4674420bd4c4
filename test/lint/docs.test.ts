// The project's docs stand alone: every citation of docs/galaxy.md in the code and the README names
// a heading that exists there, and nothing cites a document the repository does not have.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(new URL('../../', import.meta.url).pathname);

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? files(full) : [full];
  });
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to '-'. */
const anchorOf = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');

const galaxy = readFileSync(path.join(ROOT, 'docs/galaxy.md'), 'utf8');
const anchors = new Set([...galaxy.matchAll(/^#{1,6} (.+)$/gm)].map((m) => anchorOf(m[1]!)));
const sources = [
  ...files(path.join(ROOT, 'src')),
  ...files(path.join(ROOT, 'test')).filter((f) => f.endsWith('.ts')),
  path.join(ROOT, 'README.md'),
  path.join(ROOT, 'docs/galaxy.md'),
];

test('every citation of docs/galaxy.md names one of its headings', () => {
  const broken: string[] = [];
  for (const file of sources) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/(?:docs\/galaxy\.md)?#([a-z0-9-]+)/g)) {
      const inGalaxy =
        m[0].startsWith('docs/galaxy.md') || (file.endsWith('galaxy.md') && m[0].startsWith('#'));
      if (inGalaxy && !anchors.has(m[1]!)) broken.push(`${path.relative(ROOT, file)}: ${m[0]}`);
    }
  }
  expect(broken).toEqual([]);
  expect(anchors.size).toBeGreaterThan(50);
});

test('nothing cites the old, unshipped spec by section number', () => {
  const cited = sources
    .filter((f) => !f.endsWith('docs.test.ts'))
    .flatMap((file) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .map((line, i) => ({ file: path.relative(ROOT, file), line: i + 1, text: line }))
        .filter(({ text }) => /§\s*\d/.test(text)),
    );
  expect(cited).toEqual([]);
});
