/**
 * vllm-project/router `power_of_two`: two distinct healthy workers drawn at random, the one with
 * the lower `cached + local` load wins. Upstream: vllm-project/router
 * `src/policies/power_of_two.rs`, commit `fa999f98dc881e20b6b0257be0049cd4c68c8ea0`.
 *
 * @since 0.8.0
 */
import { type PolicyError, policyError } from "../../Policy.js"

/**
 * A worker as `power_of_two` reads it: its `url` (the key of the cached loads), whether it is
 * `healthy` (upstream `is_healthy() && circuit_breaker().can_execute()`) and `load`, the router's
 * own in-flight count (`Worker::load()`).
 *
 * @category vllm-router
 * @since 0.8.0
 */
export interface VllmRouterP2Worker {
  readonly url: string
  readonly healthy: boolean
  readonly load: number
}

/**
 * What `power_of_two` selected: `index` (a worker index; `undefined` = upstream `None`, no healthy
 * worker), the two `candidates` (worker indices, `[]` with fewer than two healthy workers), their
 * `loads` (`cached + local`) and `drawsUsed` (how many draws were consumed: the first pick, then
 * every redraw of the second until it differs).
 *
 * @category vllm-router
 * @since 0.8.0
 */
export interface VllmRouterP2Selected {
  readonly _tag: "Selected"
  readonly index: number | undefined
  readonly candidates: ReadonlyArray<number>
  readonly loads: ReadonlyArray<number>
  readonly drawsUsed: number
}

/**
 * The load `power_of_two` compares for one worker (upstream `get_worker_load`): the cached load of
 * its url plus its local in-flight count; a url with no cached entry counts its local load alone.
 *
 * @example
 * ```ts
 * import { VllmRouter } from "@loadledger/policies"
 * const w = { url: "http://w1:8000", healthy: true, load: 5 }
 * VllmRouter.vllmRouterP2Load(w, new Map([["http://w1:8000", 50]])) // => 55
 * VllmRouter.vllmRouterP2Load(w, new Map()) // => 5
 * ```
 *
 * @category vllm-router
 * @since 0.8.0
 */
export const vllmRouterP2Load = (w: VllmRouterP2Worker, cached: ReadonlyMap<string, number>): number =>
  (cached.get(w.url) ?? 0) + w.load

const badDraw = (k: number, n: number, v: unknown): PolicyError =>
  policyError(
    "InvalidInput",
    `power_of_two: draws[${k}] must be an integer in [0, ${n}), got ${String(v)}`,
    `draws[${k}]`
  )

/**
 * vllm-router `power_of_two` `select_worker_with_headers`. `h` = healthy worker indices in order;
 * none: `index: undefined` (upstream `None`); one: `h[0]` with no draw. Otherwise
 * `i1 = draws[0]` and `i2 = draws[1]`, redrawn from `draws[2]`, `draws[3]`, ... while `i2 === i1`
 * (upstream's `while idx2 == idx1` loop; every draw is an index in `[0, len(h))` of
 * `rng.random_range(0..len)`). The loads are `cached.get(url) + load` ({@link vllmRouterP2Load});
 * the first pick wins ties (`load1 <= load2`). Unlike SMG's `power_of_two` (which draws the second
 * pick from `n - 1` values and compares token usage when both workers report it) the second pick is
 * a rejection loop and the compared load is one integer.
 *
 * Errors: a draw that is not an integer in range, or draws that run out before the second pick
 * differs from the first, is a `PolicyError` (`InvalidInput`) naming `draws[k]`.
 *
 * **When to use**: replaying vllm-router's power-of-two with explicit draws; the registry's
 * `vllm-router/power-of-two` draws them from its seed.
 *
 * @example
 * ```ts
 * import { VllmRouter } from "@loadledger/policies"
 * const w = (url: string, load: number) => ({ url, healthy: true, load })
 * const workers = [w("http://w1:8000", 10), w("http://w2:8000", 5), w("http://w3:8000", 0)]
 * const out = VllmRouter.vllmRouterPowerOfTwoSelect(workers, new Map(), [0, 0, 0, 1])
 * out._tag === "Selected" && out.index // => 1
 * out._tag === "Selected" && out.drawsUsed // => 4
 * ```
 *
 * @category vllm-router
 * @since 0.8.0
 */
export const vllmRouterPowerOfTwoSelect = (
  workers: ReadonlyArray<VllmRouterP2Worker>,
  cached: ReadonlyMap<string, number>,
  draws: ReadonlyArray<number>
): VllmRouterP2Selected | PolicyError => {
  const h: Array<number> = []
  for (let i = 0; i < workers.length; i++) if (workers[i]!.healthy) h.push(i)
  if (h.length === 0) return { _tag: "Selected", index: undefined, candidates: [], loads: [], drawsUsed: 0 }
  if (h.length === 1) return { _tag: "Selected", index: h[0], candidates: [], loads: [], drawsUsed: 0 }
  const n = h.length
  const at = (k: number): number | PolicyError => {
    const v = draws[k]
    return v !== undefined && Number.isInteger(v) && v >= 0 && v < n ? v : badDraw(k, n, v)
  }
  const i1 = at(0)
  if (typeof i1 !== "number") return i1
  let k = 1
  let i2 = at(k)
  while (typeof i2 === "number" && i2 === i1) {
    k += 1
    i2 = at(k)
  }
  if (typeof i2 !== "number") return i2
  const a = h[i1]!
  const b = h[i2]!
  const la = vllmRouterP2Load(workers[a]!, cached)
  const lb = vllmRouterP2Load(workers[b]!, cached)
  return { _tag: "Selected", index: la <= lb ? a : b, candidates: [a, b], loads: [la, lb], drawsUsed: k + 1 }
}
