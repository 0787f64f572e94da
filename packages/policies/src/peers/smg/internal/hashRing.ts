/**
 * SMG's consistent hash ring (`model_gateway/src/worker/hash_ring.rs`, lightseekorg/smg 73da68ca):
 * 150 virtual nodes per url at `blake3_u64(url + "#" + v)`, sorted; lookup from the first entry at or
 * after `blake3_u64(key)`, clockwise with wrap-around, first url that passes the filter (each url
 * checked once). Rings are memoised by their url list (deterministic, so purity holds).
 */
import { blake3U64 } from "../../internal/hashes.js"

export interface Ring {
  readonly positions: ReadonlyArray<bigint>
  readonly urls: ReadonlyArray<string>
}

const memo = new Map<string, Ring>()

export const ringOf = (urls: ReadonlyArray<string>): Ring => {
  const key = urls.join("\u0000")
  const hit = memo.get(key)
  if (hit !== undefined) return hit
  const entries: Array<readonly [bigint, string]> = []
  for (const u of urls) for (let v = 0; v < 150; v++) entries.push([blake3U64(`${u}#${v}`), u])
  entries.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0))
  const ring = { positions: entries.map((e) => e[0]), urls: entries.map((e) => e[1]) }
  if (memo.size > 256) memo.clear()
  memo.set(key, ring)
  return ring
}

export const ringLookup = (ring: Ring, key: string, ok: (url: string) => boolean): string | undefined => {
  const n = ring.positions.length
  if (n === 0) return undefined
  const kp = blake3U64(key)
  let lo = 0
  let hi = n
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (ring.positions[mid]! < kp) lo = mid + 1
    else hi = mid
  }
  const seen = new Set<string>()
  for (let k = 0; k < n; k++) {
    const u = ring.urls[(lo + k) % n]!
    if (seen.has(u)) continue
    seen.add(u)
    if (ok(u)) return u
  }
  return undefined
}
