/**
 * The in-flight law: a policy's per-rank in-flight counters equal the ground truth after any
 * interleaving of routes, completions, aborts and snapshots (fault case S06).
 *
 * @since 0.1.0
 */
import { isPolicyError, type Policy, type RankLoad } from "@loadledger/policies"
import fc from "fast-check"

/**
 * What `inflightLaw` needs: the policy, how to read its per-rank in-flight counters from a state,
 * the number of ranks (default 4) and fast-check parameters.
 *
 * @category laws
 * @since 0.1.0
 */
export interface InflightLawOptions<S> {
  readonly policy: Policy<S>
  readonly inflightOf: (state: S) => ReadonlyArray<number>
  readonly dpSize?: number | undefined
  readonly numRuns?: number | undefined
  readonly seed?: number | undefined
}

/** One operation of a generated request life-cycle trace. */
type Op =
  | { readonly op: "route"; readonly pinned: number | undefined }
  | {
      readonly op: "end"
      readonly picks: ReadonlyArray<number>
      readonly unknown: boolean
      readonly again: boolean
    }
  | { readonly op: "observe"; readonly loads: ReadonlyArray<readonly [number, number, number]> }

const opArb = (dpSize: number): fc.Arbitrary<Op> =>
  fc.oneof(
    {
      weight: 5,
      arbitrary: fc.record({
        op: fc.constant("route" as const),
        pinned: fc.option(fc.nat(dpSize - 1), { nil: undefined })
      })
    },
    {
      weight: 3,
      arbitrary: fc.record({
        op: fc.constant("end" as const),
        picks: fc.array(fc.nat(1000), { maxLength: 4 }),
        unknown: fc.boolean(),
        again: fc.boolean()
      })
    },
    {
      weight: 1,
      arbitrary: fc.record({
        op: fc.constant("observe" as const),
        loads: fc.array(fc.tuple(fc.nat(50), fc.nat(50), fc.double({ min: 0, max: 1, noNaN: true })), {
          minLength: dpSize,
          maxLength: dpSize
        })
      })
    }
  )

/**
 * The in-flight law (fault case S06): after any interleaving of routes (scored or pinned),
 * completions and aborts (several ids at once, ids that already ended, ids the policy never saw)
 * and snapshots, the policy's counter for every rank equals the ground truth: requests it placed
 * on that rank that have not finished or been aborted. A counter that leaks on abort or timeout
 * fails it, with fast-check's shrunk counterexample.
 *
 * **When to use**: for every policy that keeps in-flight bookkeeping (`finish` is not a no-op).
 * Request ids are unique per trace, as in a real server. Returns a fast-check property; run it with
 * `fc.assert` (fast-check is an optional peer dependency of this package).
 *
 * @example
 * ```ts
 * import { makeVllmLb } from "@loadledger/policies"
 * import { inflightLaw } from "@loadledger/testing"
 * import fc from "fast-check"
 * fc.assert(inflightLaw({ policy: makeVllmLb(), inflightOf: (s) => s.lb.inflight }), { numRuns: 50 })
 * ```
 *
 * @category laws
 * @since 0.1.0
 */
export const inflightLaw = <S>(options: InflightLawOptions<S>): fc.IProperty<[ReadonlyArray<Op>]> => {
  const dpSize = options.dpSize ?? 4
  return fc.property(fc.array(opArb(dpSize), { maxLength: 60 }), (ops) => {
    const p = options.policy
    let s = p.init(dpSize)
    const truth = new Map<string, number>()
    const ended: Array<string> = []
    let next = 0
    let now = 0
    for (const o of ops) {
      now += 0.01
      if (o.op === "route") {
        const id = `req-${next++}`
        const r = p.route(s, { requestId: id, inputLength: 16, routedDpRank: o.pinned }, now)
        if (isPolicyError(r)) continue
        s = r.state
        truth.set(id, r.rank)
      } else if (o.op === "end") {
        const live = [...truth.keys()]
        const ids = o.picks.flatMap((k) => (live.length === 0 ? [] : [live[k % live.length]!]))
        if (o.again && ended.length > 0) ids.push(ended[ended.length - 1]!)
        if (o.unknown) ids.push("unknown-id")
        s = p.finish(s, ids, now)
        for (const id of ids) if (truth.delete(id)) ended.push(id)
      } else {
        const loads: Array<RankLoad> = o.loads.map(([w, r, kv], dpRank) => ({
          dpRank,
          timestamp: now,
          numWaitingReqs: w,
          numRunningReqs: r,
          numTotalTokens: 0,
          kvCacheUsage: kv
        }))
        s = p.observe(s, loads, now)
      }
      const expected = Array.from({ length: dpSize }, () => 0)
      for (const rank of truth.values()) expected[rank]! += 1
      const got = options.inflightOf(s)
      for (let i = 0; i < dpSize; i++)
        if (got[i] !== expected[i])
          throw new Error(
            `rank ${i}: in-flight counter ${got[i]} but ground truth ${expected[i]} (after ${o.op})`
          )
    }
  })
}
