// The latest Events floatip wrote, for the dashboard: every Event passes through to the recorder
// that writes it, and the newest few are kept here. This replica's own since it started; the API
// server keeps them all (`kubectl get events --field-selector source=floatip`).
import { type EventRecorder, type EventType, type InvolvedObject, eventMessage } from '../kube/events.js';
import type { EventJson } from './dashboard-wire.js';

export const RECENT_EVENTS = 50;

export class RecentEvents implements EventRecorder {
  private readonly kept: EventJson[] = [];

  constructor(
    private readonly inner: EventRecorder,
    private readonly clock: () => number = Date.now,
  ) {}

  record(object: InvolvedObject, type: EventType, reason: string, message: string): void {
    this.inner.record(object, type, reason, message);
    const where = object.namespace ? `${object.namespace}/${object.name}` : object.name;
    this.kept.push({
      time: this.clock(),
      type,
      reason,
      object: `${object.kind} ${where}`,
      message: eventMessage(message),
    });
    if (this.kept.length > RECENT_EVENTS) this.kept.shift();
  }

  /** Newest first. */
  latest(): EventJson[] {
    return [...this.kept].reverse();
  }
}
