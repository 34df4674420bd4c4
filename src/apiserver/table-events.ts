// Events with kube-apiserver's columns (its printer of core/v1 Events), so that `kubectl get events`
// against the embedded server reads as against a cluster: LAST SEEN, TYPE, REASON, OBJECT, MESSAGE,
// and with `-o wide` the rest. As kube-apiserver does, the server sends every column and kubectl
// hides those of priority 1; Name is one of them, so no Name column comes first.
import { type Cell, col, type Column, NAME, num, type Obj, obj, since, str } from './table-cells.js';

const firstNonEmpty = (...values: string[]): string => values.find((v) => v !== '') ?? '';

/** The event's source as kubectl prints it: `component`, or `component, host`. */
function source(event: Obj): string {
  const s = obj(event.source);
  const component = firstNonEmpty(str(s.component), str(event.reportingComponent));
  const instance = firstNonEmpty(str(s.host), str(event.reportingInstance));
  return instance ? `${component}, ${instance}` : component;
}

export const EVENTS: { columns: Column[]; cells(o: Obj, now: number): Cell[] } = {
  columns: [
    col('Last Seen', 'string', 'The time at which the most recent occurrence of this event was recorded.'),
    col('Type', 'string', 'Type of this event (Normal, Warning), new types could be added in the future.'),
    col('Reason', 'string', "A short, machine understandable reason for the object's current status."),
    col('Object', 'string', 'The object that this event is about.'),
    col('Subobject', 'string', 'The part of the object the event is about (a field path), if any.', 1),
    col('Source', 'string', 'The component reporting this event.', 1),
    col('Message', 'string', 'A human-readable description of the status of this operation.'),
    col('First Seen', 'string', 'The time at which the event was first recorded.', 1),
    col('Count', 'string', 'The number of times this event has occurred.', 1),
    { ...NAME, priority: 1 },
  ],
  cells(event, now) {
    const involved = obj(event.involvedObject);
    const first = since(event.firstTimestamp ?? event.eventTime, now);
    const series = event.series === undefined ? undefined : obj(event.series);
    const last = series
      ? since(series.lastObservedTime, now)
      : event.lastTimestamp
        ? since(event.lastTimestamp, now)
        : first;
    // singleton events of the events.k8s.io API carry no count
    const count = series ? num(series.count) : num(event.count) || 1;
    const kind = str(involved.kind).toLowerCase();
    return [
      last,
      str(event.type),
      str(event.reason),
      str(involved.name) ? `${kind}/${str(involved.name)}` : kind,
      str(involved.fieldPath),
      source(event),
      str(event.message).trim(),
      first,
      count,
      str(obj(event.metadata).name),
    ];
  },
};
