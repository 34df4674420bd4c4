// kube-scheduler's log as the churn reads it: its exits for a corrupted cache, and which of them came
// as its pod informer's relist was applied. v1.37.2 exits when a relist delivers a pod deleted and
// re-created under the same name on another node as one update (kubernetes/kubernetes PR 141255;
// E2E-H8 reproduces it without floatip); an exit on any other path would be a binding that landed on
// a node the scheduler no longer assumed, which floatip's bind budget is there to prevent.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runDir } from './cluster.js';

export interface SchedulerExits {
  readonly total: number;
  /** Exits within RELIST_WINDOW_MS after the pod informer's "Caches populated" (a relist applied). */
  readonly onRelist: number;
  /** The pod the last exit named ("namespace/name"), if any. */
  readonly lastPod?: string;
}

/** A relist's handlers run right after the reflector stores the list: milliseconds in the runs seen. */
const RELIST_WINDOW_MS = 1000;

/** v1.20: "Schedulercache is corrupted"; v1.37: "Scheduler cache is corrupted". */
const EXIT = /Scheduler ?cache is corrupted/;
const POD_RELIST = /"Caches populated" type="\*v1\.Pod"/;
/** klog's header: severity, MMDD, hh:mm:ss.micro. */
const KLOG_TIME = /^[IWEF](\d\d)(\d\d) (\d\d):(\d\d):(\d\d)\.(\d{6})/;
/** component.sh writes this line when it starts a component again: a new process, a new cache. */
const RESTARTED = /^=== kube-scheduler started/;

function klogMs(line: string): number | undefined {
  const m = KLOG_TIME.exec(line);
  if (!m) return undefined;
  const [month, day, h, min, s, micro] = m.slice(1).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  return Date.UTC(2000, month - 1, day, h, min, s) + Math.floor(micro / 1000);
}

/** The exits in a kube-scheduler log's text. */
export function schedulerExitsIn(text: string): SchedulerExits {
  let total = 0;
  let onRelist = 0;
  let lastPod: string | undefined;
  let relistAt: number | undefined;
  for (const line of text.split('\n')) {
    if (RESTARTED.test(line)) {
      relistAt = undefined;
    } else if (POD_RELIST.test(line)) {
      relistAt = klogMs(line);
    } else if (EXIT.test(line)) {
      total++;
      const at = klogMs(line);
      if (at !== undefined && relistAt !== undefined && at >= relistAt && at - relistAt <= RELIST_WINDOW_MS) {
        onRelist++;
      }
      lastPod = / pod="([^"]+)"/.exec(line)?.[1] ?? lastPod;
    }
  }
  return { total, onRelist, ...(lastPod ? { lastPod } : {}) };
}

/** The exits in the e2e cluster's kube-scheduler log so far (none if there is no log yet). */
export function schedulerExits(): SchedulerExits {
  try {
    return schedulerExitsIn(readFileSync(join(runDir(), 'kube-scheduler.log'), 'utf8'));
  } catch {
    return { total: 0, onRelist: 0 };
  }
}
