/**
 * The shapes of a sweep (its spec, its cells, a goodput sweep's settings) and the error a bad spec
 * gives: what the parser (`Spec.ts`) builds and the expansion (`Cells.ts`) reads.
 *
 * @since 0.6.0
 */
import type { CoordinatorRows, EngineName, Slo } from "@loadledger/sim"

/**
 * One cell of a sweep: everything `simulate` needs, as plain data (it crosses worker threads and is
 * written next to its result). `trace` is an absolute path; `rate` scales the arrival rate (in a
 * goodput cell: 1, the first multiplier the search probes);
 * `coordinatorRows` (since 0.4.0, vLLM only) is the simulator's `coordinatorRows`, absent for its
 * default `"extended"`.
 *
 * @category sweep
 * @since 0.2.0
 */
export interface Cell {
  readonly id: string
  readonly trace: string
  readonly traceName: string
  readonly rate: number
  readonly limit?: number | undefined
  readonly dp: number
  readonly engine: EngineName
  readonly frontEnds: number
  readonly coordinatorRows?: Exclude<CoordinatorRows, "extended"> | undefined
  readonly policy: string
  readonly model: string
  readonly gpu: string
  readonly seed: number
  /** Goodput cells only (since 0.5.0): the search, see {@link GoodputCells}. */
  readonly goodput?: GoodputCells | undefined
}

/**
 * A sweep of goodput cells (since 0.5.0): instead of one replay at each rate, each cell finds its
 * policy's goodput under `slo` (the largest rate multiplier at which the SLO is met) on each of
 * `windows` disjoint windows of the trace, by bisection to within `1 + precision`, as `loadledger
 * goodput` does; every (trace, DP, front end) block also gets the clairvoyant reference and the
 * balance bound, and the summary ranks each block with `confidence` intervals and paired verdicts.
 * `sloText` is the spec's own `slo` (a preset name or `ttft=…,tpot=…`).
 *
 * @category sweep
 * @since 0.5.0
 */
export interface GoodputCells {
  readonly slo: Slo
  readonly sloText: string
  readonly windows: number
  readonly confidence: number
  readonly precision: number
}

/**
 * The reference subjects a goodput sweep adds to every block, as cell policy names.
 *
 * @example
 * ```ts
 * import { GOODPUT_REFERENCES } from "./SpecTypes.js"
 * GOODPUT_REFERENCES // => ["clairvoyant", "balance-bound"]
 * ```
 *
 * @category sweep
 * @since 0.5.0
 */
export const GOODPUT_REFERENCES: ReadonlyArray<string> = ["clairvoyant", "balance-bound"]

/**
 * A parsed and checked grid spec. Trace paths are absolute (relative ones are resolved against the
 * spec file's folder, as in docker-compose). A vLLM front-end entry may name the rows its front ends
 * are handed (`coordinatorRows`, since 0.4.0: `vllm` or `vllm-counts`, see the simulator's
 * `CoordinatorRows`; absent = the simulator's default, `extended`).
 *
 * @category sweep
 * @since 0.2.0
 */
export interface SweepSpec {
  readonly name: string
  readonly model: string
  readonly gpu: string
  readonly seed: number
  readonly limit?: number | undefined
  readonly traces: ReadonlyArray<{
    readonly path: string
    readonly name: string
    readonly rates: ReadonlyArray<number>
  }>
  readonly dp: ReadonlyArray<number>
  readonly frontEnds: ReadonlyArray<{
    readonly engine: EngineName
    readonly clients: number
    readonly coordinatorRows?: Exclude<CoordinatorRows, "extended"> | undefined
  }>
  readonly policies: ReadonlyArray<string>
  /** Present when the cells are goodput cells (since 0.5.0); then no trace has `rates`. */
  readonly goodput?: GoodputCells | undefined
}

/**
 * Why a spec was refused: `path` names the field (`traces[1].rates[0]`).
 *
 * @example
 * ```ts
 * import { parseSpec } from "./Spec.js"
 * import { SpecError } from "./SpecTypes.js"
 * const error = (() => {
 *   try {
 *     return parseSpec("traces: [{path: a.jsonl, rates: [0.1]}]\npolicies: [no-such-policy]\n", "/s/x.yaml")
 *   } catch (e) {
 *     return e
 *   }
 * })()
 * error instanceof SpecError // => true
 * ;(error as SpecError).path // => "policies[0]"
 * ;(error as SpecError).message // => 'policies[0]: unknown policy "no-such-policy"'
 * ```
 *
 * @category sweep
 * @since 0.2.0
 */
export class SpecError extends Error {
  readonly _tag = "SpecError"
  constructor(
    readonly path: string,
    message: string
  ) {
    super(`${path}: ${message}`)
  }
}
