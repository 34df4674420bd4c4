// kubectl fip's command line (commander): the user's kubeconfig, context and namespace as kubectl
// takes them, and one subcommand per question an operator asks. Exit codes: 0 done, 1 a problem
// found (check, or usage without a configuration), an address left (release) or nothing found
// (show), 2 a usage or connection error.
import { Command, Option } from 'commander';
import type { KubeConfig } from '@kubernetes/client-node';
import { clip, clipQuoted, printableLines } from '../clip.js';
import { isPathSegment } from '../kube/path-segment.js';
import { check, formatCheck, problems } from './check.js';
import {
  type ServiceRef,
  apiRequest,
  contextNamespace,
  loadKubeConfig,
  parseServiceRef,
  proxyPath,
  readCluster,
} from './cluster.js';
import { filterHolders, holders } from './holders.js';
import {
  findingJson,
  formatHolders,
  formatUsage,
  holderJson,
  machine,
  parseFormat,
  usageJson,
} from './output.js';
import { type ReleaseAnswer, type ReleaseEntry, formatVerdicts, plan, targets, verdicts } from './release.js';
import { type Snapshot, buildSnapshot } from './snapshot.js';
import { NotFound, describeLines, find, freeFields, holderFields } from './show.js';
import { ARGUMENT_LIMIT } from './table.js';
import { usage } from './usage.js';

export interface Io {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
}

interface Globals {
  kubeconfig?: string;
  context?: string;
  namespace?: string;
  service: string;
  configMap: string;
  configKey: string;
  poolNamespace: string;
  resourceName: string;
}

/**
 * A namespace or object name the user gave, as it may go into an API path: never `.`, `..` or one
 * with `/` or `%`, which would name another object there (kubectl refuses them too).
 */
function objectName(flag: string, value: string): string {
  if (!isPathSegment(value))
    throw new Error(`${flag} ${clipQuoted(value, ARGUMENT_LIMIT)}: not a Kubernetes name`);
  return value;
}

class Session {
  readonly kc: KubeConfig;
  readonly namespace: string;
  readonly service: ServiceRef;
  constructor(readonly g: Globals) {
    this.kc = loadKubeConfig({ kubeconfig: g.kubeconfig, context: g.context });
    this.namespace = objectName('-n', g.namespace || contextNamespace(this.kc));
    objectName('--pool-namespace', g.poolNamespace);
    this.service = parseServiceRef(g.service);
  }

  async snapshot(): Promise<Snapshot> {
    const parts = this.g.configMap.split('/');
    const [namespace, name] = parts as [string, string];
    if (parts.length !== 2 || !isPathSegment(namespace) || !isPathSegment(name))
      throw new Error(
        `--config-map ${clipQuoted(this.g.configMap, ARGUMENT_LIMIT)}: expected <namespace>/<name>`,
      );
    return buildSnapshot(
      await readCluster(this.kc, {
        configMap: { namespace, name, key: this.g.configKey },
        poolNamespace: this.g.poolNamespace,
        resource: this.g.resourceName,
      }),
    );
  }

  /** POST /v1/ip through the service proxy; an answer that is not floatip's is an error naming the service. */
  async release(entries: readonly ReleaseEntry[]): Promise<ReleaseAnswer> {
    const path = proxyPath(this.service, '/v1/ip');
    const answer = await apiRequest(this.kc, 'POST', path, { ips: entries });
    const body = answer.body as Partial<ReleaseAnswer> & { message?: string };
    if ((answer.status === 200 || answer.status === 202) && typeof body?.code === 'number')
      return body as ReleaseAnswer;
    const said =
      typeof body === 'object' && body?.message ? body.message : JSON.stringify(answer.body).slice(0, 300);
    // a Kubernetes Status is the API server's own answer: the request never reached floatip
    if ((body as { kind?: unknown } | null)?.kind === 'Status') {
      throw new Error(
        `the API server answered ${answer.status} to POST ${path}, before floatip: ${said} (release goes through the API server's service proxy to ${this.g.service}, which needs that Service with a ready endpoint; npm start's embedded API server has no proxy: there, POST floatip's REST API /v1/ip directly)`,
      );
    }
    throw new Error(
      `floatip's REST API at ${this.g.service} (POST ${path}) answered ${answer.status}: ${said}`,
    );
  }
}

function windowMs(text: string): number {
  const m = /^(\d+)(s|m|h|d)$/.exec(text);
  if (!m || Number(m[1]) === 0)
    throw new Error(`--window ${clipQuoted(text, ARGUMENT_LIMIT)}: expected a duration such as 30m, 1h, 7d`);
  return Number(m[1]) * { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as 's' | 'm' | 'h' | 'd'];
}

export function fipProgram(io: Io, setExit: (code: number) => void): Command {
  const program = new Command('kubectl fip')
    .description(
      "floatip's operator tool: who holds which floating IP, how full each subnet is, what is inconsistent, and releases",
    )
    .option('--kubeconfig <file>', 'the kubeconfig (default: $KUBECONFIG, then ~/.kube/config)')
    .option('--context <name>', 'the kubeconfig context to use')
    .option(
      '-n, --namespace <ns>',
      "the namespace of pods and apps named (default: the context's); ls: only keys of this namespace",
    )
    .option(
      '--service <ns/name:port>',
      "floatip's REST API Service, reached through the API server's service proxy",
      'kube-system/floatip:api-port',
    )
    .option('--config-map <ns/name>', 'the floating IP configuration', 'kube-system/floatingip-config')
    .option('--config-key <key>', "the ConfigMap's data key", 'floatingips')
    .option('--pool-namespace <ns>', 'where Pool objects are', 'kube-system')
    .option(
      '--resource-name <name>',
      'the extended resource pods request for a floating IP',
      'tke.cloud.tencent.com/eni-ip',
    )
    .showHelpAfterError()
    .configureOutput({
      writeOut: io.out,
      writeErr: io.err,
      // commander quotes the word it refuses ('--nosuch', 'nosuch') whole and as typed: clipped here,
      // and escaped as object data is, since a control sequence typed reached the terminal raw
      outputError: (text, write) =>
        write(
          printableLines(text.replace(/'(.*)'/s, (_, word: string) => `'${clip(word, ARGUMENT_LIMIT)}'`)),
        ),
    })
    .exitOverride();
  const session = (cmd: Command) => new Session(cmd.optsWithGlobals() as Globals);
  // text for people carries object data (keys, node names, pod names): never a control sequence
  const say = (text: string) => io.out(printableLines(text));
  const output = (allowed: string) => new Option('-o, --output <format>', `output format: ${allowed}`);

  program
    .command('ls')
    .description(
      'list the addresses held, with their holder (state in-use, parked, kept, reserved or leaked)',
    )
    .option('--pod <name>', "only this pod's key")
    .option('--app <name>', "only this app's keys (parked ones included)")
    .option('--pool <name>', "only this Pool's keys")
    .option('--node <name>', 'only addresses bound on this node')
    .option('--parked', 'only parked or kept addresses (held with no pod)')
    .option('--leaked', 'only addresses still bound to a pod that is gone, finished or replaced')
    .addOption(output('wide, json, yaml'))
    .action(
      async (
        o: {
          pod?: string;
          app?: string;
          pool?: string;
          node?: string;
          parked?: boolean;
          leaked?: boolean;
          output?: string;
        },
        cmd: Command,
      ) => {
        const format = parseFormat(o.output, ['table', 'wide', 'json', 'yaml']);
        const s = session(cmd);
        const snap = await s.snapshot();
        const g = cmd.optsWithGlobals() as Globals;
        const all = holders(snap);
        const list = filterHolders(all, {
          ...o,
          ...(g.namespace ? { namespace: g.namespace } : {}),
        });
        if (format === 'json' || format === 'yaml')
          io.out(machine(format, { items: list.map((h) => holderJson(snap, h)) }));
        else say(formatHolders(snap, list, format === 'wide', all.length));
      },
    );

  program
    .command('show')
    .description(
      "who holds an address (or a pod's addresses), since when, and why it would or would not be released",
    )
    .argument('<ip|pod>', 'an IP address, its FloatingIP name, a pod name in the namespace, or namespace/pod')
    .action(async (subject: string, _o: unknown, cmd: Command) => {
      const s = session(cmd);
      const snap = await s.snapshot();
      const shown = find(snap, subject, s.namespace);
      if (shown.freeIP) return say(describeLines(freeFields(snap, shown.freeIP)));
      if (shown.holders.length === 0) {
        const p = shown.pod!;
        say(
          `pod ${p.namespace}/${p.name} holds no address (key ${p.key || 'none'}; annotation names ${p.addresses.join(', ') || 'nothing'})\n`,
        );
        return;
      }
      const now = plan(
        snap,
        targets(snap, { ips: shown.holders.map((h) => h.allocation.ip), namespace: s.namespace }),
      );
      const blocks = shown.holders.map((h) => {
        const v = now.find((x) => x.ip === h.allocation.ip);
        const releaseNow = v?.release
          ? 'floatip would release it (kubectl fip release)'
          : `floatip would refuse: ${v?.why ?? 'unknown'}`;
        return describeLines(holderFields(snap, h, releaseNow));
      });
      say(blocks.join('\n'));
    });

  program
    .command('usage')
    .description(
      'per subnet and Pool: total, used, parked, reserved, free, and the time to exhaustion at the recent rate',
    )
    .option('--window <duration>', 'how far back the allocation rate looks', '1h')
    .addOption(output('json, yaml'))
    .action(async (o: { window: string; output?: string }, cmd: Command) => {
      const format = parseFormat(o.output, ['table', 'json', 'yaml']);
      const ms = windowMs(o.window);
      const snap = await session(cmd).snapshot();
      const rows = usage(snap, ms);
      if (format === 'json' || format === 'yaml') io.out(machine(format, usageJson(rows, ms)));
      else say(formatUsage(rows, o.window));
      // no subnets to count is not an empty cluster: said, and exit 1 as check's finding of it
      if (snap.configProblem) {
        io.err(printableLines(`kubectl fip: no subnets counted: ${snap.configProblem}\n`));
        setExit(1);
      }
    });

  program
    .command('check')
    .description(
      'consistency check: objects, annotations and the configuration; exit 1 when something is wrong',
    )
    .addOption(output('json, yaml'))
    .action(async (o: { output?: string }, cmd: Command) => {
      const format = parseFormat(o.output, ['table', 'json', 'yaml']);
      const findings = check(await session(cmd).snapshot());
      if (format === 'json' || format === 'yaml')
        io.out(machine(format, { problems: problems(findings).length, findings: findings.map(findingJson) }));
      else say(formatCheck(findings));
      if (problems(findings).length > 0) setExit(1);
    });

  program
    .command('release')
    .description('release addresses through floatip (a dry run is shown first); refused ones say why')
    .argument('[ip...]', 'addresses to release')
    .option('--pod <name>', "the addresses of this pod's key (in the namespace)")
    .option('--app <name>', "the addresses of this app's keys, parked ones included (in the namespace)")
    .option('--dry-run', 'only show what would be released and what refused')
    .addOption(output('json, yaml'))
    .action(
      async (
        ips: string[],
        o: { pod?: string; app?: string; dryRun?: boolean; output?: string },
        cmd: Command,
      ) => {
        const format = parseFormat(o.output, ['table', 'json', 'yaml']);
        const selectors = [ips.length > 0, o.pod !== undefined, o.app !== undefined].filter(Boolean).length;
        if (selectors !== 1) throw new Error('name addresses, --pod or --app: one of them');
        if (o.pod !== undefined) objectName('--pod', o.pod);
        if (o.app !== undefined) objectName('--app', o.app);
        const s = session(cmd);
        const snap = await s.snapshot();
        const sent = targets(snap, { ips, namespace: s.namespace, ...o });
        if (sent.length === 0) {
          // nothing released, as when every address named is refused: exit 1, not a usage error
          const holder = o.pod ? `pod ${s.namespace}/${o.pod}` : `app ${s.namespace}/${o.app}`;
          io.err(printableLines(`kubectl fip: nothing to release: no address is held by ${holder}\n`));
          if (format === 'json' || format === 'yaml')
            io.out(machine(format, { dryRun: o.dryRun === true, items: [] }));
          return setExit(1);
        }
        const planned = plan(snap, sent);
        const human = format === 'table';
        if (human) say(formatVerdicts(planned, false));
        let result = planned;
        if (!o.dryRun) {
          const go = sent.filter((t) => planned.find((v) => v.ip === t.ip)?.release);
          if (go.length > 0) {
            const answer = await s.release(go.map((t) => t.entry!));
            const done = verdicts(go, answer);
            result = planned.map((v) => done.find((d) => d.ip === v.ip) ?? v);
            if (human) say('\n' + formatVerdicts(result, true));
          } else if (human) say('\nnothing released\n');
        }
        if (!human) {
          io.out(
            machine(format as 'json' | 'yaml', {
              dryRun: o.dryRun === true,
              items: result.map((v) => ({ ip: v.ip, key: v.key, released: v.release, why: v.why })),
            }),
          );
        }
        if (result.some((v) => !v.release)) setExit(1);
      },
    );

  // commander's own help command ends as a usage error whatever it shows (`help` and `help ls`
  // exited 2, as for want of a subcommand) and shows the usage alone for a name it does not know
  program.helpCommand(false);
  program
    .command('help')
    .description('display help for command')
    .argument('[command]')
    .action((name: string | undefined) => {
      if (name === undefined) return program.outputHelp();
      const sub = program.commands.find((c) => c.name() === name);
      // as commander says it of a command it does not know, clipped and escaped as that is
      if (!sub) return program.error(`error: unknown command '${name}'`);
      sub.outputHelp();
    });
  return program;
}

/** Runs the command line; resolves with the exit code. */
export async function runFip(argv: readonly string[], io: Io): Promise<number> {
  let code = 0;
  const program = fipProgram(io, (c) => (code = Math.max(code, c)));
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (err) {
    const e = err as { code?: string; exitCode?: number; message?: string };
    if (e.code?.startsWith('commander.')) {
      // help asked for is an answer; help shown for want of a subcommand (commander.help) a usage error
      return e.code === 'commander.helpDisplayed' || e.code === 'commander.version' ? 0 : 2;
    }
    // an error can quote the API server's answer or an object's data
    io.err(printableLines(`kubectl fip: ${e.message ?? String(err)}\n`));
    return err instanceof NotFound ? 1 : 2;
  }
  return code;
}
