/**
 * Dynamo's temperature sampling over worker costs (lower cost, higher probability).
 *
 * @since 0.2.0
 */

/**
 * Probabilities of Dynamo's `softmax_sample_index` over `costs` at temperature `temperature` (> 0),
 * in the order given; evaluation order follows upstream (min/max fold, magnitude rescale for an
 * infinite range, sequential sum).
 *
 * **When to use**: to see the distribution the Dynamo KV router samples from when
 * `router_temperature > 0`; {@link softmaxSampleIndex} draws from it.
 *
 * Upstream: ai-dynamo/dynamo `lib/kv-router/src/scheduling/selector/default.rs`
 * (`softmax_sample_index`) at 07a6c9ce3bb096cfaf353fe69ee578e105c6a512.
 *
 * @example
 * ```ts
 * import { Dynamo } from "@loadledger/policies"
 * Dynamo.softmaxProbabilities([3, 3], 0.5) // => [0.5, 0.5]
 * const p = Dynamo.softmaxProbabilities([-1.7976931348623157e308, 1.7976931348623157e308], 1)
 * p[0]! > p[1]! // => true
 * ```
 *
 * @category dynamo
 * @since 0.2.0
 */
export const softmaxProbabilities = (costs: ReadonlyArray<number>, temperature: number): Array<number> => {
  const n = costs.length
  let mn = Number.POSITIVE_INFINITY
  let mx = Number.NEGATIVE_INFINITY
  for (const c of costs) {
    mn = Math.min(mn, c)
    mx = Math.max(mx, c)
  }
  let p: Array<number>
  if (mn === mx) p = costs.map(() => 1 / n)
  else {
    const range = mx - mn
    const mag = Number.isFinite(range) ? 1.0 : Math.max(Math.abs(mn), Math.abs(mx))
    const mnn = mn / mag
    const scale = -1.0 / ((mx / mag - mnn) * temperature)
    const ms = mnn * scale
    p = costs.map((c) => Math.exp((c / mag) * scale - ms))
  }
  let s = 0
  for (const x of p) s += x
  return p.map((x) => x / s)
}

/**
 * Dynamo's `softmax_sample_index`: the index picked by the uniform draw `u` in [0, 1) (upstream
 * `fastrand::f64()`) from {@link softmaxProbabilities}: the first index whose cumulative
 * probability reaches `u`, else the last.
 *
 * **When to use**: sampling a worker by cost at a positive temperature with an explicit draw.
 *
 * Upstream: ai-dynamo/dynamo `lib/kv-router/src/scheduling/selector/default.rs`
 * (`softmax_sample_index`) at 07a6c9ce3bb096cfaf353fe69ee578e105c6a512.
 *
 * @example
 * ```ts
 * import { Dynamo } from "@loadledger/policies"
 * Dynamo.softmaxSampleIndex([3, 3, 3], 0.5, 0.59) // => 1
 * // costs 0 and 100 at T = 1: probabilities 1/(1+e^-1) and e^-1/(1+e^-1)
 * Dynamo.softmaxSampleIndex([0, 100], 1, 0.5) // => 0
 * Dynamo.softmaxSampleIndex([0, 100], 1, 0.99) // => 1
 * ```
 *
 * @category dynamo
 * @since 0.2.0
 */
export const softmaxSampleIndex = (costs: ReadonlyArray<number>, temperature: number, u: number): number => {
  const p = softmaxProbabilities(costs, temperature)
  let cum = 0
  for (let i = 0; i < p.length; i++) {
    cum += p[i]!
    if (u <= cum) return i
  }
  return p.length - 1
}
