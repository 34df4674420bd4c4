// The optional state file: the whole store as one JSON document, written atomically (temp file, fsync,
// rename) a little after each burst of changes and once more on close, so a standalone install keeps its
// allocations across restarts.
import { mkdir, open, readFile, rename, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { isPlainObject, type KubeObject } from './types.js';

export const STATE_FORMAT = 'floatip-dev-apiserver/v1';

export interface SavedState {
  revision: number;
  objects: KubeObject[];
}

/** Reads a state file; undefined if there is none yet. A file that is there but unreadable is an error. */
export async function loadState(path: string): Promise<SavedState | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new Error(`cannot read state file ${path}: ${(err as Error).message}`);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new Error(
      `state file ${path} is not valid JSON (${(err as Error).message}); move it away to start afresh`,
    );
  }
  if (
    !isPlainObject(doc) ||
    doc.format !== STATE_FORMAT ||
    !Number.isInteger(doc.revision) ||
    !Array.isArray(doc.objects)
  ) {
    throw new Error(`state file ${path} is not a ${STATE_FORMAT} document; move it away to start afresh`);
  }
  const objects = doc.objects.filter(isPlainObject) as KubeObject[];
  return { revision: doc.revision as number, objects };
}

async function writeAtomically(path: string, content: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  const file = await open(tmp, 'w');
  try {
    await file.writeFile(content, 'utf8');
    await file.sync();
  } catch (err) {
    await file.close();
    await unlink(tmp).catch(() => undefined);
    throw err;
  }
  await file.close();
  await rename(tmp, path);
}

/** Writes snapshots of the store to `path`, at most one write in flight, coalescing changes for `debounceMs`. */
export class StateWriter {
  private timer: NodeJS.Timeout | undefined;
  private dirty = false;
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly path: string,
    private readonly snapshot: () => string,
    private readonly debounceMs: number,
    private readonly log: (message: string) => void,
  ) {}

  /** Something changed: write soon. */
  changed(): void {
    this.dirty = true;
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.enqueueWrite();
    }, this.debounceMs);
  }

  /** Writes now if anything changed, and waits for every write to finish. */
  async flush(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    await this.enqueueWrite();
  }

  private enqueueWrite(): Promise<void> {
    this.chain = this.chain.then(async () => {
      if (!this.dirty) return;
      this.dirty = false;
      try {
        await writeAtomically(this.path, this.snapshot());
      } catch (err) {
        this.dirty = true;
        this.log(`floatip dev-apiserver: could not write state file ${this.path}: ${(err as Error).message}`);
      }
    });
    return this.chain;
  }
}

/** The state document, assembled from already-serialised objects. */
export function stateJson(revision: number, objectJsons: Iterable<string>): string {
  const items: string[] = [];
  for (const json of objectJsons) items.push(json);
  return `{"format":${JSON.stringify(STATE_FORMAT)},"revision":${revision},"objects":[\n${items.join(',\n')}\n]}\n`;
}
