// Server-side Table output (meta.k8s.io/v1 Table), which `kubectl get` asks for: custom resources with
// their CRD's additionalPrinterColumns, evaluated as apiextensions-apiserver does; pods, nodes,
// configmaps, deployments, events and namespaces with kube-apiserver's columns; other kinds NAME and AGE.
import { firstResult } from './jsonpath.js';
import type { PrinterColumn, ResourceType } from './registry.js';
import {
  AGE,
  type Cell,
  col,
  type Column,
  list,
  NAME,
  num,
  type Obj,
  obj,
  orNone,
  since,
  str,
} from './table-cells.js';
import { EVENTS } from './table-events.js';
import type { KubeObject } from './types.js';

export { humanDuration } from './table-cells.js';

// ---- custom resources

/** apiextensions' cellForJSONValue, and the string columns' printing of any value. */
function crdCell(column: PrinterColumn, value: unknown, now: number): Cell {
  if (value === undefined || value === null) return null;
  switch (column.type) {
    case 'string':
      return typeof value === 'object' ? JSON.stringify(value) : String(value);
    case 'integer':
      return typeof value === 'number' ? Math.trunc(value) : null;
    case 'number':
      return typeof value === 'number' ? value : null;
    case 'boolean':
      return typeof value === 'boolean' ? value : null;
    case 'date':
      return typeof value === 'string' ? since(value, now).replace('<unknown>', '<invalid>') : null;
  }
  return null;
}

function crdTable(rt: ResourceType): { columns: Column[]; cells(o: KubeObject, now: number): Cell[] } {
  const printer = rt.printerColumns?.length
    ? rt.printerColumns
    : [
        {
          name: 'Age',
          type: 'date',
          format: '',
          description: '',
          priority: 0,
          jsonPath: '.metadata.creationTimestamp',
        },
      ];
  return {
    columns: [
      NAME,
      ...printer.map((c) => ({
        name: c.name,
        type: c.type,
        format: c.format,
        description: c.description || `Custom resource definition column (in JSONPath format): ${c.jsonPath}`,
        priority: c.priority,
      })),
    ],
    cells: (o, now) => [
      o.metadata?.name ?? '',
      ...printer.map((c) => crdCell(c, firstResult(o, c.jsonPath), now)),
    ],
  };
}

// ---- built-in kinds (kube-apiserver's printers)

function podStatus(pod: Obj): { reason: string; ready: number; total: number; restarts: string } {
  const spec = obj(pod.spec);
  const status = obj(pod.status);
  let reason = str(status.reason) || str(status.phase);
  let restarts = 0;
  const initStatuses = list(status.initContainerStatuses);
  const initCount = list(spec.initContainers).length;
  let initializing = false;
  initStatuses.forEach((c, i) => {
    if (initializing) return;
    restarts += num(c.restartCount);
    const state = obj(c.state);
    const terminated = obj(state.terminated);
    const waiting = obj(state.waiting);
    if (state.terminated && num(terminated.exitCode) === 0) return;
    if (state.terminated) {
      reason = `Init:${str(terminated.reason) || (num(terminated.signal) ? `Signal:${num(terminated.signal)}` : `ExitCode:${num(terminated.exitCode)}`)}`;
    } else if (str(waiting.reason) && str(waiting.reason) !== 'PodInitializing') {
      reason = `Init:${str(waiting.reason)}`;
    } else {
      reason = `Init:${i}/${initCount}`;
    }
    initializing = true;
  });
  let ready = 0;
  if (!initializing) {
    restarts = 0;
    let running = false;
    for (const c of [...list(status.containerStatuses)].reverse()) {
      restarts += num(c.restartCount);
      const state = obj(c.state);
      const terminated = obj(state.terminated);
      if (str(obj(state.waiting).reason)) reason = str(obj(state.waiting).reason);
      else if (str(terminated.reason)) reason = str(terminated.reason);
      else if (state.terminated)
        reason = num(terminated.signal)
          ? `Signal:${num(terminated.signal)}`
          : `ExitCode:${num(terminated.exitCode)}`;
      else if (c.ready === true && state.running) {
        running = true;
        ready++;
      }
    }
    const podReady = list(status.conditions).some((c) => c.type === 'Ready' && c.status === 'True');
    if (reason === 'Completed' && running) reason = podReady ? 'Running' : 'NotReady';
  }
  const meta = obj(pod.metadata);
  if (meta.deletionTimestamp && status.reason === 'NodeLost') reason = 'Unknown';
  else if (meta.deletionTimestamp) reason = 'Terminating';
  return { reason, ready, total: list(spec.containers).length, restarts: String(restarts) };
}

function selectorText(selector: unknown): string {
  const s = obj(selector);
  const parts = Object.entries(obj(s.matchLabels)).map(([k, v]) => `${k}=${String(v)}`);
  for (const e of list(s.matchExpressions)) {
    const values = Array.isArray(e.values) ? e.values.map(String).join(',') : '';
    const op = str(e.operator);
    if (op === 'In' || op === 'NotIn') parts.push(`${str(e.key)} ${op.toLowerCase()} (${values})`);
    else if (op === 'Exists') parts.push(str(e.key));
    else if (op === 'DoesNotExist') parts.push(`!${str(e.key)}`);
  }
  return parts.join(',') || '<none>';
}

const BUILTIN: Record<string, { columns: Column[]; cells(o: Obj, now: number): Cell[] }> = {
  pods: {
    columns: [
      NAME,
      col('Ready', 'string', 'The aggregate readiness state of this pod for accepting traffic.'),
      col('Status', 'string', 'The aggregate status of the containers in this pod.'),
      col('Restarts', 'string', 'The number of times the containers in this pod have been restarted.'),
      AGE,
      col('IP', 'string', 'IP address allocated to the pod.', 1),
      col('Node', 'string', 'The node the pod is bound to (spec.nodeName).', 1),
      col('Nominated Node', 'string', 'The node the pod preempts for (status.nominatedNodeName).', 1),
      col('Readiness Gates', 'string', 'The pod readiness gates that are true, of all.', 1),
    ],
    cells(pod, now) {
      const s = podStatus(pod);
      const spec = obj(pod.spec);
      const status = obj(pod.status);
      const gates = list(spec.readinessGates);
      const trueConditions = new Set(
        list(status.conditions)
          .filter((c) => c.status === 'True')
          .map((c) => str(c.type)),
      );
      const gatesText = gates.length
        ? `${gates.filter((g) => trueConditions.has(str(g.conditionType))).length}/${gates.length}`
        : '<none>';
      return [
        str(obj(pod.metadata).name),
        `${s.ready}/${s.total}`,
        s.reason,
        s.restarts,
        since(obj(pod.metadata).creationTimestamp, now),
        orNone(str(status.podIP)),
        orNone(str(spec.nodeName)),
        orNone(str(status.nominatedNodeName)),
        gatesText,
      ];
    },
  },
  nodes: {
    columns: [
      NAME,
      col('Status', 'string', 'The status of the node (its Ready condition).'),
      col('Roles', 'string', 'The roles of the node (node-role.kubernetes.io/<role> labels).'),
      AGE,
      col('Version', 'string', 'Kubelet version reported by the node.'),
      col('Internal-IP', 'string', "The node's first InternalIP address.", 1),
      col('External-IP', 'string', "The node's first ExternalIP address.", 1),
      col('OS-Image', 'string', 'OS image reported by the node.', 1),
      col('Kernel-Version', 'string', 'Kernel version reported by the node.', 1),
      col('Container-Runtime', 'string', 'Container runtime version reported by the node.', 1),
    ],
    cells(node, now) {
      const meta = obj(node.metadata);
      const status = obj(node.status);
      const readyCondition = list(status.conditions).find((c) => c.type === 'Ready');
      const states = readyCondition ? [readyCondition.status === 'True' ? 'Ready' : 'NotReady'] : ['Unknown'];
      if (obj(node.spec).unschedulable === true) states.push('SchedulingDisabled');
      const roles = new Set<string>();
      for (const [k, v] of Object.entries(obj(meta.labels))) {
        if (k.startsWith('node-role.kubernetes.io/') && k.length > 'node-role.kubernetes.io/'.length)
          roles.add(k.slice('node-role.kubernetes.io/'.length));
        else if (k === 'kubernetes.io/role' && v) roles.add(String(v));
      }
      const address = (type: string): string =>
        orNone(str(list(status.addresses).find((a) => a.type === type)?.address));
      const info = obj(status.nodeInfo);
      const unknown = (s: string): string => s || '<unknown>';
      return [
        str(meta.name),
        states.join(','),
        [...roles].sort().join(',') || '<none>',
        since(meta.creationTimestamp, now),
        str(info.kubeletVersion),
        address('InternalIP'),
        address('ExternalIP'),
        unknown(str(info.osImage)),
        unknown(str(info.kernelVersion)),
        unknown(str(info.containerRuntimeVersion)),
      ];
    },
  },
  configmaps: {
    columns: [NAME, col('Data', 'string', 'The number of data and binaryData entries.'), AGE],
    cells: (cm, now) => [
      str(obj(cm.metadata).name),
      Object.keys(obj(cm.data)).length + Object.keys(obj(cm.binaryData)).length,
      since(obj(cm.metadata).creationTimestamp, now),
    ],
  },
  'apps/deployments': {
    columns: [
      NAME,
      col('Ready', 'string', 'Number of the pod with ready state.'),
      col('Up-to-date', 'string', 'Total number of non-terminated pods with the desired template spec.'),
      col('Available', 'string', 'Total number of available pods (ready for at least minReadySeconds).'),
      AGE,
      col('Containers', 'string', 'Names of each container in the template.', 1),
      col('Images', 'string', 'Images referenced by each container in the template.', 1),
      col('Selector', 'string', 'Label selector for pods.', 1),
    ],
    cells(d, now) {
      const spec = obj(d.spec);
      const status = obj(d.status);
      const containers = list(obj(obj(spec.template).spec).containers);
      return [
        str(obj(d.metadata).name),
        `${num(status.readyReplicas)}/${typeof spec.replicas === 'number' ? spec.replicas : 1}`,
        num(status.updatedReplicas),
        num(status.availableReplicas),
        since(obj(d.metadata).creationTimestamp, now),
        containers.map((c) => str(c.name)).join(','),
        containers.map((c) => str(c.image)).join(','),
        selectorText(spec.selector),
      ];
    },
  },
  // the default table convertor, which CRDs get
  'apiextensions.k8s.io/customresourcedefinitions': {
    columns: [NAME, { ...col('Created At', 'date', 'When the object was created.') }],
    cells: (crd) => [str(obj(crd.metadata).name), str(obj(crd.metadata).creationTimestamp)],
  },
  events: EVENTS,
  namespaces: {
    columns: [NAME, col('Status', 'string', 'The phase of the namespace.'), AGE],
    cells: (ns, now) => [
      str(obj(ns.metadata).name),
      str(obj(ns.status).phase),
      since(obj(ns.metadata).creationTimestamp, now),
    ],
  },
};

const DEFAULT = {
  columns: [NAME, AGE],
  cells: (o: Obj, now: number): Cell[] => [
    str(obj(o.metadata).name),
    since(obj(o.metadata).creationTimestamp, now),
  ],
};

export type IncludeObject = 'None' | 'Metadata' | 'Object';

/** `includeObject`, as kube-apiserver reads it (default Metadata); 400 for anything else. */
export function includeObjectOf(value: string | null): IncludeObject | undefined {
  if (value === null || value === '') return 'Metadata';
  return value === 'None' || value === 'Metadata' || value === 'Object' ? value : undefined;
}

/** A Table of `objects`, served at `rt`'s version. */
export function toTable(
  rt: ResourceType,
  objects: readonly KubeObject[],
  meta: { resourceVersion: string; continue?: string },
  include: IncludeObject,
  now = Date.now(),
): object {
  const printer =
    rt.crdName !== undefined
      ? crdTable(rt)
      : (BUILTIN[rt.group ? `${rt.group}/${rt.plural}` : rt.plural] ?? DEFAULT);
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: meta,
    columnDefinitions: printer.columns,
    rows: objects.map((o) => ({
      cells: printer.cells(o as Obj, now),
      ...(include === 'None'
        ? {}
        : {
            object:
              include === 'Object'
                ? o
                : { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: o.metadata ?? {} },
          }),
    })),
  };
}
