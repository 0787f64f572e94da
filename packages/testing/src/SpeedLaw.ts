/**
 * The speed law (issue 33 item 3): with one rank at speed `s < 1` and everything else equal, the
 * rank's share of the work falls, roughly in proportion to its speed, and returns when its speed
 * does, within a stated number of polls. For the policies that learn a rank's speed from what it
 * publishes (`withSpeed`, the registered `speed-aware`); every upstream policy is outside it: none
 * reads a rank's speed (SGLang's, vLLM's, TensorRT-LLM's and the peers' routers balance counts,
 * tokens, KV or prefixes, which are equal here).
 *
 * The harness is a closed lockstep group driven poll by poll: each poll every rank publishes a row
 * (`numTotalTokens`: the prompt tokens of the requests it holds; `utilization`: its forward time,
 * tokens over speed, over the slowest rank's, as SGLang's `/v1/loads` does), the policy observes it
 * and routes `perPoll` requests of equal length, and each request finishes `holdPolls` polls later.
 * Forward time is proportional to the tokens held (no fixed part), so a share in proportion to
 * speed is the balanced one: `s / (n - 1 + s)` of the work.
 *
 * The load: 4 requests a rank a poll (before 0.8.0's seconds-pricing `speed-aware`, one). At one a
 * rank, a policy that prices the seconds a request waits (`step-time-aware` inside the speed term:
 * a 256-token prefill is about 38 ms of step time, a poll a second) finds every rank idle when the
 * next request comes and sends it to an idle one whatever its speed, which is right for that
 * request and says nothing about a share: the law is checked where the ranks queue.
 *
 * @since 0.8.0
 */
import type { Policy, RankLoad } from "@loadledger/policies"

/**
 * The setting of one check: `dpSize` ranks, `slowRank` at `speed` (0 < speed < 1) for `slowPolls`
 * polls, then back to 1 for `recoverPolls` polls before the share is measured again over
 * `measurePolls`; `perPoll` requests (default: 4 times 8 or `dpSize`, whichever is more: 4 a
 * rank, so that a policy pricing seconds sees queues) of `inputLength` (256) tokens a poll, each held
 * `holdPolls` (8) polls; defaults 150, 60 and 40 polls.
 *
 * @category laws
 * @since 0.8.0
 */
export interface SpeedLawSetting {
  readonly dpSize: number
  readonly slowRank: number
  readonly speed: number
  readonly slowPolls?: number | undefined
  readonly recoverPolls?: number | undefined
  readonly measurePolls?: number | undefined
  readonly perPoll?: number | undefined
  readonly holdPolls?: number | undefined
  readonly inputLength?: number | undefined
}

/**
 * What the law found: the slow rank's share of the requests routed over the last `measurePolls` of
 * the slow phase (`slowShare`) and after the recovery (`recoveredShare`), the proportional share
 * `s / (n - 1 + s)` (`proportional`), and `violation` when the law failed: `"not-lower"` (the slow
 * share is not below `(1 + s) / 2` of the fair `1 / n`, halfway between fair and proportional
 * when s is 0: it did not fall), `"exiled"` (below half the proportional share: not in
 * proportion), `"not-recovered"` (the recovered share below 0.8 of fair), or `"refused"` (a route
 * failed).
 *
 * @category laws
 * @since 0.8.0
 */
export interface SpeedLawResult {
  readonly policy: string
  readonly slowShare: number
  readonly recoveredShare: number
  readonly proportional: number
  readonly violation?: "not-lower" | "exiled" | "not-recovered" | "refused" | undefined
}

interface Held {
  readonly id: string
  readonly rank: number
  readonly until: number
}

/**
 * Run the speed law's harness on a policy (see the module header). Pure: the same policy and
 * setting give the same result; time is the poll's index in seconds.
 *
 * @example
 * ```ts
 * import { findPolicy } from "@loadledger/policies"
 * import { checkSpeedLaw } from "@loadledger/testing"
 * const r = checkSpeedLaw(findPolicy("speed-aware")!.make({}), { dpSize: 4, slowRank: 2, speed: 0.5 })
 * r.violation // => undefined
 * r.slowShare < 0.2 // => true
 * const rr = checkSpeedLaw(findPolicy("round-robin")!.make({}), { dpSize: 4, slowRank: 2, speed: 0.5 })
 * rr.violation // => "not-lower"
 * ```
 *
 * @category laws
 * @since 0.8.0
 */
export const checkSpeedLaw = <S>(policy: Policy<S>, setting: SpeedLawSetting): SpeedLawResult => {
  const n = setting.dpSize
  const slowPolls = setting.slowPolls ?? 150
  const recoverPolls = setting.recoverPolls ?? 60
  const measure = setting.measurePolls ?? 40
  const perPoll = setting.perPoll ?? 4 * Math.max(8, n)
  const hold = setting.holdPolls ?? 8
  const len = setting.inputLength ?? 256
  const s = setting.speed
  let state = policy.init(n)
  let held: Array<Held> = []
  let next = 0
  const counts = { slow: [0, 0], recovered: [0, 0] }
  const total = slowPolls + recoverPolls + measure
  for (let poll = 1; poll <= total; poll++) {
    const t = poll
    const done = held.filter((h) => h.until <= poll)
    if (done.length > 0) {
      state = policy.finish(
        state,
        done.map((h) => h.id),
        t
      )
      held = held.filter((h) => h.until > poll)
    }
    const speed = (r: number) => (r === setting.slowRank && poll <= slowPolls ? s : 1)
    const tokens = Array.from({ length: n }, (_, r) => held.filter((h) => h.rank === r).length * len)
    const busy = tokens.map((x, r) => (x + 1) / speed(r))
    const step = Math.max(...busy)
    const rows: Array<RankLoad> = tokens.map((numTotalTokens, dpRank) => ({
      dpRank,
      timestamp: t,
      numRunningReqs: held.filter((h) => h.rank === dpRank).length,
      numWaitingReqs: 0,
      numTotalTokens,
      kvCacheUsage: 0,
      utilization: busy[dpRank]! / step
    }))
    state = policy.observe(state, rows, t)
    const phase =
      poll > slowPolls - measure && poll <= slowPolls
        ? counts.slow
        : poll > slowPolls + recoverPolls
          ? counts.recovered
          : undefined
    for (let i = 0; i < perPoll; i++) {
      const id = `q${next++}`
      const r = policy.route(state, { requestId: id, inputLength: len }, t)
      if (r._tag === "PolicyError")
        return { policy: policy.name, slowShare: 0, recoveredShare: 0, proportional: 0, violation: "refused" }
      state = r.state
      held.push({ id, rank: r.rank, until: poll + hold })
      if (phase !== undefined) {
        phase[1]!++
        if (r.rank === setting.slowRank) phase[0]!++
      }
    }
  }
  const slowShare = counts.slow[0]! / counts.slow[1]!
  const recoveredShare = counts.recovered[0]! / counts.recovered[1]!
  const proportional = s / (n - 1 + s)
  const violation =
    slowShare >= (1 / n + proportional) / 2
      ? ("not-lower" as const)
      : slowShare < proportional / 2
        ? ("exiled" as const)
        : recoveredShare < 0.8 / n
          ? ("not-recovered" as const)
          : undefined
  return { policy: policy.name, slowShare, recoveredShare, proportional, violation }
}

/**
 * The registered policies the speed law applies to: the own configurations with the `"speed"`
 * wrapper. Every upstream policy (reference or peer) is exempt: none sees a rank's speed.
 *
 * @example
 * ```ts
 * import { speedLawPolicies } from "@loadledger/testing"
 * speedLawPolicies // => ["speed-aware"]
 * ```
 *
 * @category laws
 * @since 0.8.0
 */
export const speedLawPolicies: ReadonlyArray<string> = ["speed-aware"]
