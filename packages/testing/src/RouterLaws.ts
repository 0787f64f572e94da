/**
 * State laws on a router (issue 35, item 5), written over a small harness so that they apply to
 * any router, the live one over every registered policy included, without this package depending
 * on it: in-flight counts are released on abort, a worker over an overload bound is never chosen
 * while another is under it (and when all are over the answer is an explicit rejection), and a
 * mark (an ejection) is cleared by the first evidence that clears it.
 *
 * Field reports: vllm-project/router #215 (the load count is not released when a client
 * disconnects: "every aborted request leaks exactly one load count, permanently"), and
 * smg-project/smg #2220 / #2518 and ai-dynamo/dynamo #9688 (over-threshold workers left in the
 * candidate set; when every worker is over, an explicit overload refusal, not "no instances").
 * The mark law is in `MarkLaw.ts`.
 *
 * @since 0.5.0
 */
import fc from "fast-check"

/**
 * What a router law drives: `route` places request `id` (a rank, or a rejection with its
 * reason), `release` ends one (`"finish"` or `"abort"`; an id not in flight must be a no-op),
 * `inflight` reads the router's per-rank in-flight counts.
 *
 * @category laws
 * @since 0.5.0
 */
export interface RouterHarness {
  readonly route: (
    id: string,
    now: number
  ) =>
    | { readonly _tag: "Placed"; readonly rank: number }
    | { readonly _tag: "Rejected"; readonly reason: string }
  readonly release: (id: string, how: "finish" | "abort", now: number) => void
  readonly inflight: () => ReadonlyArray<number>
}

type Op =
  | { readonly op: "route" }
  | { readonly op: "finish" | "abort"; readonly pick: number }
  | { readonly op: "abort-again" | "abort-unknown" }

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.constant({ op: "route" as const }) },
  {
    weight: 2,
    arbitrary: fc.record({ op: fc.constantFrom("finish" as const, "abort" as const), pick: fc.nat(99) })
  },
  {
    weight: 1,
    arbitrary: fc.record({ op: fc.constantFrom("abort-again" as const, "abort-unknown" as const) })
  }
)

const countsOf = (truth: ReadonlyMap<string, number>, dpSize: number): Array<number> => {
  const out = Array.from({ length: dpSize }, () => 0)
  for (const r of truth.values()) out[r] = out[r]! + 1
  return out
}

/**
 * Drive `make()` through `ops`, calling `check(result, countsBefore)` on each placement; returns
 * false at the first in-flight count that differs from the truth.
 */
const drive = (
  make: () => RouterHarness,
  dpSize: number,
  ops: ReadonlyArray<Op>,
  check: (r: ReturnType<RouterHarness["route"]>, before: ReadonlyArray<number>) => boolean
): boolean => {
  const h = make()
  const truth = new Map<string, number>()
  const ended: Array<string> = []
  let next = 0
  let now = 1
  const same = () => JSON.stringify(h.inflight()) === JSON.stringify(countsOf(truth, dpSize))
  for (const o of ops) {
    now += 0.01
    if (o.op === "route") {
      const id = `req-${next++}`
      const before = countsOf(truth, dpSize)
      const r = h.route(id, now)
      if (!check(r, before)) return false
      if (r._tag === "Placed") truth.set(id, r.rank)
    } else {
      const live = [...truth.keys()]
      let id: string | undefined
      if (o.op === "abort-unknown") id = "never-placed"
      else if (o.op === "abort-again") id = ended[ended.length - 1]
      else if ("pick" in o && live.length > 0) id = live[o.pick % live.length]
      if (id === undefined) continue
      h.release(id, o.op === "finish" ? "finish" : "abort", now)
      if (truth.delete(id)) ended.push(id)
    }
    if (!same()) return false
  }
  for (const id of [...truth.keys()]) {
    h.release(id, "abort", now)
    truth.delete(id)
  }
  return same()
}

/**
 * The release-on-abort law: over any interleaving of routes, finishes and aborts (an abort of a
 * request already ended, of one never placed), the router's per-rank in-flight counts equal the
 * requests placed and not yet ended, and are all 0 once every request is released.
 *
 * **When to use**: on a router (e.g. the live router's pure core over each registered policy);
 * `make` builds a fresh one per run. Returns a fast-check property for `fc.assert`.
 *
 * @example
 * ```ts
 * import { releaseOnAbortLaw } from "@loadledger/testing"
 * import fc from "fast-check"
 * const make = () => {
 *   const at = new Map<string, number>()
 *   const counts = [0, 0]
 *   return {
 *     route: (id: string) => {
 *       const rank = counts[0]! <= counts[1]! ? 0 : 1
 *       at.set(id, rank)
 *       counts[rank]!++
 *       return { _tag: "Placed" as const, rank }
 *     },
 *     release: (id: string) => {
 *       const rank = at.get(id)
 *       if (rank !== undefined) counts[rank]!--
 *       at.delete(id)
 *     },
 *     inflight: () => counts
 *   }
 * }
 * fc.check(releaseOnAbortLaw({ make, dpSize: 2 }), { numRuns: 20 }).failed // => false
 * ```
 *
 * @category laws
 * @since 0.5.0
 */
export const releaseOnAbortLaw = (options: {
  readonly make: () => RouterHarness
  readonly dpSize: number
}): fc.IProperty<[ReadonlyArray<Op>]> =>
  fc.property(fc.array(opArb, { maxLength: 50 }), (ops) =>
    drive(options.make, options.dpSize, ops, () => true)
  )

/**
 * The overload-bound law: with a bound of `bound` requests in flight per rank, a placement is on
 * a rank under the bound whenever one is, and when every rank is at or over it the answer is a
 * rejection whose reason is `rejectReason` (default `"Overloaded"`), never a placement; the
 * in-flight counts stay exact meanwhile (see `releaseOnAbortLaw`).
 *
 * **When to use**: on a router given that bound, all `dpSize` ranks usable. Returns a fast-check
 * property for `fc.assert`.
 *
 * @example
 * ```ts
 * import { overloadBoundLaw } from "@loadledger/testing"
 * import fc from "fast-check"
 * // a router that always picks rank 0 breaks it as soon as rank 0 is full
 * const make = () => {
 *   const at = new Set<string>()
 *   return {
 *     route: (id: string) => (at.add(id), { _tag: "Placed" as const, rank: 0 }),
 *     release: (id: string) => void at.delete(id),
 *     inflight: () => [at.size, 0]
 *   }
 * }
 * fc.check(overloadBoundLaw({ make, dpSize: 2, bound: 1 }), { seed: 1 }).failed // => true
 * ```
 *
 * @category laws
 * @since 0.5.0
 */
export const overloadBoundLaw = (options: {
  readonly make: () => RouterHarness
  readonly dpSize: number
  readonly bound: number
  readonly rejectReason?: string | undefined
}): fc.IProperty<[ReadonlyArray<Op>]> => {
  const reason = options.rejectReason ?? "Overloaded"
  return fc.property(fc.array(opArb, { maxLength: 50 }), (ops) =>
    drive(options.make, options.dpSize, ops, (r, before) => {
      const anyUnder = before.some((c) => c < options.bound)
      if (r._tag === "Rejected") return !anyUnder && r.reason === reason
      return anyUnder && before[r.rank]! < options.bound
    })
  )
}
