// Which room of src/ may import which: the README's layout table ("may import"), enforced by
// `npm run lint` (eslint.config.js turns each row into a no-restricted-imports rule) and kept equal
// to the README by test/lint/doors.test.ts. A room is a folder of src/ or a module at its top
// (log, paths, http). The composition root (src/server.ts, src/main.ts, src/cli/) may import every room.
export const DOORS = {
  ipam: [],
  cni: ['ipam'],
  'cni-plugin': ['cni', 'ipam', 'store'],
  pods: ['ipam', 'cni'],
  kube: ['log', 'paths'],
  store: ['ipam', 'kube', 'log'],
  metrics: ['ipam'],
  config: ['ipam'],
  extender: ['ipam', 'cni', 'pods', 'kube', 'store', 'metrics', 'log', 'http'],
  controller: ['ipam', 'cni', 'pods', 'kube', 'store', 'config', 'log'],
  api: ['ipam', 'pods', 'kube', 'store', 'log', 'paths', 'http'],
  apiserver: ['kube'],
  webhook: ['ipam', 'cni', 'config', 'controller', 'store', 'log', 'http'],
  fip: ['ipam', 'cni', 'pods', 'kube', 'store', 'controller', 'api'],
  log: [],
  paths: [],
  http: [],
};

/** The packages the pure core may use (no I/O, no Kubernetes types). */
export const CORE_PACKAGES = ['ip-num', 'sorted-btree'];

const alternatives = (names) => names.map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|');

/** The ESLint config objects that enforce the table. */
export function doorRules() {
  return Object.entries(DOORS).map(([room, allowed]) => {
    const folder = !['log', 'paths', 'http'].includes(room);
    // from a room's folder, `../x/...` or `../x.js` names room x; a top-level module has none above it
    const leave = folder
      ? allowed.length > 0
        ? `^\\.\\./(?!(${alternatives(allowed)})(/|\\.js$))`
        : '^\\.\\./'
      : '^\\.\\.?/';
    const patterns = [
      {
        regex: leave,
        message: `src/${room}${folder ? '/' : '.ts'} may import ${allowed.length ? allowed.join(', ') : 'no other room'} (the README's layout table; eslint.doors.js)`,
      },
    ];
    if (room === 'ipam') {
      patterns.push({
        regex: `^(?!\\.{1,2}/|(${alternatives(CORE_PACKAGES)})$)`,
        message: `src/ipam/ is pure: no I/O, no Kubernetes types; it may use ${CORE_PACKAGES.join(', ')} only`,
      });
    }
    return {
      files: [folder ? `src/${room}/**/*.ts` : `src/${room}.ts`],
      rules: { '@typescript-eslint/no-restricted-imports': ['error', { patterns }] },
    };
  });
}
