/**
 * What the capacity search takes and gives: its options (`CapacityOptions`), one probe
 * (`CapacityProbe`), the answer (`Capacity`) and why there is none (`CapacityError`).
 *
 * A leaf below `Capacity.ts` (`findCapacity`, `keptUp`) and `CapacitySearch.ts` (the pure step and
 * the asynchronous driver), so neither imports the other's types back (issue 29). Re-exported
 * unchanged from the package index.
 *
 * @since 0.3.0
 */
import type { PolicyResult } from "./Result.js"

/**
 * How `findCapacity` searches. Every field is optional.
 * - `start`: the first rate multiplier probed (default 1; the search doubles or halves from it);
 * - `precision`: stop when the failing rate is within `1 + precision` of the kept-up one (default 0.01);
 * - `tolerance`: a run keeps up when it finished every request and its last request started within
 *   `tolerance` x the arrival span of the last arrival (default 0.02; `keptUp`);
 * - `maxProbes`: at most this many simulations (default 40);
 * - `onProbe`: called after each simulation (does not change the result).
 *
 * @category capacity
 * @since 0.3.0
 */
export interface CapacityOptions {
  readonly start?: number | undefined
  readonly precision?: number | undefined
  readonly tolerance?: number | undefined
  readonly maxProbes?: number | undefined
  readonly onProbe?: ((probe: CapacityProbe) => void) | undefined
}

/**
 * One simulation of the search: the rate multiplier, whether the group kept up (`keptUp`), the backlog at the
 * last arrival as a share of the arrival span (`backlog`: when the last request started, after the
 * last arrival; 0.01 = 1% of the span), and the run's result.
 *
 * @category capacity
 * @since 0.3.0
 */
export interface CapacityProbe {
  readonly rate: number
  readonly keepsUp: boolean
  readonly backlog: number
  readonly result: PolicyResult
}

/**
 * What `findCapacity` found: `rate`, the largest rate multiplier probed that the group kept up
 * with (the next one up, `failedRate`, is within `1 + precision`); `requestsPerSecond`, the trace's
 * mean arrival rate at `rate`; every probe in order.
 *
 * @category capacity
 * @since 0.3.0
 */
export interface Capacity {
  readonly _tag: "Capacity"
  readonly rate: number
  readonly failedRate: number
  readonly requestsPerSecond: number
  readonly probes: ReadonlyArray<CapacityProbe>
}

/**
 * Why `findCapacity` found no capacity: a bad option (`field` names it), a trace whose arrivals
 * span no time, rejections that do not fall when the rate halves, or no bracket within `maxProbes`
 * (`probes` says what was tried).
 *
 * @category capacity
 * @since 0.3.0
 */
export interface CapacityError {
  readonly _tag: "CapacityError"
  readonly message: string
  readonly field?: string | undefined
  readonly probes: ReadonlyArray<CapacityProbe>
}
