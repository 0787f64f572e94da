/**
 * The mark law (issue 35, item 5): a mark a router keeps on a worker (an ejection, an overload
 * mark) is cleared by the first evidence that clears it, within one poll interval, and by nothing
 * else.
 *
 * Field reports: sgl-project/sglang #31206 (a circuit breaker that stops at half-open: the
 * recovered prefill worker stays "permanent fake-dead"), ai-dynamo/dynamo #12138 (a worker marked
 * overloaded from the request path is excluded "forever, even when the worker is idle and healthy";
 * the fix clears the mark on every healthy load sample), and sgl-project/sglang #25811 (client 4xx
 * answers counted as worker failures open the breaker: a mark made by evidence that is not about
 * the worker).
 *
 * @since 0.5.0
 */
import fc from "fast-check"

/**
 * What the mark law drives, for one worker of a router: `mark` (e.g. a passive ejection after
 * failed requests), `report` (one poll of that worker: a healthy load report or a failed poll),
 * `clientError` (a request the worker refused as the client's mistake, e.g. HTTP 400: no evidence
 * against it; optional), and `usable` (its ranks may be chosen now).
 *
 * @category laws
 * @since 0.5.0
 */
export interface MarkHarness {
  readonly mark: (now: number) => void
  readonly report: (healthy: boolean, now: number) => void
  readonly clientError?: ((now: number) => void) | undefined
  readonly usable: (now: number) => boolean
}

type MarkOp = "mark" | "healthy" | "failed" | "client-error"

/**
 * The mark law as a fast-check property over random sequences of marks, healthy reports, failed
 * polls and client errors (time moving forward): the worker is usable exactly when its last poll
 * was healthy and no mark came after that poll. So a mark holds while polls fail, and the first
 * healthy report after it (the next poll) clears it; a client error never marks.
 *
 * **When to use**: on the router (its passive ejection, with a hold longer than the trace) and on
 * any state that marks a worker. `make` builds a fresh harness per run.
 *
 * @example
 * ```ts
 * import { markClearedLaw } from "@loadledger/testing"
 * import fc from "fast-check"
 * const make = () => {
 *   let marked = false
 *   let ok = false
 *   return {
 *     mark: () => void (marked = true),
 *     report: (healthy: boolean) => void ((ok = healthy), healthy && (marked = false)),
 *     usable: () => ok && !marked
 *   }
 * }
 * fc.check(markClearedLaw({ make }), { numRuns: 50 }).failed // => false
 * ```
 *
 * @category laws
 * @since 0.5.0
 */
export const markClearedLaw = (options: {
  readonly make: () => MarkHarness
}): fc.IProperty<[ReadonlyArray<MarkOp>]> =>
  fc.property(
    fc.array(fc.constantFrom<MarkOp>("mark", "healthy", "failed", "client-error"), { maxLength: 30 }),
    (ops) => {
      const h = options.make()
      let ok = false
      let marked = false
      let now = 1
      for (const o of ops) {
        now += 0.5
        if (o === "mark") {
          h.mark(now)
          marked = true
        } else if (o === "client-error") {
          if (h.clientError === undefined) continue
          h.clientError(now)
        } else {
          h.report(o === "healthy", now)
          ok = o === "healthy"
          if (ok) marked = false
        }
        if (h.usable(now) !== (ok && !marked)) return false
      }
      return true
    }
  )
