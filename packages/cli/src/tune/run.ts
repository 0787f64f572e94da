/**
 * `loadledger tune`'s work, as data in and data out: the trace cut into `2 x windows` windows of
 * consecutive requests (the first half by arrival tunes, the second half is held out), the
 * starting configuration's goodput on the first half, the Nelder-Mead search over its weights
 * (`maximise`), then the default (the starting configuration) and the tuned one judged on the
 * held-out half with the balance bound beside them.
 *
 * @since 0.6.0
 */
import type { PolicyConfig } from "@loadledger/policies"
import {
  compareGoodput,
  type EngineName,
  estimateGoodput,
  type GoodputComparison,
  type GoodputEstimate
} from "@loadledger/sim"
import type { GoodputSetup } from "../goodput/jobs.js"
import { windowGoodputs } from "./evaluate.js"
import { type Evaluation, maximise } from "./search.js"
import { configAt, startPoint, tunableWeights } from "./weights.js"

/**
 * What `tuneConfig` needs: the goodput setup (its `windows` is the count per half: the trace is
 * cut into twice as many), the engine, the starting configuration, the tuned one's name, the
 * budget of evaluations (each a goodput search on every first-half window), the whole trace's
 * mean rate (for the estimates' multipliers), the confidence of the intervals, and a callback
 * after each evaluation (`done` of `budget`, the best mean goodput so far, requests per second).
 *
 * @category tune
 * @since 0.6.0
 */
export interface TuneOptions {
  readonly setup: GoodputSetup
  readonly engine: EngineName
  readonly from: PolicyConfig
  readonly name: string
  readonly budget: number
  readonly traceRequestsPerSecond: number
  readonly confidence: number
  readonly onEvaluation?: ((done: number, budget: number, bestRequestsPerSecond: number) => void) | undefined
}

/**
 * What `tuneConfig` found: the tuned configuration (the starting one renamed when no point beat
 * it on the first half), the weights searched, the evaluations spent, and per half the starting
 * configuration's (`default`) and the tuned one's goodput; on the held-out half also the balance
 * bound's and the paired comparison tuned vs default.
 *
 * @category tune
 * @since 0.6.0
 */
export interface TuneOutcome {
  readonly config: PolicyConfig
  readonly terms: ReadonlyArray<string>
  readonly evaluations: number
  readonly tuning: { readonly default: GoodputEstimate; readonly tuned: GoodputEstimate }
  readonly heldOut: {
    readonly default: GoodputEstimate
    readonly tuned: GoodputEstimate
    readonly bound: GoodputEstimate
    readonly tunedVsDefault: GoodputComparison
  }
}

const mean = (xs: ReadonlyArray<number>): number => xs.reduce((a, x) => a + x, 0) / xs.length

/**
 * Tune `o.from`'s weights on the first half of the trace and judge the result on the second (see
 * the module header). Runs in this thread. Throws an `Error` with a one-line message when the
 * configuration has nothing to tune or a goodput search fails.
 *
 * @example
 * ```ts
 * import { tuneConfig } from "./run.js"
 * import { ownPolicyConfigs } from "@loadledger/policies"
 * import { parseSlo } from "@loadledger/sim"
 * const slo = parseSlo("ttft=10s,tpot=100ms,attain=0.9")
 * if (slo._tag === "SloError") throw new Error(slo.message)
 * const setup = {
 *   trace: "examples/traces/mooncake/conversation_trace.jsonl", limit: 160, windows: 2, model: "glm-5.3", gpu: "h200",
 *   dp: 2, frontEnds: 1, seed: 0, slo: slo.slo, start: 1, precision: 0.2
 * }
 * const t = await tuneConfig({
 *   setup, engine: "sglang", from: ownPolicyConfigs["ledger-scored"]!, name: "mine", budget: 3,
 *   traceRequestsPerSecond: 1, confidence: 0.95
 * })
 * t.config.name // => "mine"
 * t.terms // => ["tokens", "uncachedPromptTokens"]
 * t.evaluations // => 3
 * t.tuning.tuned.requestsPerSecond >= t.tuning.default.requestsPerSecond // => true
 * t.heldOut.bound.requestsPerSecond > 0 // => true
 * ```
 *
 * @category tune
 * @since 0.6.0
 */
export const tuneConfig = async (o: TuneOptions): Promise<TuneOutcome> => {
  const weights = tunableWeights(o.from, o.setup.frontEnds)
  if (typeof weights === "string") throw new Error(`--from: ${weights}`)
  const W = o.setup.windows
  const setup: GoodputSetup = { ...o.setup, windows: 2 * W }
  const half = (first: boolean) => ({
    setup,
    engine: o.engine,
    windows: Array.from({ length: W }, (_, k) => (first ? k : W + k))
  })
  const tuneGround = half(true)
  const heldGround = half(false)
  const subject = (config: PolicyConfig) => ({ kind: "policy" as const, name: config.name ?? o.name, config })
  const start = { ...o.from, name: o.name }
  const defaultTune = windowGoodputs(tuneGround, subject(start))
  const x0 = startPoint(weights)
  const perWindow = new Map<number, ReadonlyArray<number>>()
  const found = maximise(
    (x) => {
      const g = x.every((v, i) => v === x0[i])
        ? defaultTune
        : windowGoodputs(tuneGround, subject(configAt(o.from, weights, x, o.name)), defaultTune)
      perWindow.set(perWindow.size, g)
      return mean(g)
    },
    x0,
    {
      budget: o.budget,
      onEvaluation: (e: Evaluation, best: Evaluation) => o.onEvaluation?.(e.index + 1, o.budget, best.value)
    }
  )
  // no point beat the start on the first half: the start, renamed
  const improved = found.best.index !== found.start.index
  const config = improved ? configAt(o.from, weights, found.best.x, o.name) : start
  const estimate = (xs: ReadonlyArray<number>, what: string): GoodputEstimate => {
    const e = estimateGoodput(xs, o.traceRequestsPerSecond, o.confidence)
    if (e._tag === "GoodputError") throw new Error(`${what}: ${e.message}`)
    return e
  }
  const heldDefault = windowGoodputs(heldGround, subject(start))
  const heldTuned = improved ? windowGoodputs(heldGround, subject(config), heldDefault) : heldDefault
  const heldBound = windowGoodputs(heldGround, { kind: "bound" })
  const vs = compareGoodput(heldTuned, heldDefault, o.confidence)
  if (vs._tag === "GoodputError") throw new Error(`held-out comparison: ${vs.message}`)
  return {
    config,
    terms: weights.map((w) => w.term),
    evaluations: found.evaluations.length,
    tuning: {
      default: estimate(defaultTune, "first half, default"),
      tuned: estimate(perWindow.get(found.best.index)!, "first half, tuned")
    },
    heldOut: {
      default: estimate(heldDefault, "held-out half, default"),
      tuned: estimate(heldTuned, "held-out half, tuned"),
      bound: estimate(heldBound, "held-out half, balance bound"),
      tunedVsDefault: vs
    }
  }
}
