/**
 * Reusable fast-check laws every loadledger routing policy can be held to.
 *
 * @since 0.1.0
 */
import { isDeepStrictEqual } from "node:util"
import type { Policy, RankLoad, RouteRequest, RouteResult } from "@loadledger/policies"
import fc from "fast-check"

/**
 * One generated situation: `dpSize` ranks with health `status`, one snapshot per rank observed at
 * `startSeconds`, then `requests` routed at `startSeconds + gapsSeconds[0]`,
 * `+ gapsSeconds[1]`, ... (times in seconds). Half the generated scenarios give every rank the same
 * snapshot (an idle or freshly started cluster), where tie-breaking decides.
 *
 * @category models
 * @since 0.1.0
 */
export interface PolicyScenario {
  readonly dpSize: number
  readonly status: ReadonlyArray<boolean>
  readonly loads: ReadonlyArray<RankLoad>
  readonly requests: ReadonlyArray<RouteRequest>
  readonly startSeconds: number
  readonly gapsSeconds: ReadonlyArray<number>
}

/**
 * Overrides for the generators: `dpSize` (default 1..16), `request` (default: prompt of 1..8192
 * tokens, not pinned, no bootstrap room), `load(dpRank)` (default: timestamp 1..1000 s, 0..64
 * running and waiting, 0..200000 tokens).
 *
 * @category models
 * @since 0.1.0
 */
export interface PolicyArbitraries {
  readonly dpSize?: fc.Arbitrary<number> | undefined
  readonly request?: fc.Arbitrary<RouteRequest> | undefined
  readonly load?: ((dpRank: number) => fc.Arbitrary<RankLoad>) | undefined
}

/**
 * The six laws as fast-check properties over a {@link PolicyScenario}; run one with `fc.assert`, or
 * show that an upstream policy breaks one on purpose with `fc.check(...).failed`.
 *
 * @category models
 * @since 0.1.0
 */
export interface PolicyLaws {
  /** Every `route` gives an integer rank in `[0, dpSize)` or a `PolicyError`; nothing throws. */
  readonly validRankOrTypedError: fc.IPropertyWithHooks<[PolicyScenario]>
  /** Same state and inputs, same decision and next state (run twice; also catches mutated state). */
  readonly deterministic: fc.IPropertyWithHooks<[PolicyScenario]>
  /** An unpinned request never lands on a rank marked unhealthy (for policies that honour status). */
  readonly healthyRanksOnly: fc.IPropertyWithHooks<[PolicyScenario]>
  /** Equal stale snapshots, k equal requests inside one refresh window: per-rank counts differ by at most 1. */
  readonly burstSpread: fc.IPropertyWithHooks<[PolicyScenario]>
  /** Relabelling ranks (loads, status, pinned ranks) relabels every decision. */
  readonly permutationEquivariant: fc.IPropertyWithHooks<[readonly [PolicyScenario, ReadonlyArray<number>]]>
  /** Adding load to rank j never turns a first decision for another rank into one for j. */
  readonly monotoneInLoad: fc.IPropertyWithHooks<[PolicyScenario, number, [number, number, number]]>
}

const defaultLoad = (dpRank: number): fc.Arbitrary<RankLoad> =>
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

const scenarioArb = (a: PolicyArbitraries): fc.Arbitrary<PolicyScenario> =>
  (a.dpSize ?? fc.integer({ min: 1, max: 16 }))
    .chain((dpSize) =>
      fc.record({
        dpSize: fc.constant(dpSize),
        status: fc.array(fc.boolean(), { minLength: dpSize, maxLength: dpSize }),
        loads: fc.tuple(...Array.from({ length: dpSize }, (_, r) => (a.load ?? defaultLoad)(r))),
        requests: fc.array(a.request ?? defaultRequest, { minLength: 1, maxLength: 24 }),
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

/** Route every request of a scenario; errors keep the state (or the error's `state`). */
const run = <S>(policy: Policy<S>, sc: PolicyScenario) => {
  let s = policy.observe(policy.setStatus(policy.init(sc.dpSize), sc.status), sc.loads, sc.startSeconds)
  let now = sc.startSeconds
  const results: Array<RouteResult<S>> = []
  sc.requests.forEach((req, i) => {
    now += sc.gapsSeconds[i % sc.gapsSeconds.length] ?? 0
    const out = policy.route(s, req, now)
    results.push(out)
    if (out._tag === "Routed") s = out.state
    else if (out.state !== undefined) s = out.state as S
  })
  return { results, state: s, decisions: results.map((r) => (r._tag === "Routed" ? r.rank : r.reason)) }
}

const allHealthy = (sc: PolicyScenario): PolicyScenario => ({ ...sc, status: sc.status.map(() => true) })

/**
 * Build the policy laws for `policy`, over generated scenarios (see {@link PolicyArbitraries}).
 * fast-check is an optional peer dependency of `@loadledger/testing`; this needs it installed.
 *
 * **When to use**: in a policy's test suite, `fc.assert` the laws the policy should hold; for a law an
 * upstream policy breaks on purpose (ties to the lowest index break equivariance), assert that
 * `fc.check(law).failed` is true next to a concrete counterexample, rather than skipping it.
 *
 * @example
 * ```ts
 * import { totalRequests } from "@loadledger/policies"
 * import { policyLaws } from "@loadledger/testing"
 * import fc from "fast-check"
 * const laws = policyLaws(totalRequests)
 * fc.assert(laws.burstSpread)
 * // ties go to the lowest index, so relabelling the ranks can change the choice
 * fc.check(laws.permutationEquivariant).failed // => true
 * ```
 *
 * @category laws
 * @since 0.1.0
 */
export const policyLaws = <S>(policy: Policy<S>, arbitraries: PolicyArbitraries = {}): PolicyLaws => {
  const scenario = scenarioArb(arbitraries)
  return {
    validRankOrTypedError: fc.property(scenario, (sc) =>
      run(policy, sc).results.every((r) =>
        r._tag === "Routed"
          ? Number.isInteger(r.rank) && r.rank >= 0 && r.rank < sc.dpSize
          : r._tag === "PolicyError" && typeof r.reason === "string" && typeof r.message === "string"
      )
    ),
    deterministic: fc.property(scenario, (sc) => {
      const a = run(policy, sc)
      if (!isDeepStrictEqual(a, run(policy, sc))) return false
      // routing twice from the same state must not see the first call's effects
      let s = policy.observe(policy.init(sc.dpSize), sc.loads, sc.startSeconds)
      for (const req of sc.requests) {
        const x = policy.route(s, req, sc.startSeconds)
        if (!isDeepStrictEqual(x, policy.route(s, req, sc.startSeconds))) return false
        if (x._tag === "Routed") s = x.state
      }
      return true
    }),
    healthyRanksOnly: fc.property(scenario, (sc) =>
      run(policy, sc).results.every(
        (r, i) =>
          r._tag !== "Routed" || sc.requests[i]!.routedDpRank !== undefined || sc.status[r.rank] === true
      )
    ),
    burstSpread: fc.property(
      scenario.chain((sc) =>
        fc.integer({ min: 1, max: 4 * sc.dpSize }).map((k): PolicyScenario => {
          const l = sc.loads[0]!
          const req = sc.requests[0]!
          return {
            ...allHealthy(sc),
            loads: sc.loads.map((_, dpRank) => ({ ...l, dpRank })),
            requests: Array.from({ length: k }, (_, i) => ({ ...req, requestId: `${req.requestId}-${i}` })),
            gapsSeconds: [0, ...new Array<number>(k).fill(0.0001)]
          }
        })
      ),
      (sc) => {
        const counts = new Array<number>(sc.dpSize).fill(0)
        for (const d of run(policy, sc).decisions) if (typeof d === "number") counts[d]! += 1
        return Math.max(...counts) - Math.min(...counts) <= 1
      }
    ),
    permutationEquivariant: fc.property(
      scenario.chain((sc) =>
        fc.tuple(
          fc.constant(sc),
          fc.shuffledSubarray(
            Array.from({ length: sc.dpSize }, (_, i) => i),
            {
              minLength: sc.dpSize
            }
          )
        )
      ),
      ([sc, pi]) => {
        const p = (r: number) => pi[r]!
        const permuted: PolicyScenario = {
          ...sc,
          status: sc.status.map((_, r) => sc.status[pi.indexOf(r)]!),
          loads: sc.loads.map((_, r) => ({ ...sc.loads[pi.indexOf(r)]!, dpRank: r })),
          requests: sc.requests.map((q) =>
            q.routedDpRank === undefined ? q : { ...q, routedDpRank: p(q.routedDpRank) }
          )
        }
        const a = run(policy, sc).decisions
        const b = run(policy, permuted).decisions
        return a.every((d, i) => (typeof d === "number" ? b[i] === p(d) : b[i] === d))
      }
    ),
    monotoneInLoad: fc.property(
      scenario.map(allHealthy),
      fc.nat(),
      fc.tuple(fc.nat({ max: 32 }), fc.nat({ max: 32 }), fc.nat({ max: 100_000 })),
      (sc, jRaw, [running, waiting, tokens]) => {
        const j = jRaw % sc.dpSize
        const first: PolicyScenario = { ...sc, requests: sc.requests.slice(0, 1) }
        const before = run(policy, first).decisions[0]
        if (before === j) return true
        const heavier: PolicyScenario = {
          ...first,
          loads: first.loads.map((l) =>
            l.dpRank === j
              ? {
                  ...l,
                  numRunningReqs: l.numRunningReqs + running,
                  numWaitingReqs: l.numWaitingReqs + waiting,
                  numTotalTokens: l.numTotalTokens + tokens
                }
              : l
          )
        }
        return run(policy, heavier).decisions[0] !== j
      }
    )
  }
}
