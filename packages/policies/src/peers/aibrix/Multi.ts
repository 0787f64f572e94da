/**
 * AIBrix's weighted multi-strategy router (`"a:2,b:1"` mixes, `router.go`): min-max normalised
 * scores per strategy, summed with weight / total weight, highest total wins.
 *
 * @since 0.2.0
 */
import { matchPrefix, type PrefixIndex } from "./internal/prefixIndex.js"
import type { AibrixPod } from "./Pods.js"
import { type AibrixScoredStrategy, strategyScores } from "./Strategies.js"

/**
 * One item of a mix: strategy name and integer weight.
 *
 * @category aibrix
 * @since 0.2.0
 */
export interface AibrixMixItem {
  readonly name: string
  readonly weight: number
}

/**
 * Parse a routing-strategy string the way `ParseMultiRouterConfig` does: split on `,`, trim, default
 * weight 1, weights must be integers in [0, 1000000], weight 0 drops the item; `pd` or `slo*`
 * anywhere means only that strategy. An invalid weight is an error value naming the item.
 *
 * **When to use**: reading an AIBrix `routing-strategy` header or option.
 *
 * Upstream: vllm-project/aibrix `pkg/plugins/gateway/algorithms/router.go` at
 * e3e10f9e4aebe9aac5e7d992fb87d2648e01628b.
 *
 * @example
 * ```ts
 * import { Aibrix } from "@loadledger/policies"
 * Aibrix.parseAibrixMix("least-request:2, throughput") // => [{ name: "least-request", weight: 2 }, { name: "throughput", weight: 1 }]
 * Aibrix.parseAibrixMix("a:0,b:3") // => [{ name: "b", weight: 3 }]
 * Aibrix.parseAibrixMix("a:x")
 * // => { _tag: "AibrixMixError", message: "weight of \"a:x\" is not an integer in [0, 1000000]" }
 * ```
 *
 * @category aibrix
 * @since 0.2.0
 */
export const parseAibrixMix = (
  spec: string
): ReadonlyArray<AibrixMixItem> | { readonly _tag: "AibrixMixError"; readonly message: string } => {
  const items: Array<AibrixMixItem> = []
  for (const raw of spec.split(",")) {
    const part = raw.trim()
    if (part === "") continue
    const k = part.indexOf(":")
    const name = (k < 0 ? part : part.slice(0, k)).trim()
    const w = k < 0 ? "1" : part.slice(k + 1).trim()
    if (!/^\d+$/.test(w) || Number(w) > 1_000_000)
      return { _tag: "AibrixMixError", message: `weight of "${part}" is not an integer in [0, 1000000]` }
    if (name === "pd" || name.startsWith("slo")) return [{ name, weight: 1 }]
    if (Number(w) > 0) items.push({ name, weight: Number(w) })
  }
  return items
}

/**
 * How a strategy in a mix scores the pods: lower is better (`least`) or higher (`most`), and the raw
 * score per pod (`NaN` or `undefined` = unscored).
 *
 * @category aibrix
 * @since 0.2.0
 */
export interface AibrixScorer {
  readonly polarity: "least" | "most"
  readonly scores: ReadonlyArray<number | undefined>
}

/**
 * The scorer of a named AIBrix strategy for a mix: the metric strategies (`least`), and
 * `prefix-cache` (`most`: the match percentage over every ready pod, without the imbalance gate,
 * every pod scored, 0 when none matched). `undefined` for a name with no scorer.
 *
 * @example
 * ```ts
 * import { Aibrix } from "@loadledger/policies"
 * const pods = [{ id: "p1", metrics: { realtime_num_requests_running: 3 } }]
 * Aibrix.aibrixScorer("least-request", pods, [], Aibrix.aibrixPrefixIndex())
 * // => { polarity: "least", scores: [3] }
 * Aibrix.aibrixScorer("nope", pods, [], Aibrix.aibrixPrefixIndex()) // => undefined
 * ```
 *
 * @category aibrix
 * @since 0.2.0
 */
export const aibrixScorer = (
  name: string,
  pods: ReadonlyArray<AibrixPod>,
  hashes: ReadonlyArray<string>,
  index: PrefixIndex
): AibrixScorer | undefined => {
  switch (name) {
    case "least-request":
    case "throughput":
    case "least-kv-cache":
    case "least-gpu-cache":
    case "least-busy-time":
    case "least-latency":
    case "load-balance":
    case "least-utilization":
      return { polarity: "least", scores: strategyScores(name as AibrixScoredStrategy, pods) }
    case "prefix-cache": {
      const m = matchPrefix(
        index,
        hashes,
        pods.map((p) => p.id)
      )
      return { polarity: "most", scores: pods.map((p) => m.get(p.id) ?? 0) }
    }
    default:
      return undefined
  }
}

/**
 * The multi-strategy decision: winner index, final score per pod, normalised score per strategy.
 *
 * @category aibrix
 * @since 0.2.0
 */
export interface AibrixMixRouted {
  readonly index: number
  readonly scores: ReadonlyArray<number>
  readonly normalized: ReadonlyArray<{ readonly name: string; readonly scores: ReadonlyArray<number> }>
}

/**
 * Combine scorers as AIBrix's multi-strategy router: per item, valid = scored and finite; normalised
 * 0 for invalid, 1 when max == min, `(max - s)/(max - min)` for least, `(s - min)/(max - min)` for
 * most; `final += norm * (weight / W)` in item order; the winner is the first pod that set the
 * running maximum, pods within 1e-9 of it tying (the first stays). No draws. One pod wins unscored.
 *
 * **When to use**: replaying an `"a:2,b:1"` mix once each item's scorer is known (see
 * {@link aibrixScorer}); a mix reduced to one item is the legacy router instead (upstream).
 *
 * Upstream: vllm-project/aibrix `pkg/plugins/gateway/algorithms/router.go` (`scoreAndRank`) at
 * e3e10f9e4aebe9aac5e7d992fb87d2648e01628b.
 *
 * @example
 * ```ts
 * import { Aibrix } from "@loadledger/policies"
 * const r = Aibrix.routeAibrixMix(3, [{ name: "s1", weight: 1, scorer: { polarity: "most", scores: [10, 20, 30] } }])
 * r.index // => 2
 * r.scores // => [0, 0.5, 1]
 * ```
 *
 * @category aibrix
 * @since 0.2.0
 */
export const routeAibrixMix = (
  podCount: number,
  items: ReadonlyArray<AibrixMixItem & { readonly scorer: AibrixScorer }>
): AibrixMixRouted => {
  let total = 0
  for (const it of items) total += it.weight
  const final = new Array<number>(podCount).fill(0.0)
  const normalized: Array<{ name: string; scores: Array<number> }> = []
  for (const it of items) {
    const valid = it.scorer.scores.map((s) => s !== undefined && Number.isFinite(s))
    let mn = Number.POSITIVE_INFINITY
    let mx = Number.NEGATIVE_INFINITY
    it.scorer.scores.forEach((s, i) => {
      if (valid[i]) {
        mn = Math.min(mn, s!)
        mx = Math.max(mx, s!)
      }
    })
    const norm = it.scorer.scores.map((s, i) =>
      !valid[i]
        ? 0
        : mx === mn
          ? 1.0
          : it.scorer.polarity === "least"
            ? (mx - s!) / (mx - mn)
            : (s! - mn) / (mx - mn)
    )
    const share = it.weight / total
    for (let i = 0; i < podCount; i++) final[i] = final[i]! + norm[i]! * share
    normalized.push({ name: it.name, scores: norm })
  }
  let maxScore = -1.0
  let winner = 0
  for (let i = 0; i < podCount; i++) {
    const f = final[i]!
    if (Math.abs(f - maxScore) < 1e-9) continue
    if (f > maxScore) {
      maxScore = f
      winner = i
    }
  }
  return { index: winner, scores: final, normalized }
}
