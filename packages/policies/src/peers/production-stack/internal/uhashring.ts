/**
 * uhashring 2.3 `HashRing()` defaults (non-ketama `MetaRing`), as production-stack's session router
 * uses it: 160 points per node at `int(md5(f"{node}-{w}"), 16)`, sorted; lookup
 * `bisect_right(points, int(md5(key), 16))`, wrapping to 0. Memoised by the node set.
 */
import { md5Int } from "../../internal/hashes.js"

interface MetaRing {
  readonly points: ReadonlyArray<bigint>
  readonly nodes: ReadonlyArray<string>
}

const memo = new Map<string, MetaRing>()

const ringOf = (nodes: ReadonlyArray<string>): MetaRing => {
  const sorted = [...new Set(nodes)].sort()
  const key = sorted.join("\u0000")
  const hit = memo.get(key)
  if (hit !== undefined) return hit
  const entries: Array<readonly [bigint, string]> = []
  for (const n of sorted) for (let w = 0; w < 160; w++) entries.push([md5Int(`${n}-${w}`), n])
  entries.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
  const ring = { points: entries.map((e) => e[0]), nodes: entries.map((e) => e[1]) }
  if (memo.size > 256) memo.clear()
  memo.set(key, ring)
  return ring
}

/** `ring.get_node(key)` over `nodes`; `undefined` when there are none. */
export const ringNode = (nodes: ReadonlyArray<string>, key: string): string | undefined => {
  const ring = ringOf(nodes)
  const n = ring.points.length
  if (n === 0) return undefined
  const h = md5Int(key)
  let lo = 0
  let hi = n
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (h < ring.points[mid]!) hi = mid
    else lo = mid + 1
  }
  return ring.nodes[lo === n ? 0 : lo]
}
