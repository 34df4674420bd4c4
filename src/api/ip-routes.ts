// The handlers of /v1/ip, /v1/ip/{ip} and /v1/subnets. Requests arrive validated against the
// OpenAPI document (types coerced, formats checked); these only translate to and from the modules
// that decide (ip-list, release, releasability, subnet-stats).
import type { Request, Response } from 'express';
import { type Allocation, type Allocator, canonicalAddress, formatCidr } from '../ipam/index.js';
import { notFound, sendEnvelope, sendJsonText } from './envelope.js';
import { actorOf } from './identity.js';
import { listIPs, parseSort } from './ip-list.js';
import type { IPFilters } from './ip-query.js';
import { clampPage, clampSize, pageBody } from './paging.js';
import { type ReleaseDeps, type ReleaseItem, releaseIPs } from './release.js';
import { judge, podOf } from './releasability.js';
import { subnetStats } from './subnet-stats.js';
import { floatingIPJson } from './wire.js';

export interface IPRouteDeps extends ReleaseDeps {
  readonly allocator: Allocator;
}

const text = (q: Request['query'], name: string): string => {
  const v = q[name];
  return typeof v === 'string' ? v : '';
};
const integer = (q: Request['query'], name: string): number | undefined => {
  const v: unknown = q[name];
  return typeof v === 'number' ? v : undefined;
};

/** Status and releasability from the pod cache: the list must stay fast, so it does not ask the API server. */
function judgedFromCache(deps: IPRouteDeps, a: Allocation) {
  const pod = podOf(a.key);
  return judge(a, pod ? deps.pods.cached(pod.namespace, pod.name) : undefined);
}

export function ipRoutes(deps: IPRouteDeps) {
  const { allocator } = deps;
  return {
    async list(req: Request, res: Response): Promise<void> {
      const q = req.query;
      const filters: IPFilters = {
        keyword: text(q, 'keyword'),
        poolName: text(q, 'poolName'),
        appName: text(q, 'appName'),
        podName: text(q, 'podName'),
        namespace: text(q, 'namespace'),
        appType: text(q, 'appType'),
      };
      const page = await listIPs(
        allocator,
        filters,
        clampPage(integer(q, 'page')),
        clampSize(integer(q, 'size')),
        parseSort(text(q, 'sort')),
      );
      const content = page.items.map(({ ip, allocation }) =>
        allocation
          ? floatingIPJson(ip, allocation, judgedFromCache(deps, allocation))
          : floatingIPJson(ip, undefined, undefined, allocator.freeSinceOf(ip)),
      );
      const body = pageBody(page.window, content);
      sendJsonText(res, 200, body.text ?? JSON.stringify(body.json));
    },

    get(req: Request, res: Response): void {
      const ip = canonicalAddress(String(req.params.ip));
      const a = allocator.get(ip);
      const configured = allocator.isConfigured(ip);
      if (!a && !configured) throw notFound(`${ip} is not in any configured range`);
      const network = allocator.networkOf(ip);
      const entry = network && allocator.configuration.entries.find((e) => e.index === network.entry);
      sendEnvelope(res, 200, '', {
        content: {
          ...(a
            ? floatingIPJson(ip, a, judgedFromCache(deps, a))
            : floatingIPJson(ip, undefined, undefined, allocator.freeSinceOf(ip))),
          key: a?.key ?? '',
          nodeName: a?.nodeName ?? '',
          podUid: a?.podUid ?? '',
          reserved: a?.reserved ?? false,
          configured,
          ...(network && entry
            ? {
                network: {
                  entry: network.entry,
                  subnet: formatCidr(entry.subnet),
                  gateway: network.gateway,
                  vlan: network.vlan,
                },
              }
            : {}),
        },
      });
    },

    async release(req: Request, res: Response): Promise<void> {
      const dryRun = req.query.dryRun === (true as unknown);
      // required, and at most 10,000 entries: the OpenAPI document says so and the validator saw to it
      const items = (req.body as { ips: ReleaseItem[] }).ips;
      const report = await releaseIPs(deps, items, { actor: actorOf(req), dryRun });
      const failed = report.unreleased.length;
      const dry = dryRun ? { dryRun: true, released: report.released } : {};
      if (failed === 0) {
        sendEnvelope(res, 200, dryRun ? `dry run: would release ${report.released.length} ips` : '', dry);
        return;
      }
      const message = dryRun
        ? `dry run: would release ${report.released.length} ips, ${failed} ips would fail, please check the reasons why they would fail`
        : `Released ${report.released.length} ips, ${failed} ips failed, please check the reasons why they failed`;
      sendEnvelope(res, 202, message, {
        ...dry,
        unreleased: report.unreleased,
        reasons: report.reasons,
        details: report.details,
      });
    },

    subnets(_req: Request, res: Response): void {
      sendEnvelope(res, 200, '', { content: subnetStats(allocator) });
    },
  };
}
