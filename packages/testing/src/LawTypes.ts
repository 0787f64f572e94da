/**
 * The shapes the policy laws speak in: a generated situation (`PolicyScenario`, its generator
 * overrides `PolicyArbitraries`), the unknown law's case (`UnknownCase`, `HiddenLoad`,
 * `LoadField`), the fairness laws' cases (`TieRounds`, `AffinityBurst`, `KvCase`), the laws
 * themselves (`PolicyLaws`, `LawName`, `LawInput`, `PolicyLawPredicates`) and a policy's declared
 * exception to one (`LawException`).
 *
 * A leaf: types only, so the laws, their predicates, the case generators and the exception tables
 * all import it and never each other in a circle (issue 29). Re-exported unchanged from the
 * package index.
 *
 * @since 0.4.0
 */
import type { RankLoad, RouteRequest } from "@loadledger/policies"
import type fc from "fast-check"

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
 * running and waiting, 0..200000 tokens, every field present), `maxRequests` per scenario
 * (default 24).
 *
 * @category models
 * @since 0.1.0
 */
export interface PolicyArbitraries {
  readonly dpSize?: fc.Arbitrary<number> | undefined
  readonly request?: fc.Arbitrary<RouteRequest> | undefined
  readonly load?: ((dpRank: number) => fc.Arbitrary<RankLoad>) | undefined
  readonly maxRequests?: number | undefined
}

/**
 * A load field the unknown law can hide.
 *
 * @category models
 * @since 0.2.0
 */
export type LoadField =
  | "numRunningReqs"
  | "numWaitingReqs"
  | "numTotalTokens"
  | "kvCacheUsage"
  | "numWaitingUncachedTokens"

/**
 * How the unknown law hides a rank's load: an `unknown` row (no load fields, the timestamp kept), or
 * the row without the listed fields.
 *
 * @category models
 * @since 0.2.0
 */
export type HiddenLoad =
  | { readonly kind: "unknown" }
  | { readonly kind: "absent"; readonly fields: ReadonlyArray<LoadField> }

/**
 * One case of the unknown law: in `scenario`, rank `rank` (taken modulo `dpSize`) has its load
 * hidden as `hidden`; the donor is another rank (`donor` picks it: rank
 * `(rank + 1 + donor mod (dpSize - 1)) mod dpSize`), whose values fill the hidden fields. With
 * `heavier` and an `unknown` row, each filled count is one step heavier than the donor's (+ 1;
 * `kvCacheUsage` is copied: a step across a KV threshold is no tie): the tie case. A hidden rank that is chosen then either beat the
 * donor outright or won a tie against it, and an unknown load must never win a tie against an
 * equal known one.
 *
 * @category models
 * @since 0.2.0
 */
export interface UnknownCase {
  readonly rank: number
  readonly donor: number
  readonly hidden: HiddenLoad
  /** Fill an `unknown` row's counts one step heavier than the donor's (absent: `false`). @since 0.2.0 */
  readonly heavier?: boolean | undefined
}

/**
 * The ten laws as fast-check properties over a {@link PolicyScenario}; run one with `fc.assert`, or
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
  /**
   * Unknown is never attractive: if the first decision goes to a rank whose load is hidden
   * (`unknown` row or absent fields), it still goes there when the hidden fields carry another
   * rank's reported values, or values one step heavier (so an unknown rank never wins a tie
   * against an equal known one; see {@link UnknownCase}).
   */
  readonly unknownNeverAttractive: fc.IPropertyWithHooks<[PolicyScenario, UnknownCase]>
  /** Repeated tied snapshots with a few requests between: per-rank counts within one (see `FairnessLaws`). */
  readonly noSystematicTieWinner: fc.IPropertyWithHooks<[TieRounds]>
  /** At least `dpSize` concurrent streams sharing prefixes on an idle group: every rank gets work. */
  readonly noStarvationUnderAffinity: fc.IPropertyWithHooks<[AffinityBurst]>
  /** Never a rank whose free KV cannot hold the prompt while another rank's can. */
  readonly kvFeasibility: fc.IPropertyWithHooks<[KvCase]>
}

/**
 * The name of one law of {@link PolicyLaws}.
 *
 * @category models
 * @since 0.2.0
 */
export type LawName = keyof PolicyLaws

/**
 * The input each law is checked on (what fast-check generates for it, and what an exception's
 * counterexample gives).
 *
 * @category models
 * @since 0.2.0
 */
export type LawInput = {
  readonly [K in LawName]: PolicyLaws[K] extends fc.IPropertyWithHooks<infer Ts> ? Ts : never
}

/**
 * Each law as a plain predicate over its input: `true` when the law holds there.
 *
 * @category models
 * @since 0.2.0
 */
export type PolicyLawPredicates = {
  readonly [K in LawName]: (...input: LawInput[K]) => boolean
}

/**
 * One case of the tie law: `rounds` times, every rank publishes the same `load` (stamped one second
 * after the previous round, so every earlier route is included), then `perRound` equal requests of
 * `inputLength` tokens are routed 1 ms apart.
 *
 * @category models
 * @since 0.3.0
 */
export interface TieRounds {
  readonly dpSize: number
  readonly load: RankLoad
  readonly rounds: number
  readonly perRound: number
  readonly inputLength: number
}

/**
 * One case of the affinity law: `streams` (at least `dpSize`) concurrent requests arrive at an idle
 * group (every rank reports 0 running, 0 waiting and the same `numTotalTokens`), 0.1 ms apart;
 * stream `i` belongs to group `i mod groups` and carries that group's prefix hashes (`prefixBlocks`
 * blocks, as RL rollouts sharing one prompt do).
 *
 * @category models
 * @since 0.3.0
 */
export interface AffinityBurst {
  readonly dpSize: number
  readonly streams: number
  readonly groups: number
  readonly prefixBlocks: number
  readonly numTotalTokens: number
  readonly inputLength: number
}

/**
 * One case of the KV law: each rank reports `kvAvailableTokens` free tokens (of
 * `maxTotalNumTokens`), counts and usage consistent with it; one request of `inputLength` tokens.
 *
 * @category models
 * @since 0.3.0
 */
export interface KvCase {
  readonly loads: ReadonlyArray<RankLoad>
  readonly inputLength: number
}

/**
 * A registered policy that breaks `law` on purpose: a one-line `reason` (upstream fidelity, or a
 * documented choice) and a `counterexample` (the law's input) at which the law fails.
 *
 * @category laws
 * @since 0.2.0
 */
export type LawException = {
  readonly [K in LawName]: {
    readonly policy: string
    readonly law: K
    readonly reason: string
    readonly counterexample: LawInput[K]
  }
}[LawName]
