/**
 * Generators and the runner behind the policy laws.
 *
 * @internal
 */
import type { Policy, RankLoad, RouteRequest, RouteResult } from "@loadledger/policies"
import fc from "fast-check"
import type { LoadField, PolicyArbitraries, PolicyScenario } from "../LawTypes.js"

/** The load fields the unknown law can hide. @internal */
export const loadFields: ReadonlyArray<LoadField> = [
  "numRunningReqs",
  "numWaitingReqs",
  "numTotalTokens",
  "kvCacheUsage",
  "numWaitingUncachedTokens"
]

/** Timestamp 1..1000 s, 0..64 running and waiting, 0..200000 tokens, every field present. @internal */
export const defaultLoad = (dpRank: number): fc.Arbitrary<RankLoad> =>
  fc.record({
    dpRank: fc.constant(dpRank),
    timestamp: fc.integer({ min: 1000, max: 1_000_000 }).map((ms) => ms / 1000),
    numRunningReqs: fc.nat({ max: 64 }),
    numWaitingReqs: fc.nat({ max: 64 }),
    numTotalTokens: fc.nat({ max: 200_000 })
  })

const defaultRequest: fc.Arbitrary<RouteRequest> = fc.record({
  requestId: fc.uuid(),
  inputLength: fc.integer({ min: 1, max: 8192 })
})

/** Scenarios per {@link PolicyArbitraries}; half of them give every rank the same snapshot. @internal */
export const scenarioArb = (a: PolicyArbitraries): fc.Arbitrary<PolicyScenario> =>
  (a.dpSize ?? fc.integer({ min: 1, max: 16 }))
    .chain((dpSize) =>
      fc.record({
        dpSize: fc.constant(dpSize),
        status: fc.array(fc.boolean(), { minLength: dpSize, maxLength: dpSize }),
        loads: fc.tuple(...Array.from({ length: dpSize }, (_, r) => (a.load ?? defaultLoad)(r))),
        requests: fc.array(a.request ?? defaultRequest, { minLength: 1, maxLength: a.maxRequests ?? 24 }),
        startSeconds: fc.integer({ min: 1000, max: 100_000 }).map((ms) => ms / 1000),
        gapsSeconds: fc.array(
          fc.nat({ max: 50 }).map((ms) => ms / 1000),
          { minLength: 24, maxLength: 24 }
        ),
        // half the scenarios are an idle or freshly started cluster: every rank reports the same
        // snapshot, where ties (and tie-breaking rules) decide
        uniform: fc.boolean()
      })
    )
    .map(({ uniform, ...sc }) =>
      uniform ? { ...sc, loads: sc.loads.map((_, dpRank) => ({ ...sc.loads[0]!, dpRank })) } : sc
    )

/** The outcome of {@link run}: every result, the last state, and each decision (rank or error reason). @internal */
export interface Run<S> {
  readonly results: ReadonlyArray<RouteResult<S>>
  readonly state: S
  readonly decisions: ReadonlyArray<number | string>
}

/** Route every request of a scenario; errors keep the state (or the error's `state`). @internal */
export const run = <S>(policy: Policy<S>, sc: PolicyScenario): Run<S> => {
  let s = policy.observe(policy.setStatus(policy.init(sc.dpSize), sc.status), sc.loads, sc.startSeconds)
  let now = sc.startSeconds
  const results: Array<RouteResult<S>> = []
  sc.requests.forEach((req, i) => {
    const gap = sc.gapsSeconds[i % sc.gapsSeconds.length]
    if (gap !== undefined) now += gap
    const out = policy.route(s, req, now)
    results.push(out)
    if (out._tag === "Routed") s = out.state
    else if (out.state !== undefined) s = out.state as S
  })
  return { results, state: s, decisions: results.map((r) => (r._tag === "Routed" ? r.rank : r.reason)) }
}

/** The first decision of `sc` with `loads` in place of its own. @internal */
export const firstDecision = <S>(policy: Policy<S>, sc: PolicyScenario, loads: ReadonlyArray<RankLoad>) =>
  run(policy, { ...sc, loads, requests: sc.requests.slice(0, 1) }).decisions[0]

/** The scenario with every rank healthy. @internal */
export const allHealthy = (sc: PolicyScenario): PolicyScenario => ({
  ...sc,
  status: sc.status.map(() => true)
})
