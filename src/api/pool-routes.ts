// The handlers of /v1/pool (docs/galaxy.md#reading-a-pool). Pools are read from the API server, not the cache, so
// that a GET right after a POST sees it (galaxy reads the API server too).
import type { Request, Response } from 'express';
import { type Pool, PoolContendedError, type PoolStore } from '../store/pool-store.js';
import { ApiError, notFound, sendEnvelope } from './envelope.js';
import { actorOf } from './identity.js';
import {
  PREALLOCATION_LIMIT,
  type PreallocationDeps,
  poolHoldings,
  preallocatePool,
} from './pool-preallocation.js';

export interface PoolRouteDeps extends PreallocationDeps {
  readonly pools: Pick<PoolStore, 'fetch' | 'put' | 'delete'>;
}

export function poolRoutes(deps: PoolRouteDeps) {
  const { pools, log } = deps;
  return {
    async get(req: Request, res: Response): Promise<void> {
      const name = String(req.params.name);
      const pool = await pools.fetch(name);
      if (!pool) throw notFound(`pool ${name}`);
      // galaxy's Go decoder failed on such an object, and galaxy answered 500 with its error
      if (pool.unreadable)
        throw new ApiError(
          500,
          `pool ${name}: ${pool.unreadable}, and a Pool's size must be one (it admits no pod until the object is fixed)`,
        );
      sendEnvelope(res, 200, '', {
        pool: { name: pool.name, size: pool.size, preAllocateIP: pool.preAllocateIP },
      });
    },

    async put(req: Request, res: Response): Promise<void> {
      const body = req.body as Partial<Pool> & { name: string };
      const pool: Pool = {
        name: body.name,
        size: body.size ?? 0,
        preAllocateIP: body.preAllocateIP ?? false,
      };
      const actor = actorOf(req);
      // refused before anything is written
      const missing = pool.size - poolHoldings(deps.allocator, pool.name);
      if (pool.preAllocateIP && missing > PREALLOCATION_LIMIT) {
        throw new ApiError(
          400,
          `pre-allocating ${missing} pods' worth of addresses for pool ${pool.name} is over the limit of ${PREALLOCATION_LIMIT} per request; grow the pool in steps`,
        );
      }
      try {
        await pools.put(pool);
      } catch (err) {
        // lost to another writer every time: a 409 the caller can retry, not galaxy's 500
        if (err instanceof PoolContendedError) throw err;
        throw new ApiError(500, `failed to create Pool: ${(err as Error).message}`);
      }
      log.info({ pool: pool.name, size: pool.size, preAllocateIP: pool.preAllocateIP, actor }, 'Pool stored');
      if (!pool.preAllocateIP) {
        sendEnvelope(res, 200);
        return;
      }
      const result = await preallocatePool(deps, pool.name, pool.size, actor);
      if (result.enough) sendEnvelope(res, 200, '', { realPoolSize: result.realPoolSize });
      else sendEnvelope(res, 202, 'No enough IPs', { realPoolSize: result.realPoolSize });
    },

    async delete(req: Request, res: Response): Promise<void> {
      const name = String(req.params.name);
      if (!(await pools.delete(name))) throw notFound(`pool ${name}`);
      log.info({ pool: name, actor: actorOf(req) }, 'Pool deleted through the REST API');
      sendEnvelope(res, 200);
    },
  };
}
