/**
 * The SMG policies as loadledger `Policy` reducers (ranks = workers by index), for the registry,
 * the simulator and the laws. Upstream: lightseekorg/smg `model_gateway/src/policies/*.rs`, commit
 * 73da68ca9472bbc0ff5f63d31a8a21fbb8696359.
 *
 * @since 0.2.0
 */

import type { RankLoad } from "@loadledger/schema"
import { ranksOf } from "../../internal/ranksOf.js"
import { type Explanation, policyError, type RouteRequest, type RouteResult } from "../../Policy.js"
import { checkStatus } from "../../RankStatus.js"
import { checkInputLength, checkNow, checkRequestFields } from "../../RequestChecks.js"
import { charge, noCharges, release } from "../internal/charges.js"
import type { PeerPolicy } from "../PeerPolicy.js"
import { smgDpMinTokenSelect } from "./DpMinToken.js"
import { healthyIndices } from "./internal/common.js"
import { asReport, busiestKnown, withBusiest } from "./internal/reports.js"
import { specs } from "./internal/specs.js"
import type { SmgPolicyName, SmgPolicyOptions, SmgPolicyState } from "./PolicyTypes.js"
import type { SmgLoadReport } from "./Types.js"

const urlOf = (rank: number) => `rank-${rank}`

const routed = (
  s: SmgPolicyState,
  rank: number,
  req: RouteRequest,
  core: unknown,
  seed: number,
  processed: boolean,
  explanation: Explanation
): RouteResult<SmgPolicyState> => {
  const workers = s.workers.slice()
  const w = workers[rank]!
  workers[rank] = { ...w, load: w.load + 1, processedRequests: w.processedRequests + (processed ? 1 : 0) }
  return {
    _tag: "Routed",
    rank,
    state: { ...s, workers, core, seed, charges: charge(s.charges, req.requestId, rank) },
    explanation
  }
}

/**
 * Build an SMG policy as a loadledger `Policy` (registry names `smg/<name>`). Ranks are SMG workers
 * by index. `route` charges the pick's in-flight `load` (upstream `WorkerLoadGuard`) and `finish`
 * releases it; `setStatus` sets `healthy`; `observe` delivers the rows as one load poll, each rank a
 * one-scheduler report. What a policy needs from the trace:
 *
 * - `power-of-two`, `cache-aware`: `tokenUsage` (else `kvCacheUsage`). `least-load`: that plus
 *   `numWaitingUncachedTokens` (`genThroughput` absent counts as non-positive: upstream's 2000 tok/s
 *   default). A row without them, or marked `unknown`, is never attractive: each missing field reads as
 *   the busiest of the same poll (highest usage and waiting uncached tokens, lowest throughput; a
 *   loadledger rule, upstream has no such row). When no row of the poll carries them, every rank's report is removed
 *   (upstream `remove_worker`) and ranks are scored by the router's own in-flight count, which is
 *   known, never by a made-up 0. SMG has no staleness rule (each poll replaces the last); stale rows
 *   are used as they are unless the producer marked them `unknown: stale`.
 * - `cache-aware`: the request text is its `prefixHashes`, each block as two characters (40 bits of
 *   its XXH3), so the match rate is matched blocks / blocks. No `prefixHashes`: empty text.
 * - `prefix-hash`: the request's `tokenIds`, as upstream reads them (the key hashes the first
 *   `prefixTokenCount`, 256; fewer ids than that: all of them, as upstream with a shorter prompt).
 *   No `tokenIds` (or `[]`): token ids are the block hashes of `prefixHashes` (a decimal hash below
 *   2^32 as itself, others folded by XXH3) and `prefixTokenCount` 256 tokens become
 *   `ceil(256 / blockTokens)` blocks (the first Mooncake block holds the first 256 tokens). At the
 *   head (`smg/prefix-hash`) `sessionId` is the `x-smg-routing-key` hint and wins over the tokens
 *   (PR #2199), and with neither the least-loaded healthy rank is taken (`no_routing_key`); at
 *   v1.9.0 (`smg/prefix-hash@v1.9.0`, `prefixHash.version`) there is no hint and neither is
 *   `AllRanksUnavailable` naming `tokenIds` (upstream `None`, `no_tokens`). The simulator always
 *   hands `tokenIds` (synthesised for traces without prompt tokens, `@loadledger/sim` `tokenIdsOf`).
 * - `consistent-hashing`: `sessionId` is `x-smg-routing-key`; `routedDpRank` is `x-smg-target-worker`.
 * - `dp-min-token`: the ranks are one worker's DP ranks; `numUsedTokens` (else `numTotalTokens`, used
 *   plus pending prefill: the closest field SGLang's scheduler rows carry) feeds the map, the cost is
 *   the prompt's tokens (upstream estimates tokens as words x 1.3; the trace has the count). With no
 *   rank reported, upstream leaves the choice to the engine: modelled as SGLang's default round robin.
 *   Upstream DP ranks have no health of their own; here an unhealthy rank is not a candidate.
 *
 * Randomness: a SplitMix32 stream from `seed`, kept in the state. Unhealthy everywhere: a
 * `PolicyError` (`AllRanksUnavailable`), upstream's `None`.
 *
 * **When to use**: the registry builds these; call it directly for non-default tunables.
 *
 * @example
 * ```ts
 * import { Smg } from "@loadledger/policies"
 * const p = Smg.makeSmgPolicy("least-load")
 * const s = p.observe(p.init(2), [], 0)
 * const r = p.route(s, { requestId: "a", inputLength: 100 }, 0)
 * r._tag === "Routed" && r.rank // => 0
 * const r2 = r._tag === "Routed" ? p.route(r.state, { requestId: "b", inputLength: 100 }, 0) : r
 * r2._tag === "Routed" && r2.rank // => 1
 * ```
 *
 * @category smg
 * @since 0.2.0
 */
export const makeSmgPolicy = (
  name: SmgPolicyName,
  options: SmgPolicyOptions = {}
): PeerPolicy<SmgPolicyState> => {
  const spec = specs(options)[name]
  const init = (dpSize: number): SmgPolicyState => {
    const workers = Array.from({ length: ranksOf(dpSize) }, (_, i) => ({
      url: urlOf(i),
      healthy: true,
      load: 0,
      processedRequests: 0,
      circuitBreakerCanExecute: true
    }))
    return {
      workers,
      charges: noCharges,
      seed: (options.seed ?? 0) >>> 0,
      core: spec.initCore(workers.map((w) => w.url)),
      fallbackCursor: 0
    }
  }
  const observe = (s: SmgPolicyState, loads: ReadonlyArray<RankLoad>, now: number): SmgPolicyState => {
    if (!Number.isFinite(now) || spec.poll === undefined || spec.need === undefined || loads.length === 0)
      return s
    const poll = new Map<string, SmgLoadReport | null>()
    for (const row of loads)
      if (Number.isInteger(row.dpRank) && row.dpRank >= 0 && row.dpRank < s.workers.length)
        poll.set(urlOf(row.dpRank), asReport(row, spec.need))
    if (spec.need !== "usedTokens") {
      // a rank without the load this policy reads scores as the busiest known one (see busiestKnown)
      const worst = busiestKnown(loads, spec.need)
      if (worst !== null)
        for (const row of loads) {
          const url = urlOf(row.dpRank)
          if (poll.get(url) === null) poll.set(url, withBusiest(row, worst))
        }
    }
    return { ...s, core: spec.poll(s.core, poll) }
  }
  const route = (s: SmgPolicyState, req: RouteRequest, now: number): RouteResult<SmgPolicyState> => {
    if (s.workers.length === 0) return policyError("NoRanks", "no ranks", "dpSize")
    const bad = checkInputLength(req.inputLength) ?? checkNow(now) ?? checkRequestFields(req)
    if (bad !== undefined) return bad
    if (name === "dp-min-token") return routeDp(s, req)
    // a pinned rank is honoured or refused, never replaced by the tree's choice (issue 35)
    if (name === "cache-aware" && req.routedDpRank !== undefined) {
      const r = req.routedDpRank
      if (!Number.isInteger(r) || r < 0 || r >= s.workers.length || s.workers[r]?.healthy !== true)
        return policyError(
          "InvalidRoutedRank",
          `cache-aware: routedDpRank ${r} is not a healthy rank`,
          "routedDpRank"
        )
      return routed(s, r, req, s.core, s.seed, false, {
        tieBreak: "routedDpRank: the pinned rank",
        details: { pinned: r }
      })
    }
    const { out, seed, scores } = spec.select(s, req)
    if (out._tag === "PolicyError") return out
    if (out.index === undefined) {
      const branch = out.details.branch
      return policyError(
        "AllRanksUnavailable",
        `${name}: upstream selects no worker${branch === undefined ? "" : ` (${String(branch)})`}`,
        branch === "no_tokens" ? "tokenIds" : branch === "target_worker_miss" ? "routedDpRank" : "status"
      )
    }
    const explanation: Explanation = {
      scores,
      tieBreak: tieBreakOf[name],
      details: { ...out.details, upstream: `lightseekorg/smg ${name}` }
    }
    return routed(s, out.index, req, out.state ?? s.core, seed, out.processed, explanation)
  }
  const routeDp = (s: SmgPolicyState, req: RouteRequest): RouteResult<SmgPolicyState> => {
    const cost = Math.max(1, Math.ceil(req.inputLength))
    // loadledger addition: upstream DP ranks have no health of their own; an unhealthy rank is not a candidate
    const core = s.core as { dpCachedLoads: ReadonlyMap<string, ReadonlyMap<number, number>> }
    const all = core.dpCachedLoads.get("worker") ?? new Map<number, number>()
    const usable = new Map([...all].filter(([r]) => s.workers[r]?.healthy === true))
    const out = smgDpMinTokenSelect({ dpCachedLoads: new Map([["worker", usable]]) }, "worker", cost)
    if (out.dpRank !== undefined) {
      const merged = new Map(all)
      merged.set(out.dpRank, out.state.dpCachedLoads.get("worker")!.get(out.dpRank)!)
      const next = { dpCachedLoads: new Map([["worker", merged]]) }
      return routed(s, out.dpRank, req, next, s.seed, false, {
        tieBreak: "lowest (used tokens, dp rank)",
        details: { estimatedCost: cost, dpCachedLoads: merged }
      })
    }
    const h = healthyIndices(s.workers)
    if (h.length === 0)
      return policyError("AllRanksUnavailable", "dp-min-token: no rank reported and none healthy", "status")
    const rank = h[s.fallbackCursor % h.length]!
    const r = routed(s, rank, req, s.core, s.seed, false, {
      tieBreak: "no rank has a cached load: the engine's own round robin",
      details: { estimatedCost: cost, fallback: "engine-round-robin" }
    })
    return r._tag === "Routed" ? { ...r, state: { ...r.state, fallbackCursor: s.fallbackCursor + 1 } } : r
  }
  return {
    name: `smg/${name}`,
    init,
    observe,
    route,
    finish: (s, ids) => {
      const [charges, ranks] = release(s.charges, ids)
      if (ranks.length === 0) return s
      const workers = s.workers.slice()
      for (const r of ranks) workers[r] = { ...workers[r]!, load: Math.max(0, workers[r]!.load - 1) }
      return { ...s, workers, charges }
    },
    setStatus: (s, status) =>
      checkStatus(status, s.workers.length) !== undefined
        ? s
        : {
            ...s,
            workers: s.workers.map((w, i) => ({ ...w, healthy: status[i]! }))
          }
  }
}

const tieBreakOf: Record<SmgPolicyName, string> = {
  "round-robin": "global counter modulo the healthy count",
  random: "one seeded draw over healthy ranks",
  "power-of-two": "two distinct seeded draws; the first wins ties (la <= lb)",
  "least-load": "first minimum in rank order",
  "cache-aware": "(load, processed requests, rank) minimum; tree tenant on a hit",
  "prefix-hash": "BLAKE3 ring position, then the first least-loaded rank within the load bound",
  "consistent-hashing": "BLAKE3 ring position of the routing key; seeded draw without a key",
  "dp-min-token": "lowest (used tokens, dp rank)"
}
