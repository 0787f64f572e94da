/**
 * Each SMG policy's wiring to its upstream core: how its core starts, which load fields it needs,
 * how a poll updates it, and how a route calls the core's select (with the seeded draws it takes).
 *
 * @internal
 */
import { policyError, type RouteRequest } from "../../../Policy.js"
import { blocksAsText, blocksAsTokenIds } from "../../internal/blocks.js"
import { drawMany } from "../../internal/rng.js"
import { smgCacheAwareInit, smgCacheAwareSelect } from "../CacheAware.js"
import { smgConsistentHashingSelect } from "../ConsistentHashing.js"
import { smgDpMinTokenUpdate } from "../DpMinToken.js"
import { smgLeastLoadSelect, smgLeastLoadUpdate } from "../LeastLoad.js"
import type { SmgPolicyName, SmgPolicyOptions, SmgPolicyState } from "../PolicyTypes.js"
import { smgPowerOfTwoSelect, smgPowerOfTwoUpdate } from "../PowerOfTwo.js"
import { smgPrefixHashSelect } from "../PrefixHash.js"
import { smgRandomSelect } from "../Random.js"
import { smgRoundRobinSelect } from "../RoundRobin.js"
import type { SmgLoadReport, SmgResult } from "../Types.js"
import { healthyIndices } from "./common.js"
import { asRanks } from "./reports.js"

/** What one SMG policy plugs into the shared reducer: its core's init, what it reads, its poll and its pick. */
export interface Spec {
  readonly initCore: (urls: ReadonlyArray<string>) => unknown
  readonly need?: "usage" | "leastLoad" | "usedTokens"
  readonly poll?: (core: unknown, poll: ReadonlyMap<string, SmgLoadReport | null>) => unknown
  readonly select: (
    s: SmgPolicyState,
    req: RouteRequest
  ) => { readonly out: SmgResult<unknown>; readonly seed: number; readonly scores?: ReadonlyArray<number> }
}

/** The spec of every SMG policy, with the options' tunables applied. */
export const specs = (o: SmgPolicyOptions): Record<SmgPolicyName, Spec> => {
  const blockTokens = Math.max(1, o.blockTokens ?? 512)
  return {
    "round-robin": {
      initCore: () => ({ counter: 0 }),
      select: (s) => ({ out: smgRoundRobinSelect(s.core as { counter: number }, s.workers), seed: s.seed })
    },
    random: {
      initCore: () => undefined,
      select: (s) => {
        const [d, seed] = drawMany(s.seed, [Math.max(1, healthyIndices(s.workers).length)])
        return { out: smgRandomSelect(s.workers, d), seed }
      }
    },
    "power-of-two": {
      initCore: () => ({ reports: new Map() }),
      need: "usage",
      poll: (c, p) => smgPowerOfTwoUpdate(c as never, p),
      select: (s) => {
        const n = healthyIndices(s.workers).length
        const [d, seed] = n >= 2 ? drawMany(s.seed, [n, n - 1]) : [[], s.seed]
        return { out: smgPowerOfTwoSelect(s.core as never, s.workers, d), seed }
      }
    },
    "least-load": {
      initCore: () => ({ cached: new Map(), inflight: new Map() }),
      need: "leastLoad",
      poll: (c, p) => smgLeastLoadUpdate(c as never, p),
      select: (s, req) => {
        const out = smgLeastLoadSelect(s.core as never, s.workers, req.inputLength, o.leastLoad)
        const h = (out.details.healthy as ReadonlyArray<number> | undefined) ?? []
        const sc = (out.details.scores as ReadonlyArray<number> | undefined) ?? []
        const scores = s.workers.map(() => Number.POSITIVE_INFINITY)
        h.forEach((i, k) => {
          scores[i] = sc[k]!
        })
        return { out, seed: s.seed, scores: h.length > 1 ? scores : undefined }
      }
    },
    "cache-aware": {
      initCore: (urls) => smgCacheAwareInit(urls),
      need: "usage",
      poll: (c, p) => {
        const cur = c as ReturnType<typeof smgCacheAwareInit>
        const reports = new Map(cur.reports)
        for (const [u, r] of p)
          if (r === null) reports.delete(u)
          else reports.set(u, r)
        return { ...cur, reports }
      },
      select: (s, req) => ({
        out: smgCacheAwareSelect(s.core as never, s.workers, blocksAsText(req.prefixHashes), o.cacheAware),
        seed: s.seed
      })
    },
    "prefix-hash": {
      initCore: () => undefined,
      select: (s, req) => {
        // the prompt's token ids, as upstream reads them; without them, one id per prefix block;
        // the session is the x-smg-routing-key hint (read by the head only)
        if (req.tokenIds !== undefined && req.tokenIds.length > 0)
          return {
            out: smgPrefixHashSelect(s.workers, req.tokenIds, o.prefixHash, req.sessionId),
            seed: s.seed
          }
        const tokens = blocksAsTokenIds(req.prefixHashes)
        const blocks = Math.ceil((o.prefixHash?.prefixTokenCount ?? 256) / blockTokens)
        return {
          out: smgPrefixHashSelect(
            s.workers,
            tokens,
            { ...o.prefixHash, prefixTokenCount: blocks },
            req.sessionId
          ),
          seed: s.seed
        }
      }
    },
    "consistent-hashing": {
      initCore: () => undefined,
      select: (s, req) => {
        const headers: Record<string, string> = {}
        if (req.routedDpRank !== undefined) headers["x-smg-target-worker"] = String(req.routedDpRank)
        if (req.sessionId !== undefined) headers["x-smg-routing-key"] = req.sessionId
        const n = s.workers.filter((w) => w.healthy).length
        const [d, seed] = drawMany(s.seed, [Math.max(1, n)])
        return { out: smgConsistentHashingSelect(s.workers, headers, d), seed }
      }
    },
    "dp-min-token": {
      initCore: () => ({ dpCachedLoads: new Map() }),
      need: "usedTokens",
      poll: (c, p) => {
        // one worker whose DP ranks are the ranks: rebuild its rank -> used-tokens map from the rows
        const cur = c as { dpCachedLoads: ReadonlyMap<string, ReadonlyMap<number, number>> }
        const m = new Map(cur.dpCachedLoads.get("worker") ?? [])
        for (const [u, r] of p) {
          const rank = Number(u.slice(5))
          if (r === null) m.delete(rank)
          else {
            const used = r.loads[0]!.numUsedTokens
            if (used === undefined) m.delete(rank)
            else m.set(rank, used)
          }
        }
        return smgDpMinTokenUpdate({ dpCachedLoads: new Map() }, new Map([["worker", asRanks(m)]]))
      },
      select: () => ({ out: policyError("InvalidInput", "unused"), seed: 0 })
    }
  }
}
