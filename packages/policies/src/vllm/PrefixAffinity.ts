/**
 * vLLM's data-parallel balancer with two tie-breaks other than the registered rotating one:
 * the prefix-affinity tie-break proposed in vllm-project/vllm#52464 (`makeVllmPrefixAffinity`)
 * and the fixed scan start that #47420 replaced (`makeVllmFixedStart`). Both wrap `makeVllmLb`:
 * scores, local bumps, in-flight counts and the unknown-row rules are that policy's.
 *
 * @since 0.7.0
 */
import type { Policy, RouteRequest, RouteResult } from "../Policy.js"
import { type AffinityLru, emptyLru, lruGet, lruSet, lruSize } from "./internal/affinityLru.js"
import type { VllmClientOptions } from "./VllmLb.js"
import { makeVllmLb } from "./VllmLbPolicy.js"
import type { VllmLbPolicyOptions, VllmLbPolicyState } from "./VllmLbPolicyTypes.js"

/**
 * Upstream's cap on remembered prefixes per front end, `PREFIX_AFFINITY_LRU_SIZE = 16 * 1024`
 * (vllm `vllm/v1/engine/core_client.py` as of #52464, read at commit `a9387c386b6e`).
 *
 * @example
 * ```ts
 * import { PREFIX_AFFINITY_LRU_SIZE } from "@loadledger/policies"
 * PREFIX_AFFINITY_LRU_SIZE // => 16384
 * ```
 *
 * @category vllm
 * @since 0.7.0
 */
export const PREFIX_AFFINITY_LRU_SIZE = 16 * 1024

/**
 * Options of `makeVllmPrefixAffinity`: the front end (`clientCount`, `clientIndex`), the engines'
 * KV `blockSize` in tokens (vLLM `--block-size`; default 16, vLLM's default) and the LRU's
 * `lruSize` (default {@link PREFIX_AFFINITY_LRU_SIZE}).
 *
 * @category vllm
 * @since 0.7.0
 */
export interface VllmPrefixAffinityOptions extends VllmClientOptions {
  readonly blockSize?: number | undefined
  readonly lruSize?: number | undefined
}

/**
 * State of `makeVllmPrefixAffinity`: the wrapped balancer's state and the remembered
 * prefix -> engine map (least recently written evicted first).
 *
 * @category vllm
 * @since 0.7.0
 */
export interface VllmPrefixAffinityState {
  readonly lb: VllmLbPolicyState
  readonly affinity: AffinityLru
}

/**
 * The affinity key of a request: its first `blockSize` token ids joined, or `undefined` when it
 * cannot hit the prefix cache (no `tokenIds`, or fewer than `blockSize` of them: a sub-block
 * prompt). Upstream hashes `(cache_salt, lora_id, tuple(tokens[:block_size]))`; a `RouteRequest`
 * has neither salt nor LoRA, so two requests differ in key exactly when their first block differs.
 *
 * @example
 * ```ts
 * import { vllmPrefixAffinityKey } from "@loadledger/policies"
 * vllmPrefixAffinityKey({ requestId: "a", inputLength: 3, tokenIds: [7, 8, 9] }, 2) // => "7,8"
 * vllmPrefixAffinityKey({ requestId: "b", inputLength: 1, tokenIds: [7] }, 2) // => undefined
 * ```
 *
 * @category vllm
 * @since 0.7.0
 */
export const vllmPrefixAffinityKey = (request: RouteRequest, blockSize: number): string | undefined => {
  const t = request.tokenIds
  if (t === undefined || t.length === 0 || t.length < blockSize) return undefined
  return t.slice(0, blockSize).join(",")
}

const positiveInt = (v: number | undefined, fallback: number): number =>
  v !== undefined && Number.isSafeInteger(v) && v >= 1 ? v : fallback

/**
 * vLLM's DP balancer with the prefix-affinity tie-break of **vllm-project/vllm#52464**
 * (proposed, open when read): each front end remembers which engine last served a prompt's first
 * KV block, and when that engine's score ties the least score it wins the tie; a lower score
 * still wins, unrelated ties still rotate (the scan start advances after every decision, as
 * #47420 made it), a pinned `routedDpRank` bypasses affinity and records nothing, a sub-block
 * prompt has no key. The engine chosen is remembered for the key after every unpinned decision.
 *
 * **When to use**: to ask whether #52464 would help a trace (issue #52463: rotating ties cost a
 * multi-turn DP deployment its prefix-cache hits), beside `vllm-kv-pressure` (the rotating
 * tie-break) and `vllm-kv-pressure-fixed-start` (before #47420).
 *
 * Errors: those of `makeVllmLb`. A `blockSize` or `lruSize` that is not an integer >= 1 falls back
 * to its default. Not modelled: upstream's elastic-EP scale-in check (an entry beyond the engine
 * count is ignored; here the engine count is fixed at `init`, and such an entry cannot arise) and
 * the streaming-input re-route of a request id already in flight.
 *
 * Reproduces `DPLBAsyncMPClient.get_core_engine_for_request` and `_prefix_affinity_key`
 * (vllm-project/vllm `vllm/v1/engine/core_client.py`, tests
 * `tests/v1/engine/test_dp_lb_prefix_affinity.py`, read at commit
 * `a9387c386b6eadae8f888f88bf7ff17746993e4c`, the head carrying #52464).
 *
 * @example
 * ```ts
 * import { makeVllmPrefixAffinity } from "@loadledger/policies"
 * const p = makeVllmPrefixAffinity({ blockSize: 2 })
 * const idle = [0, 1, 2, 3].map((dpRank) => ({ dpRank, numWaitingReqs: 0, numRunningReqs: 0, numTotalTokens: 0, kvCacheUsage: 0 }))
 * const turn = (id: string, s: ReturnType<typeof p.init>) =>
 *   p.route(s, { requestId: id, inputLength: 4, tokenIds: [1, 2, 3, 4] }, 0)
 * const a = turn("t0", p.init(4))
 * // the turn finishes and the coordinator publishes idle engines: every score ties again
 * const b = a._tag === "Routed" ? turn("t1", p.observe(p.finish(a.state, ["t0"], 0), idle, 0)) : a
 * // the rotating start now points at engine 1, but the tie goes to the first turn's engine
 * a._tag === "Routed" && b._tag === "Routed" && [a.rank, b.rank] // => [0, 0]
 * ```
 *
 * @category vllm
 * @since 0.7.0
 */
export const makeVllmPrefixAffinity = (
  options: VllmPrefixAffinityOptions = {}
): Policy<VllmPrefixAffinityState> => {
  const inner = makeVllmLb({ clientCount: options.clientCount, clientIndex: options.clientIndex })
  const blockSize = positiveInt(options.blockSize, 16)
  const capacity = positiveInt(options.lruSize, PREFIX_AFFINITY_LRU_SIZE)
  return {
    name: "vllm-prefix-affinity",
    init: (dpSize) => ({ lb: inner.init(dpSize), affinity: emptyLru(capacity) }),
    observe: (s, loads, now) => {
      const lb = inner.observe(s.lb, loads, now)
      return lb === s.lb ? s : { lb, affinity: s.affinity }
    },
    route: (s, request, now): RouteResult<VllmPrefixAffinityState> => {
      const first = inner.route(s.lb, request, now)
      if (first._tag === "PolicyError") return first.state === undefined ? first : { ...first, state: s }
      if (request.routedDpRank !== undefined)
        return { ...first, state: { lb: first.state, affinity: s.affinity } }
      const key = vllmPrefixAffinityKey(request, blockSize)
      const remembered = key === undefined ? undefined : lruGet(s.affinity, key)
      const scores = first.explanation?.scores
      let routed = first
      if (
        remembered !== undefined &&
        remembered !== first.rank &&
        remembered < s.lb.healthy.length &&
        s.lb.healthy[remembered] === true &&
        scores !== undefined &&
        scores[remembered] === scores[first.rank]
      ) {
        // the same decision with only the remembered engine open: the same bump, rotation and count
        const only = inner.setStatus(
          s.lb,
          s.lb.healthy.map((_, r) => r === remembered)
        )
        const again = inner.route(only, request, now)
        if (again._tag === "Routed")
          routed = {
            _tag: "Routed",
            rank: again.rank,
            state: inner.setStatus(again.state, s.lb.healthy),
            explanation: {
              ...first.explanation,
              tieBreak: "prefix affinity: the engine that last served this first block, on a tie"
            }
          }
      }
      const affinity = key === undefined ? s.affinity : lruSet(s.affinity, key, routed.rank)
      const explanation = {
        ...routed.explanation,
        details: {
          ...routed.explanation?.details,
          affinityEngine: remembered,
          affinitySize: lruSize(affinity)
        }
      }
      return { _tag: "Routed", rank: routed.rank, state: { lb: routed.state, affinity }, explanation }
    },
    finish: (s, ids, now) => {
      const lb = inner.finish(s.lb, ids, now)
      return lb === s.lb ? s : { lb, affinity: s.affinity }
    },
    setStatus: (s, status) => {
      const lb = inner.setStatus(s.lb, status)
      return lb === s.lb ? s : { lb, affinity: s.affinity }
    }
  }
}

/**
 * vLLM's DP balancer with the fixed scan start it had before **vllm-project/vllm#47420**
 * (merged 2026-07): every scan starts at `floor(N * clientIndex / clientCount)`, so a tie goes to
 * the same engine for one front end. Everything else is `makeVllmLb`'s (the registered score,
 * which this module has not checked against the v0.23.0 release; only the tie-break is
 * versioned here). Users of v0.23.0 and earlier run it; issue #52463 measured its
 * 81.6% prefix-cache hit rate against the rotation's 8-53%.
 *
 * **When to use**: to compare the tie-breaks on a trace (`vllm-kv-pressure` rotates).
 *
 * @example
 * ```ts
 * import { makeVllmFixedStart } from "@loadledger/policies"
 * const p = makeVllmFixedStart()
 * const a = p.route(p.init(4), { requestId: "a", inputLength: 1 }, 0)
 * const b = a._tag === "Routed" ? p.route(p.finish(a.state, ["a"], 0), { requestId: "b", inputLength: 1 }, 0) : a
 * // the bump of "a" is still on engine 0, so "b" goes to 1; the scan start stays 0
 * b._tag === "Routed" && [b.rank, b.state.lb.engStartIndex] // => [1, 0]
 * ```
 *
 * @category vllm
 * @since 0.7.0
 */
export const makeVllmFixedStart = (options: VllmLbPolicyOptions = {}): Policy<VllmLbPolicyState> => {
  const inner = makeVllmLb(options)
  return {
    ...inner,
    name: "vllm-kv-pressure-fixed-start",
    route: (s, request, now) => {
      const r = inner.route(s, request, now)
      if (r._tag === "PolicyError") return r
      // undo the rotation: the scan start the state had before this decision
      const lb = { ...r.state.lb, engStartIndex: s.lb.engStartIndex }
      return { ...r, state: { ...r.state, lb } }
    }
  }
}
