// What ADD configured, one small JSON file per attachment (network, container, interface), so that
// DEL, CHECK and GC do not depend on the pod, its annotation or the API server still being there.
// The file is written before the first delegate runs: a crash mid-ADD still leaves DEL a list.
import { link, mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { PlannedInterface } from './delegate.js';
import { CniError, Code, type Result } from './protocol.js';

export interface AttachmentState {
  readonly containerId: string;
  /** The runtime's CNI_IFNAME: the attachment's name; the pod's interfaces may be more. */
  readonly ifname: string;
  readonly netns: string;
  readonly pod?: string;
  readonly interfaces: readonly (PlannedInterface & { result?: Result })[];
  /** While ADD runs: its process, which GC leaves alone until it has ended (see stillAdding). */
  readonly adder?: Adder;
}

/** A process as the kernel names it: its PID and its start time (so that a reused PID is not it). */
export interface Adder {
  readonly pid: number;
  readonly start: string;
}

/** A process's start time (clock ticks since boot, /proc/<pid>/stat's 22nd field), undefined once it is gone. */
async function startOf(pid: number | 'self'): Promise<string | undefined> {
  let text: string;
  try {
    text = await readFile(`/proc/${pid}/stat`, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  // the command's name, in parentheses, may hold spaces and parentheses: the fields after it
  // start at the last ')' with the 3rd (state), so the 22nd is the 20th of them
  return text.slice(text.lastIndexOf(')') + 2).split(' ')[19];
}

/** This process, for ADD's state; undefined where there is no /proc to name it by. */
export async function thisAdder(): Promise<Adder | undefined> {
  const start = await startOf('self').catch(() => undefined);
  return start === undefined ? undefined : { pid: process.pid, start };
}

/**
 * Whether the ADD that wrote a state may still be running: its process is there with the start
 * time it recorded. GC must not take an attachment from under an ADD the runtime has not yet
 * listed (it would delete the interface ADD then reports as added). Where the kernel will not say,
 * the answer is yes: a later GC removes what this one leaves, and nothing is taken from a pod.
 */
export async function stillAdding(adder: Adder | undefined): Promise<boolean> {
  if (adder === undefined) return false;
  try {
    return (await startOf(adder.pid)) === adder.start;
  } catch {
    return true;
  }
}

const fileOf = (dir: string, network: string, containerId: string, ifname: string) =>
  join(dir, network, `${containerId}:${ifname}.json`);

const ioError = (what: string, err: unknown) =>
  new CniError(Code.ioFailure, `${what}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);

/**
 * mkdir -p, one level at a time: node's recursive mkdir takes every ENOENT for a missing parent and
 * retries for ever where the kernel answers ENOENT for the directory itself (under /proc), so a
 * stateDir there would hang ADD instead of failing it.
 */
async function makeDirectory(path: string): Promise<void> {
  try {
    await mkdir(path, { mode: 0o700 });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return;
    if (code !== 'ENOENT' || dirname(path) === path) throw err;
    await makeDirectory(dirname(path));
    await mkdir(path, { mode: 0o700 }).catch((again: NodeJS.ErrnoException) => {
      if (again.code !== 'EEXIST') throw again;
    });
  }
}

// each process its own temporary file: two writers of one attachment sharing `.tmp` made one's
// rename fail with ENOENT. Named by the process alone (one ADD writes one attachment), not after
// the attachment: `<file>.<pid>.tmp` passed 255 bytes where the file itself did not (a container
// ID of 221-234 characters with a 15-byte CNI_IFNAME failed ADD, ENAMETOOLONG). Not `.json`, so
// listStates passes over one a crash left.
const tmpOf = (file: string) => join(dirname(file), `.${process.pid}.tmp`);

export async function writeState(dir: string, network: string, state: AttachmentState): Promise<void> {
  const file = fileOf(dir, network, state.containerId, state.ifname);
  try {
    await makeDirectory(join(dir, network));
    await writeFile(tmpOf(file), JSON.stringify(state), { mode: 0o600 });
    await rename(tmpOf(file), file);
  } catch (err) {
    throw ioError(`writing state ${file}`, err);
  }
}

/**
 * ADD's first write: the attachment's file made whole only where there is none (a hard link fails
 * with EEXIST atomically). Of two ADDs of one attachment at once exactly one gets it; the other,
 * told false, refuses without running a delegate, so its cleanup cannot remove the winner's state
 * (with a check then a write, both went on, and the loser's undo left the winner's interface with no
 * state for DEL, CHECK or GC).
 */
export async function claimState(dir: string, network: string, state: AttachmentState): Promise<boolean> {
  const file = fileOf(dir, network, state.containerId, state.ifname);
  try {
    await makeDirectory(join(dir, network));
    await writeFile(tmpOf(file), JSON.stringify(state), { mode: 0o600 });
    try {
      await link(tmpOf(file), file);
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw err;
    } finally {
      await rm(tmpOf(file), { force: true });
    }
  } catch (err) {
    throw ioError(`writing state ${file}`, err);
  }
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A state file's text as a state, or why it is none. The one decoder of what DEL, CHECK and GC
 * read: a file of another shape (an entry without its delegate, `"interfaces":"x"`) failed them
 * as a TypeError (code 100), DEL for ever. A torn file from a crash is unreadable too.
 */
export function decodeState(text: string): AttachmentState | string {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return 'not JSON';
  }
  if (!isObject(raw)) return 'not a JSON object';
  for (const field of ['containerId', 'ifname', 'netns'] as const)
    if (typeof raw[field] !== 'string') return `its ${field} is not a string`;
  if (raw.pod !== undefined && typeof raw.pod !== 'string') return 'its pod is not a string';
  const interfaces = raw.interfaces;
  if (!Array.isArray(interfaces)) return 'its interfaces are not a list';
  for (const [i, one] of interfaces.entries()) {
    if (!isObject(one) || typeof one.ifname !== 'string' || one.ifname === '')
      return `its interface ${i} has no ifname`;
    if (!isObject(one.delegate) || typeof one.delegate.type !== 'string')
      return `its interface ${i} has no delegate with a type`;
    if (one.result !== undefined && !isObject(one.result))
      return `its interface ${i}'s result is not an object`;
  }
  const adder = raw.adder;
  if (
    adder !== undefined &&
    !(isObject(adder) && typeof adder.pid === 'number' && typeof adder.start === 'string')
  )
    return 'its adder is not {pid, start}';
  return raw as unknown as AttachmentState;
}

/**
 * The attachment's state, or undefined where it has none, or none that can be read: then
 * `unreadable` is told why, for the caller to say what it skipped.
 */
export async function readState(
  dir: string,
  network: string,
  containerId: string,
  ifname: string,
  unreadable?: (why: string) => void,
): Promise<AttachmentState | undefined> {
  const file = fileOf(dir, network, containerId, ifname);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw ioError(`reading state ${file}`, err);
  }
  const state = decodeState(text);
  if (typeof state !== 'string') return state;
  unreadable?.(`state ${file} is unreadable (${state})`);
  return undefined;
}

export async function removeState(
  dir: string,
  network: string,
  containerId: string,
  ifname: string,
): Promise<void> {
  const file = fileOf(dir, network, containerId, ifname);
  try {
    await rm(file, { force: true });
  } catch (err) {
    throw ioError(`removing state ${file}`, err);
  }
}

/**
 * Every attachment of the network that has state; one whose file cannot be read (told to
 * `unreadable`) as an attachment with no interfaces.
 */
export async function listStates(
  dir: string,
  network: string,
  unreadable?: (why: string) => void,
): Promise<AttachmentState[]> {
  let names: string[];
  try {
    names = await readdir(join(dir, network));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw ioError(`listing state ${join(dir, network)}`, err);
  }
  const states: AttachmentState[] = [];
  for (const name of names.filter((n) => n.endsWith('.json'))) {
    // a container ID has no ':' (CNI_CONTAINERID is checked), so the first one separates
    const key = name.slice(0, -'.json'.length);
    const [containerId, ifname] = [key.slice(0, key.indexOf(':')), key.slice(key.indexOf(':') + 1)];
    states.push(
      (await readState(dir, network, containerId, ifname, unreadable)) ?? {
        containerId,
        ifname,
        netns: '',
        interfaces: [],
      },
    );
  }
  return states;
}
