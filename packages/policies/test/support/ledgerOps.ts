// Random operation sequences over a policy (observe / route / finish / setStatus), for the tests
// that hold two policies to the same decisions. Rows cover the ledger contract's cases: stale and
// out-of-order timestamps, absent counts, `unknown` rows, KV gauges and free KV, waiting uncached
// tokens; requests sometimes share prefix blocks, are pinned (validly or not) or reuse an id.
import fc from "fast-check"
import type { Policy, RankLoad, RouteRequest } from "../../src/index.js"

export type Op =
  | { readonly op: "observe"; readonly rows: ReadonlyArray<RankLoad> }
  | { readonly op: "route"; readonly request: RouteRequest }
  | { readonly op: "finish"; readonly picks: ReadonlyArray<number>; readonly unknownId: boolean }
  | { readonly op: "status"; readonly status: ReadonlyArray<boolean> }

export interface OpCase {
  readonly dpSize: number
  readonly ops: ReadonlyArray<readonly [gapSeconds: number, op: Op]>
}

const opt = <A>(a: fc.Arbitrary<A>) => fc.option(a, { nil: undefined, freq: 2 })

const rowArb = (dpRank: number): fc.Arbitrary<RankLoad> =>
  fc.oneof(
    {
      weight: 8,
      arbitrary: fc.record({
        dpRank: fc.constant(dpRank),
        // a lag behind "now" (filled in by the runner): fresh, stale, or older than the held row
        timestamp: fc.constantFrom(0, 0.05, 0.3, 1.5, 4),
        numRunningReqs: opt(fc.nat({ max: 40 })),
        numWaitingReqs: fc.option(fc.nat({ max: 40 }), { nil: undefined, freq: 8 }),
        numTotalTokens: fc.option(fc.nat({ max: 60_000 }), { nil: undefined, freq: 8 }),
        // near the KV-pressure thresholds (0.9 / 0.99) often
        kvCacheUsage: opt(
          fc.oneof(
            fc.constantFrom(0.5, 0.89, 0.9, 0.98, 0.99, 1),
            fc.integer({ min: 0, max: 100 }).map((p) => p / 100)
          )
        ),
        kvAvailableTokens: opt(fc.nat({ max: 12_000 })),
        numWaitingUncachedTokens: opt(fc.nat({ max: 20_000 }))
      })
    },
    {
      weight: 1,
      arbitrary: fc.constant<RankLoad>({
        dpRank,
        timestamp: 0,
        unknown: { reason: "not-reported", message: "test" }
      })
    }
  )

const blocks = fc.array(fc.constantFrom("a", "b", "c", "d", "e"), { maxLength: 4 })

const opArb = (dpSize: number): fc.Arbitrary<Op> =>
  fc.oneof(
    {
      weight: 2,
      arbitrary: fc
        .subarray(
          Array.from({ length: dpSize }, (_, r) => r),
          { minLength: 1 }
        )
        .chain((ranks) => fc.tuple(...ranks.map(rowArb)))
        .map((rows): Op => ({ op: "observe", rows }))
    },
    {
      weight: 6,
      arbitrary: fc
        .record({
          id: fc.nat({ max: 60 }),
          inputLength: fc.integer({ min: 1, max: 8192 }),
          prefixHashes: opt(blocks),
          routedDpRank: fc.option(fc.integer({ min: -1, max: dpSize }), { nil: undefined, freq: 8 })
        })
        .map(
          ({ id, ...r }): Op => ({
            op: "route",
            request: {
              requestId: `q${id}`,
              inputLength: r.inputLength,
              ...(r.prefixHashes === undefined ? {} : { prefixHashes: r.prefixHashes }),
              ...(r.routedDpRank === undefined ? {} : { routedDpRank: r.routedDpRank })
            }
          })
        )
    },
    {
      weight: 2,
      arbitrary: fc
        .record({ picks: fc.array(fc.nat({ max: 60 }), { maxLength: 3 }), unknownId: fc.boolean() })
        .map((x): Op => ({ op: "finish", ...x }))
    },
    {
      weight: 1,
      arbitrary: fc
        .array(fc.boolean(), { minLength: dpSize, maxLength: dpSize })
        .map((status): Op => ({ op: "status", status }))
    }
  )

export const opCaseArb: fc.Arbitrary<OpCase> = fc.integer({ min: 1, max: 8 }).chain((dpSize) =>
  fc.record({
    dpSize: fc.constant(dpSize),
    ops: fc.array(fc.tuple(fc.constantFrom(0, 0.001, 0.02, 0.2, 0.7), opArb(dpSize)), {
      minLength: 4,
      maxLength: 80,
      size: "medium"
    })
  })
)

/** What a run decided: the rank (or error reason) of every route, and the state at the end. */
export interface Replay<S> {
  readonly decisions: Array<number | string>
  readonly scores: Array<number | undefined>
  readonly state: S
  readonly now: number
}

/** Run `c` through `policy` from t = 10 s; a row's timestamp is `now - lag`. */
export const replay = <S>(policy: Policy<S>, c: OpCase): Replay<S> => {
  let s = policy.init(c.dpSize)
  let now = 10
  const decisions: Array<number | string> = []
  const scores: Array<number | undefined> = []
  for (const [gap, o] of c.ops) {
    now += gap
    if (o.op === "observe")
      s = policy.observe(
        s,
        o.rows.map((row) => ({ ...row, timestamp: now - row.timestamp! })),
        now
      )
    else if (o.op === "route") {
      const r = policy.route(s, o.request, now)
      decisions.push(r._tag === "Routed" ? r.rank : r.reason)
      scores.push(r._tag === "Routed" ? r.explanation.scores?.[r.rank] : undefined)
      if (r._tag === "Routed") s = r.state
    } else if (o.op === "finish")
      s = policy.finish(s, [...o.picks.map((k) => `q${k}`), ...(o.unknownId ? ["nope"] : [])], now)
    else s = policy.setStatus(s, o.status)
  }
  return { decisions, scores, state: s, now }
}
