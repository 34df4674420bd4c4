// The CNI operations. ADD undoes what it did when any part fails; DEL succeeds when the pod, its
// annotation, its state or its interfaces are already gone; CHECK finds what ADD added in the
// runtime's prevResult and asks each delegate to verify its interface (addresses and routes); GC
// forgets attachments the runtime no longer lists (not one whose ADD is still running); STATUS looks
// for the delegate and its master, then asks the API server for a pod and a FloatingIP, which needs
// exactly the RBAC ADD needs.
import { readFile, stat } from 'node:fs/promises';
import { get, loadKubeconfig, statusMessage } from './kube.js';
import {
  findPlugin,
  linksIn,
  mergeResults,
  netDevNames,
  planInterfaces,
  type PlannedInterface,
  runDelegate,
} from './delegate.js';
import { groupIPInfos } from './ipinfo-checks.js';
import { podAddresses } from './ipinfos.js';
import { missingFromPrevResult } from './prev-result.js';
import {
  CniError,
  Code,
  type Environment,
  type NetworkConfig,
  type Result,
  SUPPORTED_VERSIONS,
  resultIn,
} from './protocol.js';
import {
  type AttachmentState,
  claimState,
  listStates,
  readState,
  removeState,
  stillAdding,
  thisAdder,
  writeState,
} from './state.js';

export async function add(network: NetworkConfig, env: Environment): Promise<Result> {
  // the runtime DELs before it ADDs the same attachment again; a second ADD must not touch the first
  const alreadyAdded = () =>
    new CniError(
      Code.invalidEnvironment,
      `container ${env.containerId} interface ${env.ifname} is already added on network ${network.name}; DEL it first`,
    );
  if (await readState(network.stateDir, network.name, env.containerId, env.ifname)) throw alreadyAdded();
  const { args, pod, holder } = await podAddresses(network, env);
  const planned = planInterfaces(network, env.ifname, groupIPInfos(args.ipinfos, args.groups.length > 0));
  if (holder) {
    const { checkHeld } = await import('./holders.js');
    const { target, pod: who, source, given } = holder;
    await checkHeld(target, who, args.ipinfos, network.requestTimeoutMs, source, given);
  }
  const state: AttachmentState = {
    containerId: env.containerId,
    ifname: env.ifname,
    netns: env.netns,
    pod,
    interfaces: planned,
  };
  const adder = await thisAdder();
  // an ADD of the same attachment may have started since the check above: one of the two goes on
  if (!(await claimState(network.stateDir, network.name, { ...state, adder }))) throw alreadyAdded();
  const results: Result[] = [];
  let before: Set<string> | undefined;
  // from the claim on, any failure (this code's own too) undoes: a state left behind refused every
  // later ADD of the attachment (code 4)
  try {
    // what the pod's namespace had before any delegate ran: the undo must not delete an interface
    // of a planned name that was there first (the delegate refuses to make one of that name)
    before = await linksIn(env.netns, network.delegateTimeoutMs);
    for (const one of planned) results.push((await runDelegate('ADD', one, env, network.delegateTimeoutMs))!);
    const interfaces = planned.map((one, i) => ({ ...one, result: results[i] }));
    await writeState(network.stateDir, network.name, { ...state, interfaces });
    // a plugin before this one in a chain: its result is passed on, ours after it (the spec's MUST)
    const chained = network.prevResult ? [network.prevResult, ...results] : results;
    return resultIn(network.cniVersion, mergeResults(chained));
  } catch (err) {
    // what this ADD brought up, and the interface of the delegate that failed: Debian's macvlan
    // 1.1.1 makes its interface, then fails on the route and leaves it (DEL of what is not there
    // succeeds). Where the namespace could not be listed, the failed one is left as before.
    const failed = planned[results.length];
    const added = planned.slice(0, results.length);
    if (failed !== undefined && before !== undefined && !before.has(failed.ifname)) added.push(failed);
    await undo(network, env, added);
    // the delegate's own words for a missing master ("Link not found") name no link
    if (err instanceof CniError && err.code === Code.delegateFailed && failed) {
      const missing = await missingMaster(network, failed.delegate);
      if (missing !== undefined) throw new CniError(err.code, `${err.message} (${missing})`, err.details);
    }
    throw err;
  }
}

/** A failed ADD's cleanup: the interfaces it added deleted, newest first, and its state gone. */
async function undo(
  network: NetworkConfig,
  env: Environment,
  planned: readonly PlannedInterface[],
): Promise<void> {
  for (const one of [...planned].reverse()) {
    try {
      await runDelegate('DEL', one, env, network.delegateTimeoutMs);
    } catch {
      // the ADD's own error is the one to report; DEL of what never came up may fail
    }
  }
  await removeState(network.stateDir, network.name, env.containerId, env.ifname);
}

/** What to delete: the state's interfaces, else prevResult's pod interfaces, else CNI_IFNAME alone. */
function interfacesToDelete(
  network: NetworkConfig,
  env: Environment,
  state?: AttachmentState,
): PlannedInterface[] {
  if (state && state.interfaces.length > 0) return [...state.interfaces];
  const fromPrev = (network.prevResult?.interfaces ?? []).filter((i) => i.sandbox).map((i) => i.name);
  const names = fromPrev.length > 0 ? fromPrev : [env.ifname];
  // DEL needs no addresses: the static IPAM holds nothing
  return names.map((ifname) => ({
    ifname,
    delegate: { ...network.delegate, cniVersion: '1.0.0', name: network.name, ipam: { type: 'static' } },
  }));
}

/**
 * Whether `a` and `b` name one network namespace: the same path, or two paths of one namespace
 * (`/var/run/netns/x` and `/run/netns/x`). An empty path names none.
 */
async function sameSandbox(a: string, b: string): Promise<boolean> {
  if (a === '' || b === '') return false;
  if (a === b) return true;
  try {
    const [x, y] = await Promise.all([stat(a), stat(b)]);
    return x.dev === y.dev && x.ino === y.ino;
  } catch {
    return false;
  }
}

/**
 * The attachment other than this one whose state claims interface `ifname` in one of `sandboxes`,
 * or undefined. The spec names an attachment by container and interface: a DEL of one must not
 * delete another's eth0 because the runtime named that one's namespace (a DEL without state, the
 * runtime's cleanup of an ADD refused because eth0 was there, took the first pod's eth0).
 */
async function claimant(
  others: readonly AttachmentState[],
  sandboxes: readonly string[],
  ifname: string,
): Promise<AttachmentState | undefined> {
  for (const other of others) {
    if (!other.interfaces.some((one) => one.ifname === ifname)) continue;
    for (const sandbox of sandboxes) if (await sameSandbox(other.netns, sandbox)) return other;
  }
  return undefined;
}

export async function del(network: NetworkConfig, env: Environment): Promise<void> {
  const skipped: string[] = [];
  const state = await readState(network.stateDir, network.name, env.containerId, env.ifname, (why) =>
    skipped.push(`${why}: DEL falls back to prevResult or CNI_IFNAME`),
  );
  // where ADD configured it: a DEL naming another sandbox (a runtime's mix-up) must not act there
  const netns = state?.netns || env.netns;
  const others = (await listStates(network.stateDir, network.name)).filter(
    (other) => other.containerId !== env.containerId || other.ifname !== env.ifname,
  );
  const sandboxOf = new Map(
    (network.prevResult?.interfaces ?? []).map((i) => [i.name, i.sandbox ?? ''] as const),
  );
  for (const one of interfacesToDelete(network, env, state).reverse()) {
    const sandboxes = state ? [netns] : [netns, sandboxOf.get(one.ifname) ?? ''];
    const owner = await claimant(others, sandboxes, one.ifname);
    if (owner !== undefined) {
      skipped.push(
        `interface ${one.ifname} in ${netns} left: it is container ${owner.containerId} interface ${owner.ifname}'s`,
      );
      continue;
    }
    await runDelegate('DEL', one, { ...env, netns }, network.delegateTimeoutMs);
  }
  await removeState(network.stateDir, network.name, env.containerId, env.ifname);
  // DEL answers nothing on success; the runtime logs what a plugin writes to stderr
  for (const note of skipped)
    process.stderr.write(`floatip-cni DEL ${env.containerId}/${env.ifname}: ${note}\n`);
}

export async function check(network: NetworkConfig, env: Environment): Promise<void> {
  if (network.prevResult === undefined) {
    throw new CniError(Code.invalidConfig, 'CHECK needs the prevResult of the ADD');
  }
  const state = await readState(network.stateDir, network.name, env.containerId, env.ifname);
  if (state === undefined) {
    throw new CniError(
      Code.unknownContainer,
      `container ${env.containerId} interface ${env.ifname} was not added by floatip-cni on network ${network.name}`,
    );
  }
  const results: Result[] = [];
  for (const one of state.interfaces) {
    if (one.result === undefined) {
      throw new CniError(
        Code.unknownContainer,
        `interface ${one.ifname} of container ${env.containerId}: its ADD did not finish`,
      );
    }
    results.push(one.result);
  }
  const missing = missingFromPrevResult(results, network.prevResult);
  if (missing.length > 0) {
    throw new CniError(
      Code.invalidConfig,
      `prevResult of container ${env.containerId} interface ${env.ifname} does not list what ADD added on network ${network.name}: ${missing.join(', ')}`,
    );
  }
  for (const one of state.interfaces)
    await runDelegate('CHECK', one, env, network.delegateTimeoutMs, one.result);
}

export async function gc(network: NetworkConfig, env: Environment): Promise<void> {
  const valid = new Set((network.validAttachments ?? []).map((a) => `${a.containerID}:${a.ifname}`));
  const failures: string[] = [];
  const states = await listStates(network.stateDir, network.name, (why) =>
    // GC answers nothing on success; the runtime logs what a plugin writes to stderr
    process.stderr.write(`floatip-cni GC: ${why}: its file is removed, no interface deleted\n`),
  );
  for (const state of states) {
    if (valid.has(`${state.containerId}:${state.ifname}`)) continue;
    // the runtime lists an attachment once its ADD has answered: one still being added is not stale
    if (await stillAdding(state.adder)) continue;
    try {
      // the netns is usually gone with the container, which the delegates take as nothing to do
      for (const one of [...state.interfaces].reverse()) {
        await runDelegate(
          'DEL',
          one,
          { ...env, containerId: state.containerId, netns: state.netns, ifname: one.ifname },
          network.delegateTimeoutMs,
        );
      }
      await removeState(network.stateDir, network.name, state.containerId, state.ifname);
    } catch (err) {
      failures.push(`${state.containerId}/${state.ifname}: ${(err as Error).message}`);
    }
  }
  if (failures.length > 0) {
    throw new CniError(
      Code.delegateFailed,
      `GC could not remove ${failures.length} attachment(s)`,
      failures.join('; '),
    );
  }
}

/**
 * Why ADD cannot run its delegate on this node, as far as a cheap look tells: the delegate or the
 * `static` IPAM it calls missing from CNI_PATH (when the runtime gives one: STATUS need not), or
 * the master interface the delegate is given missing from this namespace (the node's, where the
 * runtime runs the plugin). Undefined when nothing is seen wrong.
 */
async function delegateUnready(network: NetworkConfig, env: Environment): Promise<string | undefined> {
  if (env.path.length > 0) {
    for (const type of [network.delegate.type, 'static']) {
      try {
        await findPlugin(type, env.path);
      } catch (err) {
        return (err as Error).message;
      }
    }
  }
  return missingMaster(network, network.delegate);
}

/**
 * Why `delegate`'s master is no link of this namespace (the node's, where the runtime runs the
 * plugin and ADD's delegate), or undefined: none named, there, or no /proc to ask.
 */
async function missingMaster(
  network: NetworkConfig,
  delegate: Readonly<Record<string, unknown>>,
): Promise<string | undefined> {
  const master = delegate.master;
  if (typeof master !== 'string' || master === '') return undefined;
  let links: Set<string>;
  try {
    links = netDevNames(await readFile('/proc/net/dev', 'utf8'));
  } catch {
    return undefined;
  }
  if (links.has(master)) return undefined;
  // macvlan and ipvlan are given the node's VLAN interface <master>.<vlan> (README, "The node side")
  const given = network.delegate.master;
  const vlan =
    typeof given === 'string' && master.startsWith(`${given}.`) ? master.slice(given.length + 1) : '';
  return vlan
    ? `the delegate's master interface ${master}, the node's interface for VLAN ${vlan}, does not exist on this node`
    : `the delegate's master interface ${master} does not exist on this node`;
}

export async function status(network: NetworkConfig, env: Environment): Promise<void> {
  const local = await delegateUnready(network, env);
  if (local !== undefined) throw new CniError(Code.notAvailable, `floatip-cni cannot serve ADD: ${local}`);
  // under galaxy's daemon, with no kubeconfig, nothing outside this node is needed
  if (network.kubeconfig === undefined) return;
  let reason: string;
  try {
    const target = await loadKubeconfig(network.kubeconfig);
    // objects that do not exist: a 404 proves the server answers and this user may get them, the
    // pod and its addresses' FloatingIP objects, as ADD does
    // (the FloatingIP's path loads the IPAM core, which DEL, CHECK, GC and VERSION never load)
    const { floatingIPPath } = await import('./holders.js');
    const probes = [
      ['a pod', '/api/v1/namespaces/default/pods/floatip-cni-status-probe'],
      ['a FloatingIP', floatingIPPath('0.0.0.0')],
    ] as const;
    reason = '';
    for (const [what, path] of probes) {
      const res = await get(target, path, network.requestTimeoutMs);
      if (res.status === 404 || res.status === 200) continue;
      reason = `getting ${what}: HTTP ${res.status}: ${statusMessage(res)}`;
      break;
    }
    if (reason === '') return;
  } catch (err) {
    reason = (err as Error).message;
  }
  throw new CniError(Code.notAvailable, `floatip-cni cannot serve ADD: ${reason}`);
}

export function version(cniVersion: string): Record<string, unknown> {
  return { cniVersion, supportedVersions: [...SUPPORTED_VERSIONS] };
}
