/**
 * SMG `prefix_hash`. Upstream: lightseekorg/smg `model_gateway/src/policies/prefix_hash.rs` and
 * `model_gateway/src/worker/hash_ring.rs`, commit 73da68ca9472bbc0ff5f63d31a8a21fbb8696359.
 *
 * @since 0.2.0
 */
import { xxh3Hex } from "../internal/hashes.js"
import { selected } from "./internal/common.js"
import { ringLookup, ringOf } from "./internal/hashRing.js"
import type { SmgSelected, SmgWorker } from "./Types.js"

/**
 * `prefix_hash` tunables: `prefixTokenCount` (256), `loadFactor` (1.25), `hashRing` (true; false
 * = upstream's no-ring fallback, the least-loaded worker).
 *
 * @category smg
 * @since 0.2.0
 */
export interface SmgPrefixHashConfig {
  readonly prefixTokenCount?: number | undefined
  readonly loadFactor?: number | undefined
  readonly hashRing?: boolean | undefined
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
 * SMG `prefix_hash` `select_worker`. No workers -> `None` (`no_healthy_workers`); no tokens ->
 * `None` (`no_tokens`). Key = {@link smgPrefixHashKey}; `hw` = workers with `healthy` (the circuit
 * breaker is not consulted); the ring (built from **all** urls) gives the initial worker; it is kept
 * when its load is within `((total + 1) / n) * loadFactor` (or total is 0: `ring_hit`), else the
 * first least-loaded worker within that bound (`load_balance_walk`; the initial one if none).
 * `details`: `branch`, `prefixHashKey`, `ringInitial` (index). No `processed_requests` change.
 *
 * **When to use**: replaying SMG's prefix-hash routing; `smg/prefix-hash` wraps it.
 *
 * @example
 * ```ts
 * import { Smg } from "@loadledger/policies"
 * const w = (url: string) => ({ url, healthy: true, load: 0, processedRequests: 0, circuitBreakerCanExecute: true })
 * const ws = [w("http://w1:8000"), w("http://w2:8000"), w("http://w3:8000")]
 * const out = Smg.smgPrefixHashSelect(ws, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
 * out.index // => 1
 * out.details.branch // => "ring_hit"
 * ```
 *
 * @category smg
 * @since 0.2.0
 */
export const smgPrefixHashSelect = (
  workers: ReadonlyArray<SmgWorker>,
  tokenIds: ReadonlyArray<number> | undefined,
  config: SmgPrefixHashConfig = {}
): SmgSelected<undefined> => {
  if (workers.length === 0) return selected(undefined, undefined, false, { branch: "no_healthy_workers" })
  if (tokenIds === undefined || tokenIds.length === 0)
    return selected(undefined, undefined, false, { branch: "no_tokens" })
  const key = smgPrefixHashKey(tokenIds, config.prefixTokenCount ?? 256)
  const hw: Array<number> = []
  for (let i = 0; i < workers.length; i++) if (workers[i]!.healthy) hw.push(i)
  if (hw.length === 0)
    return selected(undefined, undefined, false, { branch: "no_healthy_workers", prefixHashKey: key })
  let total = 0
  for (const i of hw) total += workers[i]!.load
  const bound = ((total + 1) / hw.length) * (config.loadFactor ?? 1.25)
  const loadOk = (l: number) => total === 0 || l <= bound
  const leastLoaded = (pool: ReadonlyArray<number>): number | undefined => {
    let best: number | undefined
    for (const i of pool) if (best === undefined || workers[i]!.load < workers[best]!.load) best = i
    return best
  }
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
