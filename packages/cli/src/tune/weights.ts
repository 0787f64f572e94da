/**
 * The weights `loadledger tune` searches: which named terms of an own policy's configuration
 * (`PolicyConfig`) have a tunable weight, where each starts, its scale, and the configuration at a
 * point of the search space.
 *
 * @since 0.6.0
 */
import type { PolicyConfig, TermConfig } from "@loadledger/policies"

/**
 * One tunable weight: the term it weighs, its starting weight (the configuration's, or the term's
 * default when the configuration leaves it out), and `unit`, the weight one step of the search
 * moves it by at first (the start, or the term's typical value when it starts at 0).
 *
 * @category tune
 * @since 0.6.0
 */
export interface TunedWeight {
  readonly term: string
  readonly start: number
  readonly unit: number
}

/**
 * The `"step-time"` terms with a tunable weight, their defaults and typical values, as
 * `StepTimeTypes.ts` documents them (`decodeWeight` 8 with one front end, 0 with several;
 * `slotWaitSeconds` 0.3; `homeWeight` 0 with one front end, 0.3 with several). `queuedPrefill` and
 * `ownPrefill` take weight 1 only (seconds are seconds): they are not searched.
 */
const STEP_TIME: ReadonlyArray<{ term: string; start: (frontEnds: number) => number; unit: number }> = [
  { term: "decodeLoad", start: (n) => (n > 1 ? 0 : 8), unit: 8 },
  { term: "slotWait", start: () => 0.3, unit: 0.3 },
  { term: "homeCredit", start: (n) => (n > 1 ? 0.3 : 0), unit: 0.3 }
]

/**
 * The weights `tune` searches in `config` for a run behind `frontEnds` front ends: for `"scored"`
 * and `"power-of-choices"`, every term with a weight above 0 (a weight-0 term is a gate: kept as
 * it is); for `"step-time"`, `decodeLoad`, `slotWait` and `homeCredit` (from the configuration or
 * their defaults). A string saying why when nothing can be tuned (an `"upstream"` or
 * `"cache-affinity"` configuration, or no weighted term).
 *
 * @example
 * ```ts
 * import { tunableWeights } from "./weights.js"
 * import { ownPolicyConfigs } from "@loadledger/policies"
 * tunableWeights(ownPolicyConfigs["ledger-scored"]!, 1)
 * // => [{ term: "tokens", start: 1, unit: 1 }, { term: "uncachedPromptTokens", start: 0.5, unit: 0.5 }]
 * const st = tunableWeights(ownPolicyConfigs["step-time-aware"]!, 4) as ReadonlyArray<{ term: string; start: number }>
 * st.map((w) => [w.term, w.start])
 * // => [["decodeLoad", 0], ["slotWait", 0.3], ["homeCredit", 0.3]]
 * tunableWeights({ kind: "cache-affinity" }, 1)
 * // => "a cache-affinity configuration has no weighted terms to tune (it decides by rules)"
 * ```
 *
 * @category tune
 * @since 0.6.0
 */
export const tunableWeights = (
  config: PolicyConfig,
  frontEnds: number
): ReadonlyArray<TunedWeight> | string => {
  if (config.kind === "step-time")
    return STEP_TIME.map((t) => {
      const given = config.terms?.find((c) => c.term === t.term)?.weight
      const start = given ?? t.start(frontEnds)
      return { term: t.term, start, unit: start > 0 ? start : t.unit }
    })
  if (config.kind === "scored" || config.kind === "power-of-choices") {
    const ws = (config.terms ?? [])
      .filter((t) => t.weight > 0)
      .map((t) => ({ term: t.term, start: t.weight, unit: t.weight }))
    return ws.length > 0 ? ws : `the ${config.kind} configuration has no term with a weight above 0 to tune`
  }
  return config.kind === "cache-affinity"
    ? "a cache-affinity configuration has no weighted terms to tune (it decides by rules)"
    : `an ${config.kind} configuration has no weighted terms to tune`
}

/** A weight rounded to 4 significant digits: what the printed configuration carries. */
const round = (w: number): number => (w === 0 ? 0 : Number(w.toPrecision(4)))

/**
 * `config` with each of `weights` set to `|x[i]| * unit` (the search moves `x`, one unit per
 * weight; the absolute value keeps a weight >= 0), rounded to 4 significant digits, named `name`.
 * Terms the configuration leaves out (a `"step-time"` default) are added.
 *
 * @example
 * ```ts
 * import { configAt, tunableWeights } from "./weights.js"
 * import { ownPolicyConfigs } from "@loadledger/policies"
 * const base = ownPolicyConfigs["ledger-scored"]!
 * const ws = tunableWeights(base, 1) as ReadonlyArray<{ term: string; start: number; unit: number }>
 * configAt(base, ws, [2, -0.5], "tuned").terms
 * // => [{ term: "tokens", weight: 2 }, { term: "uncachedPromptTokens", weight: 0.25 }, { term: "kvPressureGate", weight: 0 }]
 * configAt(base, ws, [2, -0.5], "tuned").name // => "tuned"
 * ```
 *
 * @category tune
 * @since 0.6.0
 */
export const configAt = (
  config: PolicyConfig,
  weights: ReadonlyArray<TunedWeight>,
  x: ReadonlyArray<number>,
  name: string
): PolicyConfig => {
  const weightOf = new Map(weights.map((w, i) => [w.term, round(Math.abs(x[i]!) * w.unit)]))
  const terms: Array<TermConfig> = (config.terms ?? []).map((t) =>
    weightOf.has(t.term) ? { ...t, weight: weightOf.get(t.term)! } : t
  )
  for (const w of weights)
    if (!terms.some((t) => t.term === w.term)) terms.push({ term: w.term, weight: weightOf.get(w.term)! })
  return { ...config, name, terms }
}

/**
 * The search's starting point for `weights`: each start in its units (1, or 0 for a weight that
 * starts at 0).
 *
 * @example
 * ```ts
 * import { startPoint } from "./weights.js"
 * startPoint([{ term: "tokens", start: 1, unit: 1 }, { term: "homeCredit", start: 0, unit: 0.3 }]) // => [1, 0]
 * ```
 *
 * @category tune
 * @since 0.6.0
 */
export const startPoint = (weights: ReadonlyArray<TunedWeight>): Array<number> =>
  weights.map((w) => w.start / w.unit)
