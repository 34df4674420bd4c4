// Which room of src/ may import which: the README's layout table ("may import"), enforced by
// `npm run lint` (eslint.config.js turns each row into a no-restricted-imports rule) and kept equal
// to the README by test/lint/doors.test.ts. A room is a folder of src/ or a module at its top
// (log, paths, http, clip). The composition root (src/server.ts, src/main.ts, src/cli/) may import every room.
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
  clip: [],
};

/** The rooms that are one module at the top of src/, not a folder. */
export const MODULES = ['log', 'paths', 'http', 'clip'];

/**
 * Rooms every room may import besides its row: a leaf that imports nothing, which the pure core
 * (importing no room) and floatip-cni (which must not load pino) need as much as the rest, so that
 * a caller's text is clipped one way everywhere.
 */
export const EVERY_ROOM = ['clip'];

/** The packages the pure core may use (no I/O, no Kubernetes types). */
export const CORE_PACKAGES = ['ip-num', 'sorted-btree'];

const alternatives = (names) => names.map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|');

/** The ESLint config objects that enforce the table. */
export function doorRules() {
  return Object.entries(DOORS).map(([room, allowed]) => {
    const folder = !MODULES.includes(room);
    const open = [...allowed, ...EVERY_ROOM.filter((r) => r !== room)];
    // from a room's folder, `../x/...` or `../x.js` names room x; a top-level module has none above
    // it, and names a module beside it `./x.js`
    const leave = folder
      ? open.length > 0
        ? `^\\.\\./(?!(${alternatives(open)})(/|\\.js$))`
        : '^\\.\\./'
      : open.length > 0
        ? `^(\\.\\./|\\./(?!(${alternatives(open)})\\.js$))`
        : '^\\.\\.?/';
    const patterns = [
      {
        regex: leave,
        message: `src/${room}${folder ? '/' : '.ts'} may import ${open.length ? open.join(', ') : 'no other room'} (the README's layout table; eslint.doors.js)`,
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
