/**
 * Dynamo's selectors as loadledger `Policy` values over DP ranks.
 *
 * @since 0.2.0
 */
import type { Policy } from "../../Policy.js"
import { policyError } from "../../Policy.js"
import { addPrefix, emptyPrefixIndex, type PrefixIndex, podsOf } from "../aibrix/internal/prefixIndex.js"
import { candidateRanks, type PeerState, peerPolicy } from "../internal/PeerLedger.js"
import { selectDefaultWorker } from "./DefaultSelector.js"
import type { DynamoKvRouterConfig, DynamoWorker } from "./Types.js"
import {
  type VllmSelectorState,
  vllmHook,
  vllmSelect,
  vllmSelectorInit,
  vllmSetCounts
} from "./VllmSelector.js"

/**
 * Options of the `dynamo/kv` policy: the router config (defaults as upstream; temperature 0 =
 * argmin), the tokens one trace block hash stands for (Mooncake: 512, Dynamo's KV block here), and
 * the seed of the tie-break / softmax draws.
 *
 * @category dynamo
 * @since 0.2.0
 */
export interface DynamoKvPolicyOptions {
  readonly name?: string | undefined
  readonly config?: DynamoKvRouterConfig | undefined
  readonly blockSize?: number | undefined
  readonly seed?: number | undefined
}

/** Leading blocks of `hashes` each rank holds (contiguous from the first block, as a radix match). */
const overlapBlocks = (ix: PrefixIndex, hashes: ReadonlyArray<string>, dpSize: number): Array<number> => {
  const out = new Array<number>(dpSize).fill(0)
  let alive = new Set<number>(Array.from({ length: dpSize }, (_, i) => i))
  for (const h of hashes) {
    const holders = new Set(podsOf(ix, h).map(Number))
    const next = new Set<number>()
    for (const r of alive)
      if (holders.has(r)) {
        out[r] = out[r]! + 1
        next.add(r)
      }
    if (next.size === 0) break
    alive = next
  }
  return out
}

/**
 * Dynamo's KV router (default selector) as a `Policy` over DP ranks: rank i is the pair
 * `(worker 0, dp_rank i)`, so candidates are visited in rank order as upstream's seeded path sorts
 * them.
 *
 * - **Loads**: Dynamo routes on its own projection, not on engine metrics. Here: `active_requests`
 *   = requests routed and not finished, `active_prefill_tokens` = their uncached prompt tokens,
 *   `active_decode_blocks` = their prompt blocks (`ceil(isl / block)`), all charged on route and
 *   released on finish (upstream releases prefill tokens at first token and tracks output blocks;
 *   those events are not in the `Policy` contract). `RankLoad` rows are not read, so an unknown or
 *   absent row never makes a rank attractive; busy-threshold overload is not modelled.
 * - **Overlap**: the trace's block hashes (`RouteRequest.prefixHashes`, each `blockSize` tokens)
 *   against an approximate index of the blocks routed to each rank (Dynamo's approximate mode,
 *   without its TTL): `device_blocks` = leading blocks the rank holds,
 *   `effective_cached_tokens` = `min(device_blocks * block, isl)`.
 * - **Unhealthy** ranks are absent from the worker map; `routedDpRank` is the pinned worker
 *   (an unhealthy or out-of-range pin is an error, as an unknown pinned worker upstream).
 * - **Randomness**: reservoir tie-break and softmax draws from a seeded generator in the state.
 *
 * **When to use**: comparing Dynamo's KV-aware cost with other policies in the simulator, the laws,
 * the bench; {@link selectDefaultWorker} is the exact core.
 *
 * Upstream: ai-dynamo/dynamo `lib/kv-router/src/scheduling/selector/default.rs` and `selector/mod.rs`
 * at 07a6c9ce3bb096cfaf353fe69ee578e105c6a512.
 *
 * @example
 * ```ts
 * import { Dynamo } from "@loadledger/policies"
 * const p = Dynamo.makeDynamoKvPolicy({})
 * let s = p.init(2)
 * const a = p.route(s, { requestId: "a", inputLength: 1024, prefixHashes: ["1", "2"] }, 0)
 * if (a._tag === "Routed") s = p.finish(a.state, ["a"], 1)
 * // the next request shares the prefix: the overlap credit (2 blocks) makes a's rank cost 0
 * const b = p.route(s, { requestId: "b", inputLength: 1024, prefixHashes: ["1", "2"] }, 1)
 * a._tag === "Routed" && b._tag === "Routed" && a.rank === b.rank // => true
 * b._tag === "Routed" && [...b.explanation.scores!].sort() // => [0, 2]
 * ```
 *
 * @category dynamo
 * @since 0.2.0
 */
export const makeDynamoKvPolicy = (o: DynamoKvPolicyOptions): Policy<PeerState<PrefixIndex>> => {
  const bs = o.blockSize ?? 512
  const config = o.config ?? {}
  return peerPolicy<PrefixIndex>({
    name: o.name ?? "dynamo/kv",
    seed: o.seed ?? 0,
    initExtra: () => emptyPrefixIndex(),
    decide: (l, index, request, _now, draw) => {
      const hashes = request.prefixHashes ?? []
      const isl = request.inputLength
      const overlap = overlapBlocks(index, hashes, l.dpSize)
      const ranks = candidateRanks(l, []).ranks
      const workers: Array<DynamoWorker> = ranks.map((i) => ({
        workerId: 0,
        dpRank: i,
        load: {
          activePrefillTokens: l.tokens[i]!,
          activeDecodeBlocks: l.blocks[i]!,
          additionalActiveBlocks: 0,
          activeRequests: l.requests[i]!
        },
        overlap: { deviceBlocks: overlap[i]!, effectiveCachedTokens: Math.min(overlap[i]! * bs, isl) }
      }))
      const pin = request.routedDpRank
      if (
        pin !== undefined &&
        !(Number.isInteger(pin) && pin >= 0 && pin < l.dpSize && l.status[pin] === true)
      )
        return policyError("InvalidRoutedRank", `routedDpRank ${pin} is not a healthy rank`, "routedDpRank")
      const sel = selectDefaultWorker(
        workers,
        { islTokens: isl, blockSize: bs, pinnedWorker: pin === undefined ? undefined : [0, pin] },
        config,
        draw
      )
      if (sel._tag === "DynamoSelectError") return policyError("AllRanksUnavailable", sel.message, "status")
      const rank = ranks[sel.index]!
      const scores = new Array<number>(l.dpSize).fill(Number.POSITIVE_INFINITY)
      for (const c of sel.costs) scores[ranks[c.index]!] = c.cost
      const cached = Math.min(overlap[rank]! * bs, isl)
      return {
        rank,
        extra: hashes.length === 0 ? index : addPrefix(index, hashes, String(rank)),
        tokens: Math.max(0, isl - cached),
        blocks: Math.ceil(isl / bs),
        explanation: {
          scores,
          tieBreak: sel.how === "argmin" ? "reservoir (uniform among equal costs)" : sel.how,
          details: {
            scores: "Dynamo worker_logit (lower wins); Infinity = not a candidate",
            overlapBlocks: overlap,
            probabilities: sel.probabilities
          }
        }
      }
    }
  })
}

/**
 * Dynamo's vLLM-style DP selector as a `Policy` over DP ranks (pairs `(0, rank)`): counts
 * `(waiting, running)` per rank are set from each known `RankLoad` row (`set_counts`:
 * `numWaitingReqs`, `numRunningReqs`), a route admits (`waiting + 1`), a finish applies `running`
 * then `finish` (the request left the queue and completed); score `waiting * W + running`, rotating
 * start, first minimum in rotated order.
 *
 * - **Unknown / absent**: a rank with no usable row would score 0 upstream (never counted). Here it is
 *   left out while a rank with known counts exists.
 * - **Unhealthy** ranks are not candidates; `routedDpRank` pins (an unhealthy or out-of-range pin is
 *   an error). No randomness.
 *
 * Upstream: ai-dynamo/dynamo `lib/kv-router/src/scheduling/selector_vllm.rs` at
 * 35c71e98bcfe6a6161e746091dfed3341786c1bd.
 *
 * @example
 * ```ts
 * import { Dynamo } from "@loadledger/policies"
 * const p = Dynamo.makeDynamoVllmPolicy({})
 * const s = p.observe(p.init(2), [
 *   { dpRank: 0, timestamp: 0, numWaitingReqs: 1, numRunningReqs: 0, numTotalTokens: 0 },
 *   { dpRank: 1, timestamp: 0, numWaitingReqs: 0, numRunningReqs: 3, numTotalTokens: 0 }
 * ], 0)
 * const r = p.route(s, { requestId: "a", inputLength: 10 }, 0)
 * r._tag === "Routed" && r.rank // => 1
 * ```
 *
 * @category dynamo
 * @since 0.2.0
 */
export const makeDynamoVllmPolicy = (o: {
  readonly name?: string | undefined
  readonly waitingWeight?: number | undefined
}): Policy<PeerState<VllmSelectorState>> =>
  peerPolicy<VllmSelectorState>({
    name: o.name ?? "dynamo/vllm-style",
    seed: 0,
    initExtra: () => vllmSelectorInit(o.waitingWeight ?? 4),
    onObserve: (s, l) => {
      let out = s
      l.loads.forEach((row, i) => {
        if (
          row !== undefined &&
          row.unknown === undefined &&
          row.numWaitingReqs !== undefined &&
          row.numRunningReqs !== undefined
        )
          out = vllmSetCounts(out, 0, i, row.numWaitingReqs, row.numRunningReqs)
      })
      return out
    },
    onFinish: (s, released) => {
      let out = s
      for (const r of released) out = vllmHook(vllmHook(out, "running", 0, r.rank), "finish", 0, r.rank)
      return out
    },
    decide: (l, s, request) => {
      const pin = request.routedDpRank
      if (pin !== undefined) {
        if (!(Number.isInteger(pin) && pin >= 0 && pin < l.dpSize && l.status[pin] === true))
          return policyError("InvalidRoutedRank", `routedDpRank ${pin} is not a healthy rank`, "routedDpRank")
        return {
          rank: pin,
          extra: vllmHook(s, "admit", 0, pin),
          tokens: 0,
          explanation: { tieBreak: "pinned", details: { pinned: true } }
        }
      }
      const known = l.loads.map(
        (r) =>
          r !== undefined &&
          r.unknown === undefined &&
          r.numWaitingReqs !== undefined &&
          r.numRunningReqs !== undefined
      )
      const healthy = candidateRanks(l, []).ranks
      const ranks = healthy.some((i) => known[i]) ? healthy.filter((i) => known[i]) : healthy
      const sel = vllmSelect(
        s,
        ranks.map((i) => [0, i] as const)
      )
      if (sel === undefined) return policyError("AllRanksUnavailable", "no candidate rank", "status")
      const rank = ranks[sel.index]!
      const scores = new Array<number>(l.dpSize).fill(Number.POSITIVE_INFINITY)
      ranks.forEach((r, j) => {
        scores[r] = sel.scores[j]!
      })
      return {
        rank,
        extra: vllmHook(sel.state, "admit", 0, rank),
        tokens: 0,
        explanation: {
          scores,
          tieBreak: `first minimum from rotating start ${sel.startIndexUsed}`,
          details: { scores: "waiting * W + running (lower wins); Infinity = not a candidate" }
        }
      }
    }
  })
