// The data plane is the standard plugins' (Debian's containernetworking-plugins: vlan, macvlan,
// ipvlan, bridge): floatip-cni turns the pod's ipinfos into one delegate configuration per pod
// interface, with `static` IPAM carrying the addresses and the gateways as default routes, runs the
// delegate and merges what they answer.
import { execFile, spawn } from 'node:child_process';
import { access, constants } from 'node:fs/promises';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { clip } from '../clip.js';
import type { IPInfo } from '../cni/args.js';
import {
  CniError,
  Code,
  DELEGATE_VERSION,
  type DelegateConfig,
  type Environment,
  isIfname,
  type Result,
} from './protocol.js';

/** One pod interface: its name and the exact configuration its delegate is given. */
export interface PlannedInterface {
  readonly ifname: string;
  readonly delegate: Readonly<Record<string, unknown>> & { type: string };
}

/**
 * `eth0`, then `eth1`, ...: the runtime's name for the first interface, the same stem with the next
 * numbers for the others (galaxy's naming for a pod with several `request_ip_range` groups).
 */
export function interfaceNames(first: string, count: number): string[] {
  const [, stem, digits] = /^(.*?)(\d*)$/.exec(first)!;
  const start = digits === '' ? 0 : Number(digits);
  return Array.from({ length: count }, (_, i) =>
    i === 0 ? first : `${stem}${digits === '' ? i : start + i}`,
  );
}

/** The delegate's L2 fields for one VLAN id, as each standard plugin expresses a VLAN. */
function vlanFields(delegate: DelegateConfig, vlan: number): Record<string, unknown> {
  if (vlan === 0) {
    // an untagged address sits on the master itself; the vlan plugin cannot make VLAN 0
    return delegate.type === 'vlan' ? { type: 'macvlan', mode: 'bridge' } : {};
  }
  switch (delegate.type) {
    case 'vlan':
      return { vlanId: vlan };
    case 'macvlan':
    case 'ipvlan':
      // a VLAN interface of the master, shared by the node's pods of that VLAN, which the node has
      return { master: `${String(delegate.master)}.${vlan}` };
    case 'bridge':
      return { vlan };
    default:
      throw new CniError(
        Code.invalidConfig,
        `VLAN ${vlan}: delegate ${delegate.type} has no VLAN setting floatip-cni knows (vlan, macvlan, ipvlan, bridge do)`,
      );
  }
}

/**
 * The delegate configuration of every pod interface; only the first carries default routes, one per
 * family.
 */
export function planInterfaces(
  network: { name: string; delegate: DelegateConfig },
  firstIfname: string,
  groups: readonly IPInfo[][],
): PlannedInterface[] {
  const names = interfaceNames(firstIfname, groups.length);
  // a name past 15 bytes (`abcdefghijklmn10` after `abcdefghijklmn9`) failed its delegate only
  // after the first interface was made (105): refused first, as the ipinfos' other faults are
  const unnamable = names.find((name) => !isIfname(name));
  if (unnamable !== undefined) {
    throw new CniError(
      Code.badAnnotation,
      `${groups.length} interfaces from CNI_IFNAME ${firstIfname}: the name ${unnamable} of interface ${names.indexOf(unnamable) + 1} is no interface name (at most 15 bytes)`,
    );
  }
  return groups.map((infos, i) => {
    const routes: { dst: string; gw: string }[] = [];
    // one default route per family, the first ipinfo's: galaxy's daemon hands over a pod's groups
    // without saying they are groups, so two IPv4 ipinfos can share the interface. The same route
    // twice failed the delegate ("file exists") after it made the interface, and two gateways gave
    // the pod two defaults of which the kernel used the last
    for (const info of i === 0 ? infos : []) {
      const route = { dst: isIP(info.gateway) === 6 ? '::/0' : '0.0.0.0/0', gw: info.gateway };
      if (info.gateway !== '' && !routes.some((r) => r.dst === route.dst)) routes.push(route);
    }
    return {
      ifname: names[i]!,
      delegate: {
        ...network.delegate,
        ...vlanFields(network.delegate, infos[0]!.vlan),
        cniVersion: DELEGATE_VERSION,
        name: network.name,
        ipam: {
          type: 'static',
          addresses: infos.map((info) => ({
            address: info.ip,
            ...(info.gateway !== '' ? { gateway: info.gateway } : {}),
          })),
          ...(routes.length > 0 ? { routes } : {}),
        },
      } as PlannedInterface['delegate'],
    };
  });
}

export async function findPlugin(type: string, path: readonly string[]): Promise<string> {
  for (const dir of path) {
    const file = join(dir, type);
    try {
      await access(file, constants.X_OK);
      return file;
    } catch {
      // not in this directory
    }
  }
  throw new CniError(
    Code.invalidConfig,
    `delegate plugin ${JSON.stringify(type)} not found in CNI_PATH ${clip(path.join(':'), 200)}`,
  );
}

/** The link names of a /proc/net/dev: two header lines, then `  <name>: <counters>` (a name has no ':'). */
export const netDevNames = (text: string): Set<string> =>
  new Set(
    text
      .split('\n')
      .slice(2)
      .map((line) => line.split(':')[0]!.trim())
      .filter((name) => name !== ''),
  );

/**
 * The names of the links in the network namespace at `netns`, or undefined where they cannot be
 * listed (no nsenter, a namespace that cannot be entered). A failed ADD deletes the interface of the
 * delegate that failed only if no link of its name was there before: Debian's macvlan leaves the
 * interface it made when its IPAM then fails, but one that was there first is not ADD's to delete.
 * /proc/net/dev lists the links of the reading process's namespace, the pod's once nsenter put it
 * there; util-linux (nsenter) is part of every Debian and RHEL base system.
 */
export function linksIn(netns: string, timeoutMs: number): Promise<Set<string> | undefined> {
  return new Promise((done) => {
    execFile(
      'nsenter',
      [`--net=${netns}`, '--', 'cat', '/proc/net/dev'],
      { timeout: timeoutMs, maxBuffer: OUTPUT_LIMIT },
      (err, stdout) => done(err ? undefined : netDevNames(stdout)),
    );
  });
}

/** The most of a delegate's stdout or stderr kept: a result is a few KiB; what is past this is dropped. */
const OUTPUT_LIMIT = 2 ** 20;
/** The most of a failed delegate's words passed on in the error. */
const MESSAGE_LIMIT = 4096;

interface DelegateRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly timedOut: boolean;
}

/**
 * Runs `file` with `env` and `input` on its stdin, in a process group of its own so that what it
 * starts goes with it: past `timeoutMs` the whole group is killed.
 */
function runBounded(
  file: string,
  env: NodeJS.ProcessEnv,
  input: string,
  timeoutMs: number,
): Promise<DelegateRun> {
  return new Promise((done, fail) => {
    const child = spawn(file, [], { env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    const collect = (into: Buffer[]) => {
      let kept = 0;
      return (d: Buffer) => {
        if (kept >= OUTPUT_LIMIT) return;
        into.push(d.subarray(0, OUTPUT_LIMIT - kept));
        kept += d.length;
      };
    };
    child.stdout.on('data', collect(out));
    child.stderr.on('data', collect(err));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // the group is gone already
      }
      // a process it started in a session of its own may still hold the pipes: they are let go,
      // so that the run ends now rather than when that process does
      child.stdout.destroy();
      child.stderr.destroy();
    }, timeoutMs);
    child.on('error', (e) => {
      clearTimeout(timer);
      fail(e);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString(), timedOut });
    });
    // a delegate that exits without reading its configuration is judged by its exit and output
    child.stdin.on('error', () => undefined);
    child.stdin.end(input);
  });
}

/**
 * Runs the delegate for one interface, for at most `timeoutMs`. Its error object is passed on in
 * `msg` and `details`, with which interface and command it was.
 */
export async function runDelegate(
  command: 'ADD' | 'DEL' | 'CHECK',
  planned: PlannedInterface,
  env: Environment,
  timeoutMs: number,
  prevResult?: Result,
): Promise<Result | undefined> {
  const type = String(planned.delegate.type);
  const file = await findPlugin(type, env.path);
  const config = prevResult ? { ...planned.delegate, prevResult } : planned.delegate;
  const { code, stdout, stderr, timedOut } = await runBounded(
    file,
    {
      PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin',
      CNI_COMMAND: command,
      CNI_CONTAINERID: env.containerId,
      CNI_NETNS: env.netns,
      CNI_IFNAME: planned.ifname,
      // the pod's arguments are floatip-cni's; static IPAM would read an IP= among them
      CNI_ARGS: '',
      CNI_PATH: env.path.join(':'),
    },
    JSON.stringify(config),
    timeoutMs,
  );
  if (timedOut) {
    throw new CniError(
      Code.delegateFailed,
      `delegate ${type} ${command} ${planned.ifname}: no answer within ${timeoutMs / 1000} s (delegateTimeoutSeconds); killed`,
    );
  }
  if (code !== 0) {
    let failure: { msg?: unknown; details?: unknown } = {};
    try {
      failure = JSON.parse(stdout) as typeof failure;
    } catch {
      // a delegate that broke the protocol: say what it printed
    }
    const said = typeof failure.msg === 'string' ? failure.msg : (stdout + stderr).trim() || `exit ${code}`;
    // what a broken delegate prints goes into the runtime's error and the pod's events: a few KiB of it
    throw new CniError(
      Code.delegateFailed,
      `delegate ${type} ${command} ${planned.ifname}: ${clip(said, MESSAGE_LIMIT)}`,
      typeof failure.details === 'string' && failure.details !== '' ? failure.details : undefined,
    );
  }
  if (command !== 'ADD') return undefined;
  try {
    return JSON.parse(stdout) as Result;
  } catch {
    throw new CniError(
      Code.delegateFailed,
      `delegate ${type} ADD ${planned.ifname} printed no result: ${stdout.slice(0, 200)}`,
    );
  }
}

/** The delegates' results as one: their pod interfaces in order, each IP pointing at its own. */
export function mergeResults(results: readonly Result[]): Result {
  const interfaces: NonNullable<Result['interfaces']>[number][] = [];
  const ips: NonNullable<Result['ips']>[number][] = [];
  const routes: NonNullable<Result['routes']>[number][] = [];
  for (const result of results) {
    const offset = interfaces.length;
    interfaces.push(...(result.interfaces ?? []));
    for (const ip of result.ips ?? []) {
      ips.push(ip.interface === undefined ? ip : { ...ip, interface: ip.interface + offset });
    }
    routes.push(...(result.routes ?? []));
  }
  return { cniVersion: DELEGATE_VERSION, interfaces, ips, routes, dns: results[0]?.dns ?? {} };
}
