/**
 * AIBrix's prefix-cache router (`routeOriginal`, local indexer, character tokenizer): block hashes of
 * the prompt bytes, the running-request imbalance gate, the match over candidates, the mean + k*std
 * load bound, and the least-request fallback.
 *
 * @since 0.2.0
 */
import { type DrawSource, drawAt } from "../Draws.js"
import {
  addPrefix,
  aibrixPrefixHashes,
  emptyPrefixIndex,
  matchPrefix,
  type PrefixIndex
} from "./internal/prefixIndex.js"
import { type AibrixPod, gauge } from "./Pods.js"
import { routeStrategy } from "./Strategies.js"

/**
 * The prefix-cache router's knobs. Defaults are the code's (not `prefix_cache_readme.md`'s):
 * imbalance 8 requests, std factor 1, block 4 bytes.
 *
 * @category aibrix
 * @since 0.2.0
 */
export interface AibrixPrefixConfig {
  readonly podRunningRequestImbalanceAbsCount?: number | undefined
  readonly standardDeviationFactor?: number | undefined
  readonly prefixCacheBlockSize?: number | undefined
}

/**
 * The local prefix index (block hash -> pods that served it), persistent: every update returns a new
 * value. Hash keys are strings (decimal XXH64 values, or the trace's own block ids).
 *
 * @category aibrix
 * @since 0.2.0
 */
export type AibrixPrefixIndex = PrefixIndex

/**
 * An empty prefix index.
 *
 * @example
 * ```ts
 * import { Aibrix } from "@loadledger/policies"
 * Aibrix.aibrixPrefixIndex() !== undefined // => true
 * ```
 *
 * @category aibrix
 * @since 0.2.0
 */
export const aibrixPrefixIndex = (): AibrixPrefixIndex => emptyPrefixIndex()

/**
 * `AddPrefix(hashes, model, pod)`: record that `pod` now holds every block of `hashes`.
 *
 * @example
 * ```ts
 * import { Aibrix } from "@loadledger/policies"
 * const ix = Aibrix.aibrixAddPrefix(Aibrix.aibrixPrefixIndex(), ["1", "2"], "p1")
 * Aibrix.aibrixScorer("prefix-cache", [{ id: "p1", metrics: {} }], ["1", "2"], ix)?.scores // => [100]
 * ```
 *
 * @category aibrix
 * @since 0.2.0
 */
export const aibrixAddPrefix = (
  index: AibrixPrefixIndex,
  hashes: ReadonlyArray<string>,
  pod: string
): AibrixPrefixIndex => addPrefix(index, hashes, pod)

/**
 * Block hashes of a prompt as AIBrix's local indexer computes them: the UTF-8 bytes in full blocks of
 * `blockSize` bytes (the trailing partial block is dropped), chained `h = XXH64(seed; LE64(parent) ++
 * block)` from `parent = seed`, as decimal strings. Upstream's seed is 0 with state sync on, random
 * per process otherwise; it never changes a decision.
 *
 * Upstream: vllm-project/aibrix `pkg/utils/prefixcacheindexer/hash.go` (`getPrefixHashes`) at
 * e3e10f9e4aebe9aac5e7d992fb87d2648e01628b; XXH64 from `@node-rs/xxhash`.
 *
 * @example
 * ```ts
 * import { Aibrix } from "@loadledger/policies"
 * Aibrix.aibrixPromptHashes("abcdefgh", 4) // => ["16464934435465292544", "15316134462644996939"]
 * Aibrix.aibrixPromptHashes("abc", 4) // => []
 * ```
 *
 * @category aibrix
 * @since 0.2.0
 */
export const aibrixPromptHashes = (text: string, blockSize: number, seed = 0n): Array<string> =>
  aibrixPrefixHashes(new TextEncoder().encode(text), blockSize, seed).map(String)

/**
 * A prefix-cache decision: the pod (index into the ready list), how it was selected
 * (`prefix_match`, `prefix_match_skipped`, `least_request_fallback`), whether the imbalance gate
 * fired, the matched pods with their match percentage, the index after `AddPrefix`, draws used.
 *
 * @category aibrix
 * @since 0.2.0
 */
export interface AibrixPrefixRouted {
  readonly _tag: "AibrixPrefixRouted"
  readonly index: number
  readonly selection: "prefix_match" | "prefix_match_skipped" | "least_request_fallback"
  readonly loadImbalanced: boolean
  readonly matchedPods: ReadonlyMap<string, number>
  readonly prefixIndex: AibrixPrefixIndex
  readonly drawsUsed: number
}

/**
 * AIBrix prefix-cache `Route` over the ready pods with the prompt's block hashes: counts =
 * `int(realtime_num_requests_running)` (missing 0); if `max - min > imbalance`, only the pods at the
 * minimum are match candidates; the match percentages per pod; when some pod matched, the matched
 * pods sorted by (pct desc, count asc) give key groups, and the first group whose count is at most
 * `mean + factor * std` (sample std of the counts over all ready pods) is drawn from (`draws[0]`, in
 * list order); otherwise least-request over every ready pod. Then `AddPrefix(hashes, winner)`.
 *
 * **When to use**: replaying AIBrix's prefix-cache routing; the `aibrix/prefix-cache` policy feeds it
 * the trace's block ids as hashes.
 *
 * Upstream: vllm-project/aibrix `pkg/plugins/gateway/algorithms/prefix_cache.go` (`routeOriginal`) at
 * e3e10f9e4aebe9aac5e7d992fb87d2648e01628b.
 *
 * @example
 * ```ts
 * import { Aibrix } from "@loadledger/policies"
 * const pods = [{ id: "p1", metrics: {} }, { id: "p2", metrics: {} }]
 * const h = Aibrix.aibrixPromptHashes("abcdefgh", 4)
 * const a = Aibrix.routePrefixCache(pods, h, Aibrix.aibrixPrefixIndex(), {}, [1])
 * a === undefined ? -1 : a.index // => 1
 * const b = Aibrix.routePrefixCache(pods, h, a!.prefixIndex, {}, [0])
 * b === undefined ? "" : b.selection // => "prefix_match"
 * b === undefined ? -1 : b.index // => 1
 * ```
 *
 * @category aibrix
 * @since 0.2.0
 */
export const routePrefixCache = (
  pods: ReadonlyArray<AibrixPod>,
  hashes: ReadonlyArray<string>,
  index: AibrixPrefixIndex,
  config: AibrixPrefixConfig,
  draws: DrawSource
): AibrixPrefixRouted | undefined => {
  if (pods.length === 0) return undefined
  const imbalance = config.podRunningRequestImbalanceAbsCount ?? 8
  const factor = config.standardDeviationFactor ?? 1
  const counts = pods.map((p) => Math.trunc(gauge(p, "realtime_num_requests_running") ?? 0))
  const mn = Math.min(...counts)
  const mx = Math.max(...counts)
  const loadImbalanced = mx - mn > imbalance
  const cands = pods.filter((_, i) => !loadImbalanced || counts[i] === mn).map((p) => p.id)
  const matched = matchPrefix(index, hashes, cands)
  const finish = (
    i: number,
    selection: AibrixPrefixRouted["selection"],
    drawsUsed: number
  ): AibrixPrefixRouted => ({
    _tag: "AibrixPrefixRouted",
    index: i,
    selection,
    loadImbalanced,
    matchedPods: matched,
    prefixIndex: hashes.length === 0 ? index : addPrefix(index, hashes, pods[i]!.id),
    drawsUsed
  })
  if (matched.size > 0) {
    let sum = 0
    for (const c of counts) sum += c
    const mean = sum / counts.length
    let sq = 0
    for (const c of counts) sq += (c - mean) * (c - mean)
    const std = counts.length <= 1 ? 0 : Math.sqrt(sq / (counts.length - 1))
    const bound = mean + factor * std
    const m = pods
      .map((p, i) => ({ i, pct: matched.get(p.id), count: counts[i]! }))
      .filter((x) => x.pct !== undefined)
    m.sort((a, b) => b.pct! - a.pct! || a.count - b.count || a.i - b.i)
    for (let g = 0; g < m.length; ) {
      let e = g
      while (e < m.length && m[e]!.pct === m[g]!.pct && m[e]!.count === m[g]!.count) e++
      if (m[g]!.count <= bound) {
        return finish(m[g + drawAt(draws, 0, e - g)]!.i, "prefix_match", 1)
      }
      g = e
    }
  }
  const lr = routeStrategy("least-request", pods, draws)
  const i = lr._tag === "AibrixRouted" ? lr.index : 0
  return finish(i, matched.size > 0 ? "prefix_match_skipped" : "least_request_fallback", 1)
}
