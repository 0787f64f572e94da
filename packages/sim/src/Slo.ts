/**
 * Latency service-level objectives (SLOs): per-request attainment of a time-to-first-token and a
 * time-per-output-token bound, the presets of the benchmarks that fix them, and the text form
 * `ttft=2s,tpot=100ms,attain=0.9[,itl=…][,criterion=joint|p99]` (read by `parseSlo`, `SloText.ts`).
 *
 * @since 0.5.0
 */

/**
 * How a run is judged against the bounds.
 * - `"joint"`: a request meets the SLO when its TTFT and its TPOT (and its worst inter-token gap,
 *   when `itlSeconds` is set) are each within bound; the run passes when the share of requests that
 *   meet it is >= `attainment`. DistServe's SLO attainment and vLLM's `benchmark_serving.py
 *   --goodput` judge this way.
 * - `"p99"` (any percentile: `attainment` 0.99 is MLPerf's p99): the run passes when the share of
 *   requests whose TTFT is within bound is >= `attainment` AND, separately, the share whose TPOT is
 *   within bound is >= `attainment` (MLPerf Inference's server scenario: the p99 of TTFT and the p99
 *   of TPOT must each be under its bound; loadgen computes TPOT per query).
 *
 * @category slo
 * @since 0.5.0
 */
export type SloCriterion = "joint" | "p99"

/**
 * A latency SLO. Times in seconds; `attainment` in (0, 1]. `itlSeconds` (optional) also bounds a
 * request's worst gap between consecutive tokens. `name` and `source` say where the numbers come
 * from (a preset's citation; absent for a hand-written SLO).
 *
 * TPOT of a request is (E2E − TTFT) / (output tokens − 1), as MLPerf's loadgen and vLLM's
 * benchmark compute it; a one-token output has no TPOT and is judged on its TTFT alone. A request
 * that was rejected or did not finish misses the SLO.
 *
 * @category slo
 * @since 0.5.0
 */
export interface Slo {
  readonly ttftSeconds: number
  readonly tpotSeconds: number
  readonly itlSeconds?: number | undefined
  readonly attainment: number
  readonly criterion: SloCriterion
  readonly name?: string | undefined
  readonly source?: string | undefined
}

/**
 * What a run attained against its SLO (in `PolicyResult.slo` when the config has one). Counts are
 * exact (a count per request, never a quantile). `total` is every request of the trace; `met` met
 * every bound; `ttftMet` / `tpotMet` / `itlMet` met that bound (a one-token output meets the TPOT
 * bound; without `itlSeconds`, `itlMet` = the finished count); rejected and unfinished requests meet
 * none. `attainment` is `met / total` under `"joint"`, and the smaller of `ttftMet / total` and
 * `tpotMet / total` under `"p99"`; `passed` compares it with the target. `stoppedEarly`: the run
 * ended as soon as more requests had missed than the target allows (`sloStopEarly`), so the counts
 * are those at that moment and `attainment` is an upper bound.
 *
 * @category slo
 * @since 0.5.0
 */
export interface SloAttainment {
  readonly slo: Slo
  readonly total: number
  readonly met: number
  readonly ttftMet: number
  readonly tpotMet: number
  readonly itlMet: number
  readonly attainment: number
  readonly passed: boolean
  readonly stoppedEarly: boolean
}

const MLPERF =
  "mlcommons/inference loadgen/mlperf.conf (commit 001712e9daf80386e0dda43f97b8f36981d792c4), Server scenario: the p99 of TTFT and the p99 of TPOT each under its bound"
const DISTSERVE =
  "DistServe (Zhong et al., OSDI 2024), Table 1: per-request attainment of both bounds by >= 90% of requests"

const mlperf = (name: string, ttftMs: number, tpotMs: number): Slo => ({
  name,
  ttftSeconds: ttftMs / 1000,
  tpotSeconds: tpotMs / 1000,
  attainment: 0.99,
  criterion: "p99",
  source: MLPERF
})

const distserve = (name: string, ttft: number, tpot: number): Slo => ({
  name,
  ttftSeconds: ttft,
  tpotSeconds: tpot,
  attainment: 0.9,
  criterion: "joint",
  source: DISTSERVE
})

/**
 * The SLO presets, by name, each with the criterion its source judges by and the citation.
 * MLPerf Inference server / interactive bounds per model (`mlperf-<model>[-interactive]`, p99
 * criterion) and DistServe's workloads (`distserve-<workload>-<model>`, joint attainment 90%).
 * vLLM's `--goodput ttft:… tpot:…` has no preset numbers: write it as `--slo ttft=…,tpot=…`
 * (its criterion is `joint`, the default).
 *
 * @example
 * ```ts
 * import { SLO_PRESETS } from "@loadledger/sim"
 * SLO_PRESETS["mlperf-llama2-70b"]?.ttftSeconds // => 2
 * SLO_PRESETS["mlperf-llama2-70b"]?.criterion // => "p99"
 * SLO_PRESETS["distserve-chatbot-opt-66b"]?.attainment // => 0.9
 * ```
 *
 * @category slo
 * @since 0.5.0
 */
export const SLO_PRESETS: Readonly<Record<string, Slo>> = Object.fromEntries(
  [
    mlperf("mlperf-llama2-70b", 2000, 200),
    mlperf("mlperf-llama2-70b-interactive", 450, 40),
    mlperf("mlperf-mixtral-8x7b", 2000, 200),
    mlperf("mlperf-llama3.1-405b", 6000, 175),
    mlperf("mlperf-llama3.1-405b-interactive", 4500, 80),
    mlperf("mlperf-llama3.1-8b", 2000, 100),
    mlperf("mlperf-llama3.1-8b-interactive", 500, 30),
    mlperf("mlperf-deepseek-r1", 2000, 80),
    mlperf("mlperf-deepseek-r1-interactive", 1500, 15),
    distserve("distserve-chatbot-opt-13b", 0.25, 0.1),
    distserve("distserve-chatbot-opt-66b", 2.5, 0.15),
    distserve("distserve-chatbot-opt-175b", 4.0, 0.2),
    distserve("distserve-code-opt-66b", 0.125, 0.2),
    distserve("distserve-summarization-opt-66b", 15, 0.15)
  ].map((s) => [s.name!, s])
)

/**
 * Why an SLO text or value was refused: `field` names the part (`ttft`, `tpot`, `itl`, `attain`,
 * `criterion`, or `slo` for the whole text).
 *
 * @category slo
 * @since 0.5.0
 */
export interface SloError {
  readonly _tag: "SloError"
  readonly field: string
  readonly message: string
}

const sloError = (field: string, message: string): SloError => ({ _tag: "SloError", field, message })

const positiveFinite = (x: unknown): x is number => typeof x === "number" && Number.isFinite(x) && x > 0

/**
 * Check an SLO value built by hand: bounds positive finite seconds, `attainment` in (0, 1],
 * `criterion` `"joint"` or `"p99"`. `undefined` when it is valid.
 *
 * @example
 * ```ts
 * import { checkSlo } from "@loadledger/sim"
 * checkSlo({ ttftSeconds: 2, tpotSeconds: 0.1, attainment: 0.9, criterion: "joint" }) // => undefined
 * checkSlo({ ttftSeconds: 2, tpotSeconds: 0.1, attainment: 1.5, criterion: "joint" })?.field // => "attain"
 * ```
 *
 * @category slo
 * @since 0.5.0
 */
export const checkSlo = (slo: Slo): SloError | undefined => {
  if (typeof slo !== "object" || slo === null) return sloError("slo", "slo must be an object")
  if (!positiveFinite(slo.ttftSeconds)) return sloError("ttft", "ttft must be a positive number of seconds")
  if (!positiveFinite(slo.tpotSeconds)) return sloError("tpot", "tpot must be a positive number of seconds")
  if (slo.itlSeconds !== undefined && !positiveFinite(slo.itlSeconds))
    return sloError("itl", "itl must be a positive number of seconds")
  if (!(positiveFinite(slo.attainment) && slo.attainment <= 1))
    return sloError("attain", "attain must be a share in (0, 1], e.g. 0.9")
  if (slo.criterion !== "joint" && slo.criterion !== "p99")
    return sloError("criterion", 'criterion must be "joint" or "p99"')
  return undefined
}

/**
 * The SLO in one line, as outputs state it: bounds, target and criterion.
 *
 * @example
 * ```ts
 * import { describeSlo } from "@loadledger/sim"
 * describeSlo({ ttftSeconds: 2, tpotSeconds: 0.1, attainment: 0.9, criterion: "joint" })
 * // => "TTFT <= 2 s and TPOT <= 100 ms, joint per request, attained by >= 90% of requests"
 * ```
 *
 * @category slo
 * @since 0.5.0
 */
export const describeSlo = (slo: Slo): string => {
  const t = (s: number) => (s >= 1 ? `${+s.toPrecision(4)} s` : `${+(s * 1000).toPrecision(4)} ms`)
  const bounds = `TTFT <= ${t(slo.ttftSeconds)} and TPOT <= ${t(slo.tpotSeconds)}${slo.itlSeconds === undefined ? "" : ` and worst ITL <= ${t(slo.itlSeconds)}`}`
  const pct = `${+(slo.attainment * 100).toPrecision(4)}%`
  const how =
    slo.criterion === "joint"
      ? `joint per request, attained by >= ${pct} of requests`
      : `each bound met by >= ${pct} of requests (the p${+(slo.attainment * 100).toPrecision(4)} criterion)`
  return `${slo.name ? `${slo.name}: ` : ""}${bounds}, ${how}`
}

/**
 * How many requests of `total` may miss before the run cannot pass: `floor((1 - attainment) x total)`
 * (with a tolerance for the floating-point share).
 *
 * @example
 * ```ts
 * import { allowedMisses } from "@loadledger/sim"
 * allowedMisses({ ttftSeconds: 2, tpotSeconds: 0.1, attainment: 0.9, criterion: "joint" }, 100) // => 10
 * ```
 *
 * @category slo
 * @since 0.5.0
 */
export const allowedMisses = (slo: Slo, total: number): number =>
  Math.floor((1 - slo.attainment) * total + 1e-9)
