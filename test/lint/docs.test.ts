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

test('every relative link in the Markdown docs names a file the repository has, and a heading there', () => {
  const docs = [
    'README.md',
    ...readdirSync(path.join(ROOT, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`),
    'src/apiserver/README.md',
    'test/e2e/README.md',
  ];
  const headings = (file: string) =>
    new Set(
      [...readFileSync(path.join(ROOT, file), 'utf8').matchAll(/^#{1,6} (.+)$/gm)].map((m) =>
        anchorOf(m[1]!),
      ),
    );
  const broken: string[] = [];
  let links = 0;
  for (const doc of docs) {
    const text = readFileSync(path.join(ROOT, doc), 'utf8').replace(/```[\s\S]*?```/g, '');
    for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = m[1]!;
      if (/^[a-z]+:/.test(target)) continue; // https:, mailto:
      links++;
      const [file, anchor] = target.split('#') as [string, string | undefined];
      const resolved = file ? path.normalize(path.join(path.dirname(doc), file)) : doc;
      let exists = false;
      try {
        exists = statSync(path.join(ROOT, resolved)) !== undefined;
      } catch {
        exists = false;
      }
      if (!exists) broken.push(`${doc}: ${target} (no ${resolved})`);
      else if (anchor && resolved.endsWith('.md') && !headings(resolved).has(anchor))
        broken.push(`${doc}: ${target} (no heading #${anchor} in ${resolved})`);
    }
  }
  expect(broken).toEqual([]);
  expect(links).toBeGreaterThan(30);
});
