/**
 * vLLM's DP balancer with power-of-two choices above a small engine count, as proposed in
 * vllm-project/vllm#43279 (`makeVllmPowerOfTwo`). It wraps `makeVllmLb`: scores, local bumps,
 * in-flight counts, the rotating scan start and the unknown-row rules are that policy's.
 *
 * @since 0.7.0
 */

import type { Policy, RouteResult } from "../Policy.js"
import { type DrawSource, drawAt, type RngState, rngFromSeed, withDraws } from "../peers/Draws.js"
import type { VllmClientOptions } from "./VllmLb.js"
import { makeVllmLb } from "./VllmLbPolicy.js"
import type { VllmLbPolicyState } from "./VllmLbPolicyTypes.js"

/**
 * Upstream's engine count up to which the full scan is kept,
 * `DPLBAsyncMPClient._P2C_FULL_SCAN_MAX_ENGINES = 4` (vllm-project/vllm#43279, its tests
 * `tests/v1/engine/test_dplb_engine_selection.py` read at commit
 * `f4604886d88ccf4ecd634b54428c141a411a742d`).
 *
 * @example
 * ```ts
 * import { VLLM_P2C_FULL_SCAN_MAX_ENGINES } from "@loadledger/policies"
 * VLLM_P2C_FULL_SCAN_MAX_ENGINES // => 4
 * ```
 *
 * @category vllm
 * @since 0.7.0
 */
export const VLLM_P2C_FULL_SCAN_MAX_ENGINES = 4

/**
 * Options of `makeVllmPowerOfTwo`: the front end (`clientCount`, `clientIndex`), the `seed` of
 * the draws (default 0, mixed with `clientIndex` so front ends draw differently),
 * `fullScanMaxEngines` (default {@link VLLM_P2C_FULL_SCAN_MAX_ENGINES}) and, for vectors ported
 * from upstream's mocked `random.randrange`, `draws`: the values randrange returns, in call order
 * (`a`, then the raw `b`, per decision), each taken modulo its bound; a list that runs out reads 0.
 *
 * @category vllm
 * @since 0.7.0
 */
export interface VllmPowerOfTwoOptions extends VllmClientOptions {
  readonly seed?: number | undefined
  readonly fullScanMaxEngines?: number | undefined
  readonly draws?: ReadonlyArray<number> | undefined
}

/**
 * State of `makeVllmPowerOfTwo`: the wrapped balancer's state, the generator state `rng` and
 * the number of draws taken so far (`drawn`, which indexes a fixed `draws` list).
 *
 * @category vllm
 * @since 0.7.0
 */
export interface VllmPowerOfTwoState {
  readonly lb: VllmLbPolicyState
  readonly rng: RngState
  readonly drawn: number
}

/**
 * The ordered pair of distinct engines upstream's two draws name: `a = randrange(n)`,
 * `b = randrange(n - 1)`, then `b + 1` when `b >= a`, so every ordered distinct pair is equally
 * likely (`n >= 2`; draws outside their bound are taken modulo it).
 *
 * @example
 * ```ts
 * import { vllmP2cPair } from "@loadledger/policies"
 * vllmP2cPair(8, 2, 6) // => [2, 7]
 * vllmP2cPair(8, 3, 3) // => [3, 4]
 * vllmP2cPair(8, 5, 1) // => [5, 1]
 * ```
 *
 * @category vllm
 * @since 0.7.0
 */
export const vllmP2cPair = (n: number, drawA: number, drawB: number): readonly [number, number] => {
  const a = ((drawA % n) + n) % n
  const raw = (((drawB % (n - 1)) + (n - 1)) % (n - 1)) | 0
  return [a, raw >= a ? raw + 1 : raw]
}

const positiveInt = (v: number | undefined, fallback: number): number =>
  v !== undefined && Number.isSafeInteger(v) && v >= 1 ? v : fallback

/**
 * vLLM's DP balancer with the power-of-two-choices engine selection of **vllm-project/vllm#43279**
 * (proposed, open when read): up to `fullScanMaxEngines` (4) engines the full scan is kept
 * unchanged (`vllm-kv-pressure`'s decision, draws untouched); above it, two distinct engines are
 * drawn uniformly (`vllmP2cPair`) and the one with the lower score wins, the first drawn on a tie
 * (`score_a <= score_b`). The chosen engine gets the same local bump and in-flight entry as the
 * full scan gives; a pinned `routedDpRank` bypasses the draw and takes no draws.
 *
 * **Score**: the PR, read on its May 2026 base, compares `waiting * 4 + running`; here the pair is
 * compared on the registered `vllm-kv-pressure` score (the one current `main` scans with), so the
 * proposal is measured against the balancer users run. Both are increasing in waiting and
 * running counts; every ported vector gives the same engine under either.
 *
 * **Unhealthy engines** (loadledger's extension; upstream has no per-engine health): the two are
 * drawn among the healthy engines (positions in the healthy list, so with every engine healthy the
 * draws are upstream's); one healthy engine takes the request without a draw.
 *
 * **When to use**: to ask whether #43279 would change balance on a large-DP trace (it trades the
 * O(N) scan for O(1) and gives up picking the global least), beside `vllm-kv-pressure`.
 *
 * Errors: those of `makeVllmLb`. A `fullScanMaxEngines` that is not an integer >= 1 falls back to 4.
 *
 * Reproduces `DPLBAsyncMPClient._select_engine_by_load` as its tests specify it
 * (vllm-project/vllm `tests/v1/engine/test_dplb_engine_selection.py` at commit
 * `f4604886d88ccf4ecd634b54428c141a411a742d`, and the PR description); the PR's
 * `core_client.py` at that commit is not in the stored index, so the draw-to-pair mapping and the
 * tie rule are taken from the tests' stated contract (`a = randrange(N)`, `b = randrange(N - 1)`,
 * `b += 1 if b >= a`, `score_a <= score_b` keeps `a`).
 *
 * @example
 * ```ts
 * import { makeVllmPowerOfTwo } from "@loadledger/policies"
 * // 8 engines, engine i has i waiting: the draws name engines 2 and 7, and 2 is less loaded
 * const p = makeVllmPowerOfTwo({ draws: [2, 6] })
 * const loads = [0, 1, 2, 3, 4, 5, 6, 7].map((i) => ({ dpRank: i, numWaitingReqs: i, numRunningReqs: 0, numTotalTokens: 0, kvCacheUsage: 0 }))
 * const r = p.route(p.observe(p.init(8), loads, 0), { requestId: "a", inputLength: 1 }, 0)
 * r._tag === "Routed" && r.rank // => 2
 * ```
 *
 * @category vllm
 * @since 0.7.0
 */
export const makeVllmPowerOfTwo = (options: VllmPowerOfTwoOptions = {}): Policy<VllmPowerOfTwoState> => {
  const inner = makeVllmLb({ clientCount: options.clientCount, clientIndex: options.clientIndex })
  const fullScanMax = positiveInt(options.fullScanMaxEngines, VLLM_P2C_FULL_SCAN_MAX_ENGINES)
  const clientIndex = Number.isSafeInteger(options.clientIndex) ? (options.clientIndex as number) : 0
  const seed = ((options.seed ?? 0) + Math.imul(clientIndex, 0x9e3779b1)) | 0
  const fixed = options.draws
  const with2 = (s: VllmPowerOfTwoState, lb: VllmLbPolicyState): VllmPowerOfTwoState =>
    lb === s.lb ? s : { lb, rng: s.rng, drawn: s.drawn }
  const two = (
    s: VllmPowerOfTwoState,
    n: number
  ): { readonly pair: readonly [number, number]; readonly rng: RngState } => {
    if (fixed !== undefined) {
      const d: DrawSource = fixed
      return { pair: vllmP2cPair(n, drawAt(d, s.drawn, n), drawAt(d, s.drawn + 1, n - 1)), rng: s.rng }
    }
    const { value, rng } = withDraws(s.rng, (draw) => vllmP2cPair(n, draw(n), draw(n - 1)))
    return { pair: value, rng }
  }
  return {
    name: "vllm-power-of-two",
    init: (dpSize) => ({ lb: inner.init(dpSize), rng: rngFromSeed(seed), drawn: 0 }),
    observe: (s, loads, now) => with2(s, inner.observe(s.lb, loads, now)),
    route: (s, request, now): RouteResult<VllmPowerOfTwoState> => {
      const first = inner.route(s.lb, request, now)
      if (first._tag === "PolicyError") return first.state === undefined ? first : { ...first, state: s }
      const healthy = s.lb.healthy
      const h: Array<number> = []
      for (let r = 0; r < healthy.length; r++) if (healthy[r] === true) h.push(r)
      const scores = first.explanation?.scores
      if (
        request.routedDpRank !== undefined ||
        healthy.length <= fullScanMax ||
        h.length < 2 ||
        scores === undefined
      )
        return { ...first, state: with2(s, first.state) }
      const { pair, rng } = two(s, h.length)
      const a = h[pair[0]]!
      const b = h[pair[1]]!
      const chosen = scores[a]! <= scores[b]! ? a : b
      // the same decision with only the chosen engine open: the same bump, rotation and count
      const again = inner.route(
        inner.setStatus(
          s.lb,
          healthy.map((_, r) => r === chosen)
        ),
        request,
        now
      )
      if (again._tag !== "Routed") return { ...again, state: s }
      return {
        _tag: "Routed",
        rank: again.rank,
        state: { lb: inner.setStatus(again.state, healthy), rng, drawn: s.drawn + 2 },
        explanation: {
          ...first.explanation,
          tieBreak: "power of two choices: the lower score of two drawn engines, the first drawn on a tie",
          details: { ...first.explanation?.details, candidates: [a, b] }
        }
      }
    },
    finish: (s, ids, now) => with2(s, inner.finish(s.lb, ids, now)),
    setStatus: (s, status) => with2(s, inner.setStatus(s.lb, status))
  }
}
