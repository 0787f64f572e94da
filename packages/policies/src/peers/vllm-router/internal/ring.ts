/**
 * The ring of `consistent_hash` (vllm-project/router `src/policies/consistent_hash.rs`,
 * `update_hash_ring`, `find_worker_by_hash`, `extract_dp_info`): sorted u64 points, each naming a
 * worker index.
 *
 * @internal
 */
import { fbiHash } from "../FbiHash.js"

export interface HashRing {
  readonly points: ReadonlyArray<bigint>
  readonly workers: ReadonlyArray<number>
}

/** Points `fbiHash("<url>:<i>")`, urls in order, a later equal point overwriting (BTreeMap insert). */
export const ringOf = (urls: ReadonlyArray<string>, virtualNodes: number): HashRing => {
  const m = new Map<bigint, number>()
  for (let w = 0; w < urls.length; w++)
    for (let i = 0; i < virtualNodes; i++) m.set(fbiHash(`${urls[w]!}:${i}`), w)
  const points = [...m.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
  return { points, workers: points.map((p) => m.get(p)!) }
}

/** The worker of the first point >= `h`, wrapping to the smallest; `undefined` on an empty ring. */
export const ringWorker = (ring: HashRing, h: bigint): number | undefined => {
  const { points } = ring
  if (points.length === 0) return undefined
  let lo = 0
  let hi = points.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (points[mid]! < h) lo = mid + 1
    else hi = mid
  }
  return ring.workers[lo === points.length ? 0 : lo]
}

/** `extract_dp_info`: `host@rank` (exactly one `@`, a usize after it) -> [host, rank]; else [url]. */
export const dpInfo = (url: string): readonly [string, number | undefined] => {
  const parts = url.split("@")
  if (parts.length === 2 && /^\+?[0-9]+$/u.test(parts[1]!)) return [parts[0]!, Number(parts[1])]
  return [url, undefined]
}
