/**
 * The black-box search of `loadledger tune`: Nelder-Mead (the downhill simplex, `fmin`'s
 * `nelderMead`, benfred/fmin 0.0.4) over a few continuous weights, within a budget of
 * evaluations, restarted from the best point while the budget lasts and the restart finds better.
 *
 * @since 0.6.0
 */
import "fmin"

/** `fmin`'s Nelder-Mead, as its README documents it. */
type NelderMead = (
  f: (x: Array<number>) => number,
  x0: Array<number>,
  parameters?: {
    readonly maxIterations?: number
    readonly nonZeroDelta?: number
    readonly zeroDelta?: number
    readonly minErrorDelta?: number
    readonly minTolerance?: number
    readonly sigma?: number
  }
) => { readonly fx: number; readonly x: Array<number> }

/**
 * fmin 0.0.4 ships one UMD file under `"type": "module"`: imported as ESM it defines no export and
 * sets `globalThis.fmin` instead (its UMD fallback). Read it from there.
 */
const nelderMead = (): NelderMead => {
  const f = (globalThis as { fmin?: { nelderMead?: NelderMead } }).fmin?.nelderMead
  if (typeof f !== "function") throw new Error("the fmin package did not load (no fmin.nelderMead)")
  return f
}

/** Thrown inside the objective to stop `nelderMead` when the budget is spent. */
class BudgetSpent extends Error {}

/**
 * One evaluation of the search: the point, its value (higher is better) and its index.
 *
 * @category tune
 * @since 0.6.0
 */
export interface Evaluation {
  readonly x: ReadonlyArray<number>
  readonly value: number
  readonly index: number
}

/**
 * What `maximise` found: the best point (the start when nothing beat it: an improvement must be
 * strict), its value, the start's value and every evaluation in order.
 *
 * @category tune
 * @since 0.6.0
 */
export interface SearchResult {
  readonly best: Evaluation
  readonly start: Evaluation
  readonly evaluations: ReadonlyArray<Evaluation>
}

/**
 * Maximise `f` from `x0` with at most `budget` evaluations (`budget` >= 1): Nelder-Mead with a
 * first simplex one unit from `x0` along each axis (a weight at 0 moves to 1 unit, another by 50%),
 * restarted from the best point found (with a new first simplex around it, in place of the shrink
 * step) while budget is left and the last run improved on it.
 * Points already evaluated (to 1e-9) are not evaluated again. `onEvaluation` is called after each.
 *
 * @example
 * ```ts
 * import { maximise } from "./search.js"
 * const r = maximise((x) => -((x[0]! - 3) ** 2) - (x[1]! + 1) ** 2, [1, 1], { budget: 200 })
 * r.best.x.map((v) => Math.round(v)) // => [3, -1]
 * r.start.value // => -8
 * r.evaluations.length <= 200 // => true
 * ```
 *
 * @category tune
 * @since 0.6.0
 */
export const maximise = (
  f: (x: ReadonlyArray<number>) => number,
  x0: ReadonlyArray<number>,
  options: {
    readonly budget: number
    readonly onEvaluation?: ((e: Evaluation, best: Evaluation) => void) | undefined
  }
): SearchResult => {
  const evaluations: Array<Evaluation> = []
  const seen = new Map<string, number>()
  let best: Evaluation | undefined
  const objective = (x: Array<number>): number => {
    const key = x.map((v) => v.toFixed(9)).join(",")
    const known = seen.get(key)
    if (known !== undefined) return -known
    if (evaluations.length >= options.budget) throw new BudgetSpent()
    const e = { x: [...x], value: f(x), index: evaluations.length }
    evaluations.push(e)
    seen.set(key, e.value)
    if (best === undefined || e.value > best.value) best = e
    options.onEvaluation?.(e, best)
    return -e.value
  }
  const search = nelderMead()
  let from = [...x0]
  for (;;) {
    const before = best?.value
    try {
      // sigma 1: a run ends where Nelder-Mead would shrink the simplex; the loop restarts it from
      // the best point instead. fmin 0.0.4's shrink step (build/fmin.js line 212, `for (i = 1; ...`
      // with `i` undeclared) throws a ReferenceError in strict mode, so it must not be reached.
      search(objective, from, {
        nonZeroDelta: 1.5,
        zeroDelta: 1,
        sigma: 1,
        maxIterations: options.budget * 2
      })
    } catch (e) {
      if (!(e instanceof BudgetSpent)) throw e
      break
    }
    if (evaluations.length >= options.budget || (before !== undefined && !(best!.value > before))) break
    from = [...best!.x]
  }
  return { best: best!, start: evaluations[0]!, evaluations }
}
