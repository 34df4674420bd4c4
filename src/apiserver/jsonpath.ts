// The JSONPath of CRD printer columns, evaluated as kube-apiserver does for a column: the first result,
// or none. Covers what columns use: `.a.b`, `\.` inside a name (`.metadata.labels.floatip\.io/node`),
// `['a.b']`, `[0]`, `[-1]` and `[*]`.

type Step = { field: string } | { index: number } | { all: true };

function parse(path: string): Step[] {
  const steps: Step[] = [];
  let i = path.startsWith('{') && path.endsWith('}') ? 1 : 0;
  const end = i === 1 ? path.length - 1 : path.length;
  while (i < end) {
    const c = path[i];
    if (c === '.') {
      let field = '';
      i++;
      while (i < end && path[i] !== '.' && path[i] !== '[') {
        if (path[i] === '\\' && i + 1 < end) i++;
        field += path[i];
        i++;
      }
      if (field !== '') steps.push({ field });
    } else if (c === '[') {
      const close = path.indexOf(']', i);
      if (close < 0) throw new Error(`unclosed [ in ${path}`);
      const inner = path.slice(i + 1, close).trim();
      const quoted = /^'(.*)'$|^"(.*)"$/.exec(inner);
      if (quoted) steps.push({ field: quoted[1] ?? quoted[2] ?? '' });
      else if (inner === '*') steps.push({ all: true });
      else if (/^-?\d+$/.test(inner)) steps.push({ index: Number(inner) });
      else throw new Error(`unsupported [${inner}] in ${path}`);
      i = close + 1;
    } else {
      throw new Error(`unexpected ${JSON.stringify(c)} in ${path}`);
    }
  }
  return steps;
}

function walk(values: unknown[], step: Step): unknown[] {
  const out: unknown[] = [];
  for (const v of values) {
    if ('field' in step) {
      if (typeof v === 'object' && v !== null && !Array.isArray(v) && step.field in v)
        out.push((v as Record<string, unknown>)[step.field]);
    } else if (Array.isArray(v)) {
      if ('all' in step) out.push(...v);
      else {
        const at = step.index < 0 ? v.length + step.index : step.index;
        if (at >= 0 && at < v.length) out.push(v[at]);
      }
    }
  }
  return out;
}

/** The first value `path` finds in `obj`, or undefined (also for a path it cannot read). */
export function firstResult(obj: unknown, path: string): unknown {
  let steps: Step[];
  try {
    steps = parse(path);
  } catch {
    return undefined;
  }
  return steps.reduce<unknown[]>((values, step) => walk(values, step), [obj])[0];
}
