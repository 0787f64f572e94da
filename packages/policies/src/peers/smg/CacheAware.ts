/**
 * SMG `cache_aware` (HTTP mode, approximate string tree). Upstream: lightseekorg/smg
 * `model_gateway/src/policies/cache_aware.rs` and `crates/kv_index/src/string_tree.rs`,
 * commit 73da68ca9472bbc0ff5f63d31a8a21fbb8696359.
 *
 * @since 0.2.0
 */
import { effectiveTokenUsage, healthyIndices, selected } from "./internal/common.js"
import { emptyTree, insertTree, matchTree, type TreeNode } from "./internal/StringTree.js"
import type { SmgLoadReport, SmgSelected, SmgWorker } from "./Types.js"

/**
 * `CacheAwareConfig` (thresholds are f32 upstream; compared here through `Math.fround`):
 * `cacheThreshold` 0.5, `balanceAbsThreshold` 32 (`null` = `usize::MAX`, never), `balanceRelThreshold`
 * 1.1, `balanceTokenUsageThreshold` 1.0 and `overloadTokenUsageThreshold` 1.0 (both off at 1.0).
 *
 * @category smg
 * @since 0.2.0
 */
export interface SmgCacheAwareConfig {
  readonly cacheThreshold?: number | undefined
  readonly balanceAbsThreshold?: number | null | undefined
  readonly balanceRelThreshold?: number | undefined
  readonly balanceTokenUsageThreshold?: number | undefined
  readonly overloadTokenUsageThreshold?: number | undefined
}

/**
 * State of SMG `cache_aware`: the approximate tree (opaque) and the latest load report per url
 * (the `WorkerMonitor` watch channel: replaced per poll, not merged).
 *
 * @category smg
 * @since 0.2.0
 */
export interface SmgCacheAwareState {
  readonly tree: unknown
  readonly reports: ReadonlyMap<string, SmgLoadReport>
}

/**
 * Fresh `cache_aware` state: `init_workers` inserts `""` for every worker url, so the root holds
 * them all; `reports` is the first poll (may be empty).
 *
 * **When to use**: before the first {@link smgCacheAwareSelect}.
 *
 * @example
 * ```ts
 * import { Smg } from "@loadledger/policies"
 * Smg.smgCacheAwareInit(["http://a:8000"]).reports.size // => 0
 * ```
 *
 * @category smg
 * @since 0.2.0
 */
export const smgCacheAwareInit = (
  urls: ReadonlyArray<string>,
  reports: ReadonlyMap<string, SmgLoadReport> = new Map()
): SmgCacheAwareState => ({ tree: emptyTree(urls), reports })

/**
 * SMG `cache_aware` `select_worker`. Imbalance gate first: over healthy workers, the request-count
 * gate (`max - min > abs` and `max > min * rel`, f32) or, when some healthy worker has a report,
 * the KV gates (max usage > overload, or usage spread > balance) send the request to the
 * `(load, processed_requests, index)` minimum. Otherwise the tree match rate
 * `matched chars / input chars` (f32) above `cacheThreshold` (strict) goes to the match node's
 * tenant (if it is no longer healthy: `h[0]`, no insert, no `processed` bump), else to the minimum.
 * The pick's text is inserted. `details`: `branch`, `matchedCharCount`, `inputCharCount`,
 * `imbalanceTrigger` (`count` | `overload` | `kv_spread`).
 *
 * **When to use**: replaying SMG's cache-aware routing; `smg/cache-aware` wraps it.
 *
 * @example
 * ```ts
 * import { Smg } from "@loadledger/policies"
 * const w = (url: string) => ({ url, healthy: true, load: 0, processedRequests: 0, circuitBreakerCanExecute: true })
 * const ws = [w("a"), w("b")]
 * const first = Smg.smgCacheAwareSelect(Smg.smgCacheAwareInit(["a", "b"]), ws, "hello world")
 * first.details.branch // => "cache_miss_min_load"
 * Smg.smgCacheAwareSelect(first.state, ws, "hello").details.branch // => "cache_hit"
 * ```
 *
 * @category smg
 * @since 0.2.0
 */
export const smgCacheAwareSelect = (
  state: SmgCacheAwareState,
  workers: ReadonlyArray<SmgWorker>,
  text: string | undefined,
  config: SmgCacheAwareConfig = {}
): SmgSelected<SmgCacheAwareState> => {
  const f = Math.fround
  const h = healthyIndices(workers)
  if (h.length === 0) return selected(undefined, state, false, {})
  let minLoad = Number.POSITIVE_INFINITY
  let maxLoad = 0
  let minIdx = h[0]!
  let maxUsage = Number.NEGATIVE_INFINITY
  let minUsage = Number.POSITIVE_INFINITY
  let anyReport = false
  for (const i of h) {
    const w = workers[i]!
    minLoad = Math.min(minLoad, w.load)
    maxLoad = Math.max(maxLoad, w.load)
    const m = workers[minIdx]!
    if (w.load < m.load || (w.load === m.load && w.processedRequests < m.processedRequests)) minIdx = i
    const r = state.reports.get(w.url)
    if (r !== undefined) {
      anyReport = true
      const u = effectiveTokenUsage(r)
      maxUsage = Math.max(maxUsage, u)
      minUsage = Math.min(minUsage, u)
    }
  }
  const abs = config.balanceAbsThreshold === undefined ? 32 : config.balanceAbsThreshold
  const rel = config.balanceRelThreshold ?? 1.1
  const countGate =
    abs !== null && Math.max(maxLoad - minLoad, 0) > abs && f(maxLoad) > f(f(minLoad) * f(rel))
  const overload = anyReport && maxUsage > f(config.overloadTokenUsageThreshold ?? 1.0)
  const spread = anyReport && maxUsage - minUsage > f(config.balanceTokenUsageThreshold ?? 1.0)
  const chars = Array.from(text ?? "")
  const tree = state.tree as TreeNode
  if (countGate || overload || spread) {
    const next = { tree: insertTree(tree, chars, workers[minIdx]!.url), reports: state.reports }
    return selected(minIdx, next, true, {
      branch: "imbalanced_min_load",
      imbalanceTrigger: countGate ? "count" : overload ? "overload" : "kv_spread",
      minLoad,
      maxLoad,
      maxUsage: anyReport ? maxUsage : undefined,
      minUsage: anyReport ? minUsage : undefined
    })
  }
  const { matched, tenant } = matchTree(tree, chars)
  const input = chars.length
  const rate = input === 0 ? 0 : f(f(matched) / f(input))
  const base = { matchedCharCount: matched, inputCharCount: input, matchRate: rate }
  let j = minIdx
  let branch = "cache_miss_min_load"
  if (rate > f(config.cacheThreshold ?? 0.5)) {
    const hit = h.find((i) => workers[i]!.url === tenant)
    if (hit === undefined)
      return selected(h[0], state, false, { ...base, branch: "cache_hit_tenant_unavailable", tenant })
    j = hit
    branch = "cache_hit"
  }
  const next = { tree: insertTree(tree, chars, workers[j]!.url), reports: state.reports }
  return selected(j, next, true, { ...base, branch })
}
