/**
 * llm-d's pickers with explicit draws in place of Go's unseeded `math/rand/v2`.
 *
 * @since 0.2.0
 */

import { type DrawSource, drawAt } from "../Draws.js"

/**
 * A picker's choice: the index into the scored candidates and how many draws it used.
 *
 * @category llm-d
 * @since 0.2.0
 */
export interface LlmdPick {
  readonly index: number
  readonly drawsUsed: number
}

const shuffled = (n: number, draws: DrawSource): { order: Array<number>; used: number } => {
  const order = Array.from({ length: n }, (_, i) => i)
  let k = 0
  for (let i = n - 1; i >= 1; i--) {
    const j = drawAt(draws, k++, i + 1)
    const t = order[i]!
    order[i] = order[j]!
    order[j] = t
  }
  return { order, used: k }
}

/**
 * `max-score-picker` (one endpoint): Go `Shuffle` (Fisher-Yates from the end, one integer draw
 * `0 <= j <= i` per position, n - 1 draws), then a stable sort by score descending, then the first.
 * Ties therefore go where the draws put them.
 *
 * **When to use**: replaying llm-d's default picker with explicit draws.
 *
 * Upstream: llm-d/llm-d-router `pkg/epp/framework/plugins/scheduling/picker/maxscore/picker.go` and
 * `picker/common.go` at ebab687927f5331c1b39defcb579a07951bce56c.
 *
 * @example
 * ```ts
 * import { LlmD } from "@loadledger/policies"
 * // the draws shuffle [0, 1, 2] to [1, 2, 0]: the first top score in that order wins
 * LlmD.maxScorePick([1, 3, 3], [0, 0]) // => { index: 1, drawsUsed: 2 }
 * LlmD.maxScorePick([1, 3, 3], [1, 0]) // => { index: 2, drawsUsed: 2 }
 * ```
 *
 * @category llm-d
 * @since 0.2.0
 */
export const maxScorePick = (scores: ReadonlyArray<number>, draws: DrawSource): LlmdPick => {
  const { order, used } = shuffled(scores.length, draws)
  let best = order[0] ?? 0
  for (const i of order) if (scores[i]! > scores[best]!) best = i
  return { index: best, drawsUsed: used }
}

/**
 * `random-picker`: the same shuffle, then the first.
 *
 * @example
 * ```ts
 * import { LlmD } from "@loadledger/policies"
 * LlmD.randomPick(3, [0, 0]) // => { index: 1, drawsUsed: 2 }
 * ```
 *
 * @category llm-d
 * @since 0.2.0
 */
export const randomPick = (n: number, draws: DrawSource): LlmdPick => {
  const { order, used } = shuffled(n, draws)
  return { index: order[0] ?? 0, drawsUsed: used }
}

/**
 * `weighted-random-picker` (A-Res): with no positive score, the random picker; else per candidate
 * in order a key `u^(1/score)` from a uniform draw `u` in [0, 1) (`u == 0` becomes 1e-10; a score
 * <= 0 gets key 0 and no draw), and the largest key wins (the first on an exact tie).
 *
 * Upstream: llm-d/llm-d-router `pkg/epp/framework/plugins/scheduling/picker/weightedrandom/picker.go`
 * at ebab687927f5331c1b39defcb579a07951bce56c.
 *
 * @example
 * ```ts
 * import { LlmD } from "@loadledger/policies"
 * LlmD.weightedRandomPick([0.5, 1], [0.9, 0.5]) // => { index: 0, drawsUsed: 2 }
 * ```
 *
 * @category llm-d
 * @since 0.2.0
 */
export const weightedRandomPick = (scores: ReadonlyArray<number>, draws: DrawSource): LlmdPick => {
  if (!scores.some((s) => s > 0)) return randomPick(scores.length, draws)
  let k = 0
  let best = 0
  let bestKey = Number.NEGATIVE_INFINITY
  scores.forEach((s, i) => {
    let key = 0
    if (s > 0) {
      const u0 = drawAt(draws, k++, 0)
      const u = u0 === 0 ? 1e-10 : u0
      key = u ** (1 / s)
    }
    if (key > bestKey) {
      bestKey = key
      best = i
    }
  })
  return { index: best, drawsUsed: k }
}
