/**
 * Per-rank speed faults: a hardware-slow rank (its compute and HBM at a fraction of nominal,
 * throughout or over a window of simulated time), a slow link (one rank's collectives at a
 * fraction of the link's bandwidth: a degraded NVLink) and a per-step CPU overhead on one rank,
 * applied to a lockstep step's cost as a pure transformation of the step model's `StepCost`.
 *
 * The step model reports each rank's sync wait, so rank i's own time in a step is
 * `busy_i = stepSeconds - syncWaitSeconds[i]` (the slowest rank waits 0). A fault rescales it,
 * `busy_i' = busy_i / speed + commSeconds x (1 / linkSpeed - 1) + overheadSeconds`; the group then
 * waits for the slowest: `stepSeconds' = max_i busy_i'`, `syncWaitSeconds'[i] = stepSeconds' - busy_i'`.
 *
 * **Gotchas**: the whole of a slow rank's time is rescaled, its MoE GEMMs and its share of the
 * collectives included. A slow link lengthens only the step's collectives (`StepCost.commSeconds`;
 * a step model that does not report them gives a slow link nothing to slow).
 *
 * @since 0.6.0
 */
import type { ConfigProblem } from "../engines/Engine.js"
import { bad, shown } from "../internal/configChecks.js"
import type { StepCost } from "../StepModel.js"

/**
 * One rank's fault. `dpRank`: the rank (0-based, below `dpSize`). `speed` (0 < speed <= 1,
 * default 1): the fraction of nominal compute and HBM bandwidth it runs at. `overheadSeconds`
 * (>= 0, default 0): CPU time added to each of its steps (a starved scheduler process).
 * `linkSpeed` (0 < linkSpeed <= 1, default 1; since 0.7.0): the fraction of nominal link bandwidth
 * its collectives run at (a degraded NVLink): the group's collectives wait for it.
 * `fromSeconds` / `toSeconds` (simulated seconds, default 0 / Infinity): the fault applies to the
 * steps that start in `[fromSeconds, toSeconds)`.
 *
 * @category faults
 * @since 0.6.0
 */
export interface RankFault {
  readonly dpRank: number
  readonly speed?: number | undefined
  readonly overheadSeconds?: number | undefined
  readonly linkSpeed?: number | undefined
  readonly fromSeconds?: number | undefined
  readonly toSeconds?: number | undefined
}

/**
 * Check a list of faults for a group of `dpSize` ranks: returns the first bad field (named
 * `rankFaults[i].<field>`) or `undefined`.
 *
 * @example
 * ```ts
 * import { checkRankFaults } from "@loadledger/sim"
 * checkRankFaults([{ dpRank: 3, speed: 0.7 }], 8) // => undefined
 * checkRankFaults([{ dpRank: 8, speed: 0.7 }], 8)?.field // => "rankFaults[0].dpRank"
 * checkRankFaults([{ dpRank: 1, speed: 0 }], 8)?.message // => "rankFaults[0].speed must be a number in (0, 1], got 0"
 * checkRankFaults([{ dpRank: 1, linkSpeed: 2 }], 8)?.field // => "rankFaults[0].linkSpeed"
 * ```
 *
 * @category faults
 * @since 0.6.0
 */
export const checkRankFaults = (faults: unknown, dpSize: number): ConfigProblem | undefined => {
  if (!Array.isArray(faults))
    return bad("rankFaults", "an array of { dpRank, speed?, linkSpeed?, overheadSeconds? }", faults)
  for (let i = 0; i < faults.length; i++) {
    const f = faults[i] as Record<string, unknown> | null
    const at = `rankFaults[${i}]`
    if (typeof f !== "object" || f === null) return bad(at, "an object", f)
    const { dpRank, speed, overheadSeconds, linkSpeed, fromSeconds, toSeconds } = f
    if (!(typeof dpRank === "number" && Number.isSafeInteger(dpRank) && dpRank >= 0 && dpRank < dpSize))
      return bad(`${at}.dpRank`, `an integer from 0 to ${dpSize - 1}`, dpRank)
    if (speed !== undefined && !(typeof speed === "number" && speed > 0 && speed <= 1))
      return bad(`${at}.speed`, "a number in (0, 1]", speed)
    if (linkSpeed !== undefined && !(typeof linkSpeed === "number" && linkSpeed > 0 && linkSpeed <= 1))
      return bad(`${at}.linkSpeed`, "a number in (0, 1]", linkSpeed)
    if (
      overheadSeconds !== undefined &&
      !(typeof overheadSeconds === "number" && overheadSeconds >= 0 && Number.isFinite(overheadSeconds))
    )
      return bad(`${at}.overheadSeconds`, "a finite number >= 0", overheadSeconds)
    if (fromSeconds !== undefined && !(typeof fromSeconds === "number" && fromSeconds >= 0))
      return bad(`${at}.fromSeconds`, "a number >= 0", fromSeconds)
    const from = (fromSeconds as number | undefined) ?? 0
    if (toSeconds !== undefined && !(typeof toSeconds === "number" && toSeconds > from))
      return {
        field: `${at}.toSeconds`,
        message: `${at}.toSeconds must be a number > ${from}, got ${shown(toSeconds)}`
      }
  }
  return undefined
}

/** The cost with its waits as a plain array. */
const waitsOf = (cost: StepCost, n: number): ReadonlyArray<number> =>
  cost.syncWaitSeconds ?? Array.from({ length: n }, (_, i) => cost.ranks[i]?.syncWaitSeconds ?? 0)

/**
 * Apply the faults active at `atSeconds` to a step's cost. `rankIds[i]` is the global rank of the
 * cost's i-th rank (a non-lockstep run charges one rank at a time). Pure: returns `cost` itself
 * when no fault applies, else a new cost (the token imbalance ratio is unchanged: the tokens are).
 *
 * @example
 * ```ts
 * import { applyRankFaults } from "@loadledger/sim"
 * const cost = { stepSeconds: 0.03, tokenImbalanceRatio: 1, ranks: [], syncWaitSeconds: [0, 0] }
 * const slow = applyRankFaults(cost, [0, 1], [{ dpRank: 1, speed: 0.5 }], 10)
 * slow.stepSeconds // => 0.06
 * slow.syncWaitSeconds // => [0.03, 0]
 * applyRankFaults(cost, [0, 1], [{ dpRank: 1, speed: 0.5, fromSeconds: 20 }], 10) === cost // => true
 * // a link at a quarter of its bandwidth: 4 ms of collectives take 16 ms
 * const linked = applyRankFaults({ ...cost, commSeconds: 0.004 }, [0, 1], [{ dpRank: 0, linkSpeed: 0.25 }], 10)
 * linked.stepSeconds // => 0.042
 * linked.syncWaitSeconds // => [0, 0.012]
 * ```
 *
 * @category faults
 * @since 0.6.0
 */
export const applyRankFaults = (
  cost: StepCost,
  rankIds: ReadonlyArray<number>,
  faults: ReadonlyArray<RankFault>,
  atSeconds: number
): StepCost => {
  const active = faults.filter(
    (f) => atSeconds >= (f.fromSeconds ?? 0) && atSeconds < (f.toSeconds ?? Number.POSITIVE_INFINITY)
  )
  if (active.length === 0) return cost
  const n = rankIds.length
  const waits = waitsOf(cost, n)
  const busy = new Array<number>(n)
  const comm = cost.commSeconds ?? 0
  let hit = false
  for (let i = 0; i < n; i++) {
    let b = cost.stepSeconds - (waits[i] ?? 0)
    for (const f of active)
      if (f.dpRank === rankIds[i]) {
        b = b / (f.speed ?? 1) + comm * (1 / (f.linkSpeed ?? 1) - 1) + (f.overheadSeconds ?? 0)
        hit = true
      }
    busy[i] = b
  }
  if (!hit) return cost
  let step = 0
  for (const b of busy) if (b > step) step = b
  const syncWaitSeconds = busy.map((b) => step - b)
  return {
    stepSeconds: step,
    tokenImbalanceRatio: cost.tokenImbalanceRatio,
    syncWaitSeconds,
    ...(cost.commSeconds === undefined ? {} : { commSeconds: cost.commSeconds }),
    ranks: syncWaitSeconds.map((w) => ({ syncWaitSeconds: w }))
  }
}
