/**
 * The carry law (issue 35, item 5): the state a policy keeps about the requests in flight survives
 * a rebuild of that state (a change of the worker set, a failed poll of any worker) without losing
 * what is still in flight. A state rebuilt by `init`, `observe` of the same rows and
 * `chargeInFlight` of every request still in flight must steer the next request away from the
 * ranks holding them whenever the state that was never rebuilt does.
 *
 * Field reports of the fault: llm-d/llm-d #1950 (an in-flight counter dropped on an endpoint
 * flap, then decremented by the late completions, goes negative), vllm-project/router #197
 * (periodic health checks reset the load counters of requests still in flight), and
 * ai-dynamo/dynamo #13513 (its review: "preserve live reservations across a same-ID topology
 * flap").
 *
 * @since 0.8.0
 */
import { chargeInFlight, type Policy, type RankLoad, type RouteRequest } from "@loadledger/policies"

/**
 * One rebuild after which a policy forgot what was in flight: on `dpSize` idle ranks, `held` are
 * the ranks of the burst placed before the rebuild (still in flight), `kept` the rank the state
 * never rebuilt chose next (a free one), `chose` the rank the rebuilt one chose (a held one), or
 * `"refused"` (and no `kept`) when a carried request could not be charged on its own rank.
 *
 * @category laws
 * @since 0.8.0
 */
export interface CarryViolation {
  readonly policy: string
  readonly dpSize: number
  readonly held: ReadonlyArray<number>
  readonly kept?: number | undefined
  readonly chose: number | "refused"
}

const idle = (dpSize: number): Array<RankLoad> =>
  Array.from({ length: dpSize }, (_, dpRank) => ({
    dpRank,
    timestamp: 1,
    numRunningReqs: 0,
    numWaitingReqs: 0,
    numTotalTokens: 0,
    kvCacheUsage: 0
  }))

/** Request `i`, with everything the pickiest policy wants (a room, a session, a prefix of its own). */
const request = (i: number): RouteRequest => ({
  requestId: `q${i}`,
  inputLength: 64,
  bootstrapRoom: String(i),
  sessionId: `s${i}`,
  prefixHashes: [`h${i}`]
})

/** The first violation on `dpSize` ranks after a burst of `burst` requests, if any. */
const check = <S>(policy: Policy<S>, dpSize: number, burst: number): CarryViolation | undefined => {
  const rows = idle(dpSize)
  let kept = policy.observe(policy.init(dpSize), rows, 1)
  const held: Array<number> = []
  for (let i = 0; i < burst; i++) {
    const r = policy.route(kept, request(i), 1)
    if (r._tag !== "Routed") return undefined
    kept = r.state
    held.push(r.rank)
  }
  // a policy that does not spread a burst over idle ranks has nothing to keep here
  if (new Set(held).size !== held.length) return undefined
  let rebuilt = policy.observe(policy.init(dpSize), rows, 1)
  for (let i = 0; i < burst; i++) {
    const c = chargeInFlight(policy, rebuilt, request(i), held[i]!, 1)
    if (c._tag !== "Routed") return { policy: policy.name, dpSize, held, chose: "refused" }
    rebuilt = c.state
  }
  const a = policy.route(kept, request(burst), 1.001)
  const b = policy.route(rebuilt, request(burst), 1.001)
  if (a._tag !== "Routed" || held.includes(a.rank)) return undefined
  if (b._tag === "Routed" && held.includes(b.rank))
    return { policy: policy.name, dpSize, held, kept: a.rank, chose: b.rank }
  return undefined
}

/**
 * The carry law, checked on `policy` for 2 to `maxRanks` (default 4) idle ranks and every burst of
 * 1 to ranks - 1 requests observed at 1 s: when the state that was never rebuilt sends the next
 * request to a free rank, the state rebuilt with the burst charged again (`chargeInFlight`, as the
 * live router's `PolicyView` does) must too, and must accept every charge. Returns the violations
 * (empty: the law holds; a policy that does not spread a burst over idle ranks holds it vacuously).
 *
 * **When to use**: over every registered policy (`policyEntries()`), with the known exceptions
 * kept exact, so a policy cannot start forgetting its in-flight work on a rebuild unseen.
 *
 * @example
 * ```ts
 * import { carryViolations } from "@loadledger/testing"
 * import { findPolicy, totalRequests } from "@loadledger/policies"
 * carryViolations(totalRequests) // => []
 * carryViolations(findPolicy("ledger-balanced")!.make({})) // => []
 * // without its charge, SGLang's pinned route charges nothing (upstream): the burst is forgotten
 * carryViolations({ ...totalRequests, charge: undefined })[0]
 * // => { policy: "total-requests", dpSize: 2, held: [0], kept: 1, chose: 0 }
 * ```
 *
 * @category laws
 * @since 0.8.0
 */
export const carryViolations = <S>(policy: Policy<S>, maxRanks = 4): ReadonlyArray<CarryViolation> => {
  const out: Array<CarryViolation> = []
  for (let dpSize = 2; dpSize <= maxRanks; dpSize++)
    for (let burst = 1; burst < dpSize; burst++) {
      const v = check(policy, dpSize, burst)
      if (v !== undefined) out.push(v)
    }
  return out
}

/**
 * The registered policies that break the carry law, each with its reason (exact: the registry
 * test fails when one starts or stops breaking it).
 *
 * **When to use**: read it before relying on a policy behind a live router whose worker set
 * changes; remove a row when its policy is fixed.
 *
 * @example
 * ```ts
 * import { carryLawExceptions } from "@loadledger/testing"
 * carryLawExceptions.map((x) => x.policy)
 * // => ["dynamo/kv-t0.5", "trtllm/conversation-affinity"]
 * ```
 *
 * @category laws
 * @since 0.8.0
 */
export const carryLawExceptions: ReadonlyArray<{ readonly policy: string; readonly reason: string }> = [
  {
    policy: "dynamo/kv-t0.5",
    reason:
      "charges are carried (dynamo/kv, temperature 0, holds the law), but a rebuilt state restarts its softmax generator from the seed, so the draw that placed the burst's first request places the next one on that rank again"
  },
  {
    policy: "trtllm/conversation-affinity",
    reason:
      "a new conversation goes round-robin from a cursor that an explicit (pinned) request does not move (NVIDIA/TensorRT-LLM tensorrt_llm/_torch/pyexecutor/scheduler/adp_router.py, ConversationAwareADPRouter: the explicit pass before the cursor), so a rebuilt state starts the rotation at rank 0 again"
  }
]
