/**
 * SMG `prefix_hash`, at two upstream versions. Upstream: smg-project/smg (formerly
 * lightseekorg/smg) `model_gateway/src/policies/prefix_hash.rs` and
 * `model_gateway/src/worker/hash_ring.rs`: the head f8daa8835a8b4419b53125a837aaab2b3ce895c3
 * (default), and release v1.9.0 (106ffacd6228a67920a5db58628f61751c7c49e2; its `prefix_hash.rs`
 * is the one of 73da68ca9472bbc0ff5f63d31a8a21fbb8696359, registered before).
 *
 * @since 0.2.0
 */
import { xxh3Hex } from "../internal/hashes.js"
import { selected } from "./internal/common.js"
import { ringLookup, ringOf } from "./internal/hashRing.js"
import type { SmgSelected, SmgWorker } from "./Types.js"

/**
 * `prefix_hash` tunables: `prefixTokenCount` (256), `loadFactor` (1.25), `hashRing` (true; false
 * = upstream's no-ring fallback, the least-loaded worker); since 0.7.0 `version` (`"f8daa883"`,
 * the smg-project/smg head, default; `"v1.9.0"`, the last release, still what a user of the
 * released gateway runs) and `balanceAbsThreshold` (10 requests; head only: PR #2150's absolute
 * margin of the overload check).
 *
 * @category smg
 * @since 0.2.0
 */
export interface SmgPrefixHashConfig {
  readonly prefixTokenCount?: number | undefined
  readonly loadFactor?: number | undefined
  readonly hashRing?: boolean | undefined
  /** @since 0.7.0 */
  readonly version?: "f8daa883" | "v1.9.0" | undefined
  /** @since 0.7.0 */
  readonly balanceAbsThreshold?: number | undefined
}

const enc = new TextEncoder()

/** A valid `x-smg-routing-key` hint: 1 to 128 UTF-8 bytes (`extract_routing_key_hint_named`). */
const routingKeyBytes = (key: string | undefined): Uint8Array | undefined => {
  if (key === undefined) return undefined
  const b = enc.encode(key)
  return b.length === 0 || b.length > 128 ? undefined : b
}

/**
 * The `prefix_hash` key: XXH3-64 (seed 0) of the first `prefixTokenCount` token ids as
 * little-endian u32 bytes, 16 lowercase hex digits (`format!("{:016x}")`), via `@node-rs/xxhash`.
 *
 * **When to use**: to see which ring position a prompt prefix maps to.
 *
 * @example
 * ```ts
 * import { Smg } from "@loadledger/policies"
 * Smg.smgPrefixHashKey([1, 2, 3, 4, 5], 256) // => "f2f19a6764b86d62"
 * ```
 *
 * @category smg
 * @since 0.2.0
 */
export const smgPrefixHashKey = (tokenIds: ReadonlyArray<number>, prefixTokenCount: number): string => {
  const n = Math.min(tokenIds.length, prefixTokenCount)
  const bytes = new Uint8Array(n * 4)
  const view = new DataView(bytes.buffer)
  for (let i = 0; i < n; i++) view.setUint32(i * 4, tokenIds[i]! >>> 0, true)
  return xxh3Hex(bytes)
}

/**
 * SMG `prefix_hash` `select_worker`. Key = {@link smgPrefixHashKey} of the token ids (at the head,
 * a valid `routingKey`, the `x-smg-routing-key` hint of 1 to 128 UTF-8 bytes, wins: its bytes are
 * hashed instead). `hw` = workers with `healthy` (the circuit breaker is not consulted; the head's
 * overload veto, PR #2220, is off unless configured and not modelled). The ring (built from **all**
 * urls) gives the initial worker; it is kept when `total == 0` or its load is within the bound
 * (`ring_hit`), else the first least-loaded worker within the bound (`load_balance_walk`; the
 * initial one if none). No workers -> `None` (`no_healthy_workers`). `details`: `branch`,
 * `prefixHashKey`, `ringInitial` (index), `total`, `bound`. No `processed_requests` change.
 *
 * - **head** (`version: "f8daa883"`, default): bound `max(avg * loadFactor, avg +
 *   balanceAbsThreshold)` with `avg = (total + 1) / n` (PR #2150, 37a8dd7760937fa424543ae9b64c646730ccc31c);
 *   no key and no tokens -> the first least-loaded healthy worker (`no_routing_key`, PR #2148).
 *   Not modelled: routing text (the trace has none), `cache_boundaries` (#2214, off by default).
 * - **v1.9.0**: bound `avg * loadFactor`; no tokens -> `None` (`no_tokens`); no routing key.
 *
 * **When to use**: replaying SMG's prefix-hash routing; `smg/prefix-hash` (head) and
 * `smg/prefix-hash@v1.9.0` wrap it.
 *
 * @example
 * ```ts
 * import { Smg } from "@loadledger/policies"
 * const w = (url: string, load = 0) => ({ url, healthy: true, load, processedRequests: 0, circuitBreakerCanExecute: true })
 * const ws = [w("http://w1:8000"), w("http://w2:8000"), w("http://w3:8000")]
 * const out = Smg.smgPrefixHashSelect(ws, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
 * out.index // => 1
 * out.details.branch // => "ring_hit"
 * // 12 in flight on the ring's worker: above 1.25 x 13/3 = 5.42, within 13/3 + 10 (the head's margin)
 * const busy = [w("http://w1:8000"), w("http://w2:8000", 12), w("http://w3:8000")]
 * Smg.smgPrefixHashSelect(busy, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]).index // => 1
 * Smg.smgPrefixHashSelect(busy, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], { version: "v1.9.0" }).index // => 0
 * Smg.smgPrefixHashSelect(busy, undefined).details.branch // => "no_routing_key"
 * ```
 *
 * @category smg
 * @since 0.2.0
 */
export const smgPrefixHashSelect = (
  workers: ReadonlyArray<SmgWorker>,
  tokenIds: ReadonlyArray<number> | undefined,
  config: SmgPrefixHashConfig = {},
  routingKey?: string | undefined
): SmgSelected<undefined> => {
  const head = config.version !== "v1.9.0"
  if (workers.length === 0) return selected(undefined, undefined, false, { branch: "no_healthy_workers" })
  const leastLoaded = (pool: ReadonlyArray<number>): number | undefined => {
    let best: number | undefined
    for (const i of pool) if (best === undefined || workers[i]!.load < workers[best]!.load) best = i
    return best
  }
  const hint = head ? routingKeyBytes(routingKey) : undefined
  const hasTokens = tokenIds !== undefined && tokenIds.length > 0
  if (hint === undefined && !hasTokens) {
    if (!head) return selected(undefined, undefined, false, { branch: "no_tokens" })
    const all = workers.flatMap((w, i) => (w.healthy ? [i] : []))
    return selected(leastLoaded(all), undefined, false, { branch: "no_routing_key" })
  }
  const key = hint !== undefined ? xxh3Hex(hint) : smgPrefixHashKey(tokenIds!, config.prefixTokenCount ?? 256)
  const hw: Array<number> = []
  for (let i = 0; i < workers.length; i++) if (workers[i]!.healthy) hw.push(i)
  if (hw.length === 0)
    return selected(undefined, undefined, false, { branch: "no_healthy_workers", prefixHashKey: key })
  let total = 0
  for (const i of hw) total += workers[i]!.load
  const avg = (total + 1) / hw.length
  const lf = config.loadFactor ?? 1.25
  const bound = head ? Math.max(avg * lf, avg + (config.balanceAbsThreshold ?? 10)) : avg * lf
  const loadOk = (l: number) => total === 0 || l <= bound
  if (config.hashRing === false)
    return selected(leastLoaded(hw), undefined, false, { branch: "fallback_least_load", prefixHashKey: key })
  const urlToIndex = new Map<string, number>()
  for (const i of hw) if (!urlToIndex.has(workers[i]!.url)) urlToIndex.set(workers[i]!.url, i)
  const url = ringLookup(ringOf(workers.map((w) => w.url)), key, (u) => urlToIndex.has(u))
  const initial = url === undefined ? undefined : urlToIndex.get(url)
  if (initial === undefined)
    return selected(leastLoaded(hw), undefined, false, { branch: "fallback_least_load", prefixHashKey: key })
  const details = { prefixHashKey: key, ringInitial: initial, total, bound }
  if (loadOk(workers[initial]!.load))
    return selected(initial, undefined, false, { ...details, branch: "ring_hit" })
  const walked = leastLoaded(hw.filter((i) => loadOk(workers[i]!.load)))
  return selected(walked ?? initial, undefined, false, { ...details, branch: "load_balance_walk" })
}
