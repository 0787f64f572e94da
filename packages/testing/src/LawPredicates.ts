/**
 * The policy laws as plain predicates.
 *
 * @since 0.2.0
 */
import { isDeepStrictEqual } from "node:util"
import type { Policy, RankLoad } from "@loadledger/policies"
import { fairnessLawPredicates } from "./FairnessLaws.js"
import { firstDecision, loadFields, run } from "./internal/scenario.js"
import type { LoadField, PolicyLawPredicates, PolicyScenario } from "./LawTypes.js"

/** `row` without `fields` (absent, not undefined-valued). */
const without = (row: RankLoad, fields: ReadonlyArray<LoadField>): RankLoad => {
  const out: Record<string, unknown> = { ...row }
  for (const f of fields) delete out[f]
  return out as unknown as RankLoad
}

/**
 * One step heavier than `x`: a count + 1. A KV usage fraction is copied as it is: policies gate on
 * KV thresholds (0.9, 0.99), and a step across one is no tie.
 */
const heavierValue = (f: LoadField, x: number): number => (f === "kvCacheUsage" ? x : x + 1)

/** `row` with `fields` taken from `donor` (absent in `donor`: absent), one step heavier with `heavier`. */
const filledFrom = (
  row: RankLoad,
  donor: RankLoad,
  fields: ReadonlyArray<LoadField>,
  heavier: boolean
): RankLoad => {
  const out: Record<string, unknown> = { ...row }
  for (const f of fields) {
    const x = donor[f]
    if (x === undefined) delete out[f]
    else out[f] = heavier ? heavierValue(f, x) : x
  }
  return out as unknown as RankLoad
}

/**
 * The predicate of each law for `policy` (see {@link PolicyLaws}): `true` when the law holds on the
 * given input. {@link policyLaws} wraps them as fast-check properties; an exception table gives one
 * a concrete counterexample.
 *
 * **When to use**: to assert that a policy breaks a law on purpose at a stated input, without a
 * random search: `policyLawPredicates(p).burstSpread(scenario) === false`.
 *
 * @example
 * ```ts
 * import { followBootstrapRoom } from "@loadledger/policies"
 * import { policyLawPredicates } from "@loadledger/testing"
 * const load = (dpRank: number) => ({ dpRank, timestamp: 1, numRunningReqs: 0, numWaitingReqs: 0, numTotalTokens: 0 })
 * const burst = [0, 1].map((i) => ({ requestId: `q${i}`, inputLength: 1, bootstrapRoom: "4" }))
 * // one bootstrap room sends both requests to rank 0
 * policyLawPredicates(followBootstrapRoom).burstSpread({
 *   dpSize: 2, status: [true, true], loads: [load(0), load(1)], requests: burst, startSeconds: 1, gapsSeconds: [0, 0]
 * }) // => false
 * ```
 *
 * @category laws
 * @since 0.2.0
 */
export const policyLawPredicates = <S>(policy: Policy<S>): PolicyLawPredicates => ({
  validRankOrTypedError: (sc) =>
    run(policy, sc).results.every((r) =>
      r._tag === "Routed"
        ? Number.isInteger(r.rank) && r.rank >= 0 && r.rank < sc.dpSize
        : r._tag === "PolicyError" && typeof r.reason === "string" && typeof r.message === "string"
    ),
  deterministic: (sc) => {
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
  },
  healthyRanksOnly: (sc) =>
    run(policy, sc).results.every(
      (r, i) =>
        r._tag !== "Routed" || sc.requests[i]!.routedDpRank !== undefined || sc.status[r.rank] === true
    ),
  burstSpread: (sc) => {
    const counts = new Array<number>(sc.dpSize).fill(0)
    for (const d of run(policy, sc).decisions) if (typeof d === "number") counts[d]! += 1
    return Math.max(...counts) - Math.min(...counts) <= 1
  },
  permutationEquivariant: ([sc, pi]) => {
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
  },
  monotoneInLoad: (sc, jRaw, [running, waiting, tokens]) => {
    const j = jRaw % sc.dpSize
    const before = firstDecision(policy, sc, sc.loads)
    if (before === j) return true
    const add = (x: number | undefined, y: number) => (x === undefined ? undefined : x + y)
    const heavier = sc.loads.map((l) =>
      l.dpRank === j
        ? {
            ...l,
            numRunningReqs: add(l.numRunningReqs, running),
            numWaitingReqs: add(l.numWaitingReqs, waiting),
            numTotalTokens: add(l.numTotalTokens, tokens)
          }
        : l
    )
    return firstDecision(policy, sc, heavier) !== j
  },
  unknownNeverAttractive: (sc, c) => {
    const n = sc.dpSize
    if (n < 2) return true
    const r = c.rank % n
    const d = (r + 1 + (c.donor % (n - 1))) % n
    const own = sc.loads[r]!
    const donor = sc.loads[d]!
    if (donor.unknown !== undefined) return true
    const fields = c.hidden.kind === "unknown" ? loadFields : c.hidden.fields
    const hidden: RankLoad =
      c.hidden.kind === "unknown"
        ? {
            dpRank: own.dpRank,
            timestamp: own.timestamp,
            unknown: { reason: "not-reported", message: "law" }
          }
        : without(own, fields)
    // one step heavier only for a whole unknown row: a partial row's known fields may rightly win
    // on a later key of a lexicographic score, where the hidden one only tied
    const known = filledFrom(own, donor, fields, c.heavier === true && c.hidden.kind === "unknown")
    const at = (row: RankLoad) => sc.loads.map((l, i) => (i === r ? row : l))
    return firstDecision(policy, sc, at(hidden)) !== r || firstDecision(policy, sc, at(known)) === r
  },
  ...fairnessLawPredicates(policy)
})
