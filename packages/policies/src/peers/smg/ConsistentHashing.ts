/**
 * SMG `consistent_hashing`. Upstream: lightseekorg/smg `model_gateway/src/policies/consistent_hashing.rs`,
 * `model_gateway/src/routers/common/header_utils.rs`, `model_gateway/src/worker/hash_ring.rs`,
 * commit 73da68ca9472bbc0ff5f63d31a8a21fbb8696359.
 *
 * @since 0.2.0
 */
import { type PolicyError, policyError } from "../../Policy.js"
import { selected } from "./internal/common.js"
import { ringLookup, ringOf } from "./internal/hashRing.js"
import type { SmgResult, SmgSelected, SmgWorker } from "./Types.js"

const header = (headers: Readonly<Record<string, string>>, name: string): string | undefined => {
  for (const k of Object.keys(headers)) if (k.toLowerCase() === name) return headers[k]
  return undefined
}

/** Rust `usize::from_str`: ASCII digits with an optional leading `+`. */
const parseUsize = (s: string): number | undefined =>
  /^\+?[0-9]+$/.test(s) ? Number(s.replace("+", "")) : undefined

/**
 * SMG `consistent_hashing` `select_worker` over request headers (names case-insensitive; a header
 * is present when non-empty). `x-smg-target-worker` (a `usize`): that index if it exists and is
 * healthy (`target_worker_hit`), else `None` (`target_worker_miss`, no fallback). Then with no healthy
 * worker `None`; `x-smg-routing-key`, else the first existing of `authorization`,
 * `x-forwarded-for`, `cookie` (an empty one does not fall through), is looked up on the ring
 * (`routing_key_hit`); without a key, `draws[0]` picks among healthy workers (`random_fallback`).
 *
 * **When to use**: replaying SMG's header-keyed consistent hashing; `smg/consistent-hashing` wraps it.
 *
 * @example
 * ```ts
 * import { Smg } from "@loadledger/policies"
 * const w = (url: string) => ({ url, healthy: true, load: 0, processedRequests: 0, circuitBreakerCanExecute: true })
 * const ws = [w("http://w1:8000"), w("http://w2:8000"), w("http://w3:8000")]
 * const out = Smg.smgConsistentHashingSelect(ws, { "x-smg-routing-key": "user-123" }, [])
 * out._tag === "SmgSelected" && out.index // => 2
 * ```
 *
 * @category smg
 * @since 0.2.0
 */
export const smgConsistentHashingSelect = (
  workers: ReadonlyArray<SmgWorker>,
  headers: Readonly<Record<string, string>>,
  draws: ReadonlyArray<number>
): SmgResult<undefined> => {
  const target = header(headers, "x-smg-target-worker")
  if (target !== undefined && target !== "") {
    const idx = parseUsize(target)
    return idx !== undefined && idx < workers.length && workers[idx]!.healthy
      ? selected(idx, undefined, false, { branch: "target_worker_hit" })
      : selected(undefined, undefined, false, { branch: "target_worker_miss" })
  }
  const healthy: Array<number> = []
  for (let i = 0; i < workers.length; i++) if (workers[i]!.healthy) healthy.push(i)
  if (healthy.length === 0) return selected(undefined, undefined, false, { branch: "no_healthy_workers" })
  let key = header(headers, "x-smg-routing-key")
  if (key === "") key = undefined
  if (key === undefined) {
    for (const name of ["authorization", "x-forwarded-for", "cookie"]) {
      const v = header(headers, name)
      if (v !== undefined) {
        key = v === "" ? undefined : v
        break
      }
    }
  }
  if (key !== undefined) return byKey(workers, healthy, key)
  const d = draws[0]
  if (d === undefined || !Number.isInteger(d) || d < 0 || d >= healthy.length)
    return policyError(
      "InvalidInput",
      `draw 0 must be an integer in [0, ${healthy.length})`,
      "draws[0]"
    ) satisfies PolicyError
  return selected(healthy[d], undefined, false, { branch: "random_fallback", draw: d })
}

const byKey = (
  workers: ReadonlyArray<SmgWorker>,
  healthy: ReadonlyArray<number>,
  key: string
): SmgSelected<undefined> => {
  const urlToIndex = new Map<string, number>()
  for (const i of healthy) if (!urlToIndex.has(workers[i]!.url)) urlToIndex.set(workers[i]!.url, i)
  const url = ringLookup(ringOf(workers.map((w) => w.url)), key, (u) => urlToIndex.has(u))
  return selected(url === undefined ? undefined : urlToIndex.get(url), undefined, false, {
    branch: "routing_key_hit",
    key
  })
}
