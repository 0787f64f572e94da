/**
 * AIBrix's power-of-two-choices router.
 *
 * @since 0.2.0
 */
import { type DrawSource, drawAt } from "../Draws.js"

/**
 * A power-of-two decision: the chosen candidate index, the two candidates compared (equal when
 * there is one candidate) and the draws used.
 *
 * @category aibrix
 * @since 0.2.0
 */
export interface AibrixPowerOfTwo {
  readonly index: number
  readonly pair: readonly [number, number]
  readonly drawsUsed: number
}

/**
 * AIBrix `power-of-two` over the candidates' request counts (upstream: its own Redis counters,
 * incremented on route and decremented when the request is done): one candidate is taken
 * directly (no draw); otherwise `idx1 = rand.Intn(n)`, `idx2 = rand.Intn(n)` redrawn while equal to
 * `idx1`, and the first wins ties (`count1 <= count2`). `undefined` for no candidate (upstream:
 * "no ready pods available").
 *
 * **When to use**: replaying AIBrix's power-of-two choice with explicit draws.
 *
 * Upstream: vllm-project/aibrix `pkg/plugins/gateway/algorithms/power_of_two.go` (`Route`) at
 * 09d88deda0d152b30bee092ce6043c5adbed2b42. Not covered by the shared vectors; specified and
 * vectored in fixtures/reference/peers/README-extra.md.
 *
 * @example
 * ```ts
 * import { Aibrix } from "@loadledger/policies"
 * Aibrix.powerOfTwo([5, 10, 0], [0, 1]) // => { index: 0, pair: [0, 1], drawsUsed: 2 }
 * Aibrix.powerOfTwo([5, 10, 0], [2, 2, 0]) // => { index: 2, pair: [2, 0], drawsUsed: 3 }
 * ```
 *
 * @category aibrix
 * @since 0.2.0
 */
export const powerOfTwo = (
  counts: ReadonlyArray<number>,
  draws: DrawSource
): AibrixPowerOfTwo | undefined => {
  const n = counts.length
  if (n === 0) return undefined
  if (n === 1) return { index: 0, pair: [0, 0], drawsUsed: 0 }
  let k = 0
  const i1 = drawAt(draws, k++, n)
  let i2 = drawAt(draws, k++, n)
  // a list that keeps repeating idx1 would loop forever; 64 redraws bound it (upstream's PRNG ends it)
  while (i2 === i1 && k < 66) i2 = drawAt(draws, k++, n)
  if (i2 === i1) i2 = (i1 + 1) % n
  return { index: counts[i1]! <= counts[i2]! ? i1 : i2, pair: [i1, i2], drawsUsed: k }
}
