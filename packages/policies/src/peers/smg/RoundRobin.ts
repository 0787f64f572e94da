/**
 * SMG `round_robin`. Upstream: lightseekorg/smg `model_gateway/src/policies/round_robin.rs`,
 * commit 73da68ca9472bbc0ff5f63d31a8a21fbb8696359.
 *
 * @since 0.2.0
 */
import { healthyIndices, selected } from "./internal/common.js"
import type { SmgSelected, SmgWorker } from "./Types.js"

/**
 * State of SMG `round_robin`: one global `counter` (not per worker set), starting at 0.
 *
 * @category smg
 * @since 0.2.0
 */
export interface SmgRoundRobinState {
  readonly counter: number
}

/**
 * SMG `round_robin` `select_worker`: `h` = healthy indices; empty -> `None` without touching the
 * counter; else `h[counter % len(h)]` and `counter += 1`. A health flip changes the modulus, so
 * the sequence is not a rotation over stable ids (upstream behaviour). `details.counterAfter`.
 *
 * **When to use**: replaying SMG's round robin exactly; the registry's `smg/round-robin` wraps it.
 *
 * @example
 * ```ts
 * import { Smg } from "@loadledger/policies"
 * const w = (url: string) => ({ url, healthy: true, load: 0, processedRequests: 0, circuitBreakerCanExecute: true })
 * const out = Smg.smgRoundRobinSelect({ counter: 4 }, [w("a"), w("b"), w("c")])
 * out.index // => 1
 * out.state.counter // => 5
 * ```
 *
 * @category smg
 * @since 0.2.0
 */
export const smgRoundRobinSelect = (
  state: SmgRoundRobinState,
  workers: ReadonlyArray<SmgWorker>
): SmgSelected<SmgRoundRobinState> => {
  const h = healthyIndices(workers)
  if (h.length === 0) return selected(undefined, state, false, { counterAfter: state.counter })
  const c = state.counter
  return selected(h[c % h.length], { counter: c + 1 }, false, { counterAfter: c + 1, healthy: h })
}
