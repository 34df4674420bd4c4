// Where the package's own files (crds/, openapi/) are, from src/ under ts-jest and from dist/src/
// when built alike: the nearest folder up from this module that holds floatip's package.json.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

function findPackageRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = path.join(dir, 'package.json');
    if (
      existsSync(manifest) &&
      (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'floatip'
    ) {
      return dir;
    }
    const parent = path.dirname(dir);
    if (parent === dir)
      throw new Error('floatip: cannot find the package root (package.json) above ' + import.meta.url);
    dir = parent;
  }
}

export const PACKAGE_ROOT = findPackageRoot();

export const packagePath = (...parts: string[]): string => path.join(PACKAGE_ROOT, ...parts);
