/**
 * What a `loadledger reproduce` scenario is: a published end-to-end result (its citation, the
 * assumptions the publication leaves open) and a `run` that replays its configuration through
 * the model, giving rows of `{metric, published, modelled}`; and the ratio error of a row.
 *
 * @since 0.7.0
 */

/** One compared figure: what the publication reports beside what the model gives, same unit. */
export interface ReproduceRow {
  /** What is compared, with its unit and the configuration it is of (`"throughput per GPU, tok/s, batch 64"`). */
  readonly metric: string
  /** The figure as published. */
  readonly published: number
  /** The model's figure for the same configuration. */
  readonly modelled: number
}

/** Where a published result comes from. */
export interface ReproduceSource {
  /** Who, what, when: `"LMSYS blog, Deploying DeepSeek with PD disaggregation and large-scale EP, 2025-05-05"`. */
  readonly citation: string
  /** Where to read it. */
  readonly url: string
}

/**
 * A published end-to-end configuration the model replays. `run` is pure apart from loading
 * modules: the same scenario gives the same rows.
 */
export interface ReproduceScenario {
  /** The name `loadledger reproduce NAME` takes (kebab-case). */
  readonly name: string
  /** One line: what is reproduced. */
  readonly title: string
  readonly source: ReproduceSource
  /** What the publication does not say and the scenario had to choose (one sentence each). */
  readonly assumptions: ReadonlyArray<string>
  /** Replay the configuration; resolves to the compared rows (at least one). */
  readonly run: () => Promise<ReadonlyArray<ReproduceRow>>
}

/**
 * The ratio error of a row: `modelled / published - 1` (0.05: the model is 5% high; -0.1: 10%
 * low). A row whose published figure is not a positive finite number has no ratio: `undefined`.
 *
 * @example
 * ```ts
 * import { ratioError } from "./Scenario.js"
 * ratioError({ metric: "ttft, ms", published: 400, modelled: 440 }) // => 0.1
 * ratioError({ metric: "ttft, ms", published: 0, modelled: 3 }) // => undefined
 * ```
 *
 * @category reproduce
 * @since 0.7.0
 */
export const ratioError = (row: ReproduceRow): number | undefined =>
  Number.isFinite(row.published) && row.published > 0 && Number.isFinite(row.modelled)
    ? row.modelled / row.published - 1
    : undefined
