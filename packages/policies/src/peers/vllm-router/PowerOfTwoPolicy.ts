/**
 * vllm-project/router `power_of_two` as a loadledger `Policy` (registry `vllm-router/power-of-two`).
 * Upstream: vllm-project/router `src/policies/power_of_two.rs`, commit
 * `fa999f98dc881e20b6b0257be0049cd4c68c8ea0`.
 *
 * @since 0.8.0
 */
import type { RankLoad } from "@loadledger/schema"
import { ranksOf } from "../../internal/ranksOf.js"
import { policyError, type RouteRequest, type RouteResult } from "../../Policy.js"
import { checkStatus } from "../../RankStatus.js"
import { checkInputLength, checkNow, checkRequestFields } from "../../RequestChecks.js"
import { type Charges, charge, noCharges, release } from "../internal/charges.js"
import { drawBelow } from "../internal/rng.js"
import type { PeerPolicy } from "../PeerPolicy.js"
import { vllmRouterPowerOfTwoSelect } from "./PowerOfTwo.js"

/**
 * Options of {@link makeVllmRouterPowerOfTwo}: the workers' urls (`workerUrls`, default
 * `rank-<i>`; only names here) and the `seed` of the draws (default 0).
 *
 * @category vllm-router
 * @since 0.8.0
 */
export interface VllmRouterP2Options {
  readonly workerUrls?: ReadonlyArray<string> | undefined
  readonly seed?: number | undefined
}

/**
 * State of `vllm-router/power-of-two`: worker urls and health, the router-local in-flight count
 * per worker (`local`), the cached loads of the last poll by url (`cached`), the draws' seed and
 * which rank each request in flight was charged to.
 *
 * @category vllm-router
 * @since 0.8.0
 */
export interface VllmRouterP2State {
  readonly urls: ReadonlyArray<string>
  readonly healthy: ReadonlyArray<boolean>
  readonly local: ReadonlyArray<number>
  readonly cached: ReadonlyMap<string, number>
  readonly seed: number
  readonly charges: Charges
}

/** The engine's request count a load poll carries: running + waiting; neither (or unknown): none. */
const cachedOf = (row: RankLoad): number | undefined => {
  if (row.unknown !== undefined) return undefined
  const r = row.numRunningReqs
  const w = row.numWaitingReqs
  return r === undefined && w === undefined ? undefined : (r ?? 0) + (w ?? 0)
}

/**
 * Build `vllm-router/power-of-two`. `observe` is upstream `update_loads`: a non-empty poll
 * **replaces** the cached loads (`*cached = loads.clone()`, so a rank missing from the poll, or whose
 * row has neither `numRunningReqs` nor `numWaitingReqs` or is `unknown`, falls back to its local
 * count); the cached load of a rank is `numRunningReqs + numWaitingReqs` (loadledger's reading of
 * the engine's `/load` figure). `route` draws the first pick and redraws the second until it
 * differs (seeded SplitMix32, state in, state out), picks by {@link vllmRouterPowerOfTwoSelect} and
 * adds the request to the pick's local count (the router's in-flight counter, `Worker::load()`);
 * `finish` takes it off. `routedDpRank` is refused (`InvalidRoutedRank`) unless it is a healthy rank,
 * then honoured (loadledger's; upstream has no target-worker input). No healthy rank:
 * `AllRanksUnavailable` (upstream `None`).
 *
 * **When to use**: the registry builds it; call it directly to name the urls or the seed.
 *
 * @example
 * ```ts
 * import { VllmRouter } from "@loadledger/policies"
 * const p = VllmRouter.makeVllmRouterPowerOfTwo({ seed: 3 })
 * const s = p.observe(p.init(2), [{ dpRank: 0, numRunningReqs: 100 }, { dpRank: 1, numRunningReqs: 10 }], 0)
 * const r = p.route(s, { requestId: "a", inputLength: 8 }, 0)
 * r._tag === "Routed" && r.rank // => 1
 * ```
 *
 * @category vllm-router
 * @since 0.8.0
 */
export const makeVllmRouterPowerOfTwo = (
  options: VllmRouterP2Options = {}
): PeerPolicy<VllmRouterP2State> => {
  const init = (dpSize: number): VllmRouterP2State => {
    const n = ranksOf(dpSize)
    const urls = Array.from({ length: n }, (_, i) => options.workerUrls?.[i] ?? `rank-${i}`)
    return {
      urls,
      healthy: urls.map(() => true),
      local: urls.map(() => 0),
      cached: new Map(),
      seed: (options.seed ?? 0) >>> 0,
      charges: noCharges
    }
  }
  const observe = (s: VllmRouterP2State, loads: ReadonlyArray<RankLoad>, now: number): VllmRouterP2State => {
    if (!Number.isFinite(now) || loads.length === 0) return s
    const cached = new Map<string, number>()
    for (const row of loads) {
      if (!Number.isInteger(row.dpRank) || row.dpRank < 0 || row.dpRank >= s.urls.length) continue
      const v = cachedOf(row)
      if (v !== undefined && Number.isFinite(v)) cached.set(s.urls[row.dpRank]!, v)
    }
    return { ...s, cached }
  }
  const at = (s: VllmRouterP2State, rank: number, seed: number, req: RouteRequest, details: object) => {
    const local = s.local.slice()
    local[rank] = local[rank]! + 1
    return {
      _tag: "Routed" as const,
      rank,
      state: { ...s, local, seed, charges: charge(s.charges, req.requestId, rank) },
      explanation: {
        tieBreak: "two distinct seeded draws; the first wins ties (load1 <= load2)",
        details: { ...details, upstream: "vllm-project/router power_of_two" }
      }
    }
  }
  const route = (s: VllmRouterP2State, req: RouteRequest, now: number): RouteResult<VllmRouterP2State> => {
    if (s.urls.length === 0) return policyError("NoRanks", "no ranks", "dpSize")
    const bad = checkInputLength(req.inputLength) ?? checkNow(now) ?? checkRequestFields(req)
    if (bad !== undefined) return bad
    if (req.routedDpRank !== undefined) {
      const r = req.routedDpRank
      if (!Number.isInteger(r) || r < 0 || r >= s.urls.length || s.healthy[r] !== true)
        return policyError(
          "InvalidRoutedRank",
          `power-of-two: routedDpRank ${r} is not a healthy rank`,
          "routedDpRank"
        )
      return at(s, r, s.seed, req, { pinned: r })
    }
    const workers = s.urls.map((url, i) => ({ url, healthy: s.healthy[i] === true, load: s.local[i]! }))
    const n = workers.filter((w) => w.healthy).length
    const draws: Array<number> = []
    let seed = s.seed
    if (n >= 2) {
      let d: number
      ;[d, seed] = drawBelow(seed, n)
      draws.push(d)
      do {
        ;[d, seed] = drawBelow(seed, n)
        draws.push(d)
      } while (d === draws[0])
    }
    const out = vllmRouterPowerOfTwoSelect(workers, s.cached, draws)
    if (out._tag === "PolicyError") return out
    if (out.index === undefined)
      return policyError("AllRanksUnavailable", "power-of-two: no healthy worker", "status")
    const scores = out.candidates.length === 2 ? s.urls.map(() => Number.POSITIVE_INFINITY) : undefined
    out.candidates.forEach((c, k) => {
      if (scores !== undefined) scores[c] = out.loads[k]!
    })
    const r = at(s, out.index, seed, req, { candidates: out.candidates, loads: out.loads, draws })
    return scores === undefined ? r : { ...r, explanation: { ...r.explanation, scores } }
  }
  return {
    name: "vllm-router/power-of-two",
    init,
    observe,
    route,
    finish: (s, ids) => {
      const [charges, ranks] = release(s.charges, ids)
      if (ranks.length === 0) return s
      const local = s.local.slice()
      for (const r of ranks) local[r] = Math.max(0, local[r]! - 1)
      return { ...s, local, charges }
    },
    setStatus: (s, status) =>
      checkStatus(status, s.urls.length) !== undefined ? s : { ...s, healthy: [...status] }
  }
}
