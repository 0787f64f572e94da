/**
 * TensorRT-LLM's attention-DP request routers as pure batch functions: every iteration each rank
 * builds a `RankState` (its active requests and their prompt tokens), the ranks allgather them,
 * and one batch of new requests is assigned at once (`ADPRouter.route_requests`). This module
 * holds the shared shapes, the explicit-rank pass, the per-rank cap and the default heap router.
 *
 * Upstream: NVIDIA/TensorRT-LLM `tensorrt_llm/_torch/pyexecutor/scheduler/adp_router.py`
 * @1addeb3ddeed513edd3e15a8d5a431a6f739b5f2 (`DefaultADPRouter`) and its later revision with the
 * per-rank cap capped at `max_num_active_requests` (the `hard_cap`; pinned at
 * @02385f29bd8e10555b781d4ab00a262a54a95aa3, which also collapses an unset `attention_dp_relax`
 * to relaxed); `KVCacheAwareADPRouter` and `ConversationAwareADPRouter` in their own modules;
 * tests `tests/unittest/_torch/executor/test_adp_router.py` @1addeb3d. Implemented from the behaviour, not copied.
 *
 * @since 0.7.0
 */

/**
 * One rank's allgathered state (`RankState`): `numActiveRequests` the requests the rank's executor
 * holds (running and waiting for context), `numActiveTokens` the sum of their prompt lengths
 * (KV-cache-aware router: net of cached tokens).
 *
 * @example
 * ```ts
 * import type { Trtllm } from "@loadledger/policies"
 * const s: Trtllm.AdpRankState = { rank: 0, numActiveRequests: 2, numActiveTokens: 300 }
 * s.numActiveTokens // => 300
 * ```
 *
 * @category trtllm
 * @since 0.7.0
 */
export interface AdpRankState {
  readonly rank: number
  readonly numActiveRequests: number
  readonly numActiveTokens: number
}

/**
 * One new request of a batch: `inputLength` its prompt tokens (`len(input_token_ids)`),
 * `attentionDpRank` / `attentionDpRelax` its scheduling params (absent params: relaxed, no target),
 * `conversationId` (conversation-affinity router) and `tokenIds` (the KV-cache-aware router groups
 * a batch by the first 64).
 *
 * @example
 * ```ts
 * import type { Trtllm } from "@loadledger/policies"
 * const r: Trtllm.AdpRequest = { id: 1, inputLength: 10, attentionDpRank: 1, attentionDpRelax: false }
 * r.attentionDpRank // => 1
 * ```
 *
 * @category trtllm
 * @since 0.7.0
 */
export interface AdpRequest {
  readonly id: number | string
  readonly inputLength: number
  readonly attentionDpRank?: number | undefined
  readonly attentionDpRelax?: boolean | undefined
  readonly conversationId?: string | undefined
  readonly tokenIds?: ReadonlyArray<number> | undefined
}

/**
 * A batch's assignment: the request ids each rank receives, in the order assigned
 * (`assigned[rank]`), the ids left unassigned (no rank under the cap: upstream's executor never
 * fetches more than fits, and its heap would raise), and `expectedNumActiveRequests`, the per-rank
 * cap the batch was assigned under (the padding target of the attention-DP dummy requests).
 *
 * @example
 * ```ts
 * import { Trtllm } from "@loadledger/policies"
 * const a: Trtllm.AdpAssignment = Trtllm.assignDefault([{ rank: 0, numActiveRequests: 0, numActiveTokens: 0 }], [], 8)
 * a // => { assigned: [[]], unassigned: [], expectedNumActiveRequests: 0 }
 * ```
 *
 * @category trtllm
 * @since 0.7.0
 */
export interface AdpAssignment {
  readonly assigned: ReadonlyArray<ReadonlyArray<number | string>>
  readonly unassigned: ReadonlyArray<number | string>
  readonly expectedNumActiveRequests: number
}

/**
 * The per-rank cap of a batch (`_expected_num_active_requests`): `ceil(multiplier * fairShare)`
 * with `fairShare = ceil((sum(active) + numNew) / ranks)`, floored at the busiest rank's count and,
 * when `hardCap` is given, capped at it (`max_num_active_requests`).
 *
 * @example
 * ```ts
 * import { Trtllm } from "@loadledger/policies"
 * Trtllm.expectedNumActiveRequests([2, 1, 3, 0], 2, 1, 8) // => 3
 * Trtllm.expectedNumActiveRequests([0, 0], 4, 2, 10) // => 4
 * ```
 *
 * @category trtllm
 * @since 0.7.0
 */
export const expectedNumActiveRequests = (
  active: ReadonlyArray<number>,
  numNew: number,
  multiplier = 1,
  hardCap?: number
): number => {
  const n = active.length
  let total = 0
  let busiest = 0
  for (const a of active) {
    total += a
    if (a > busiest) busiest = a
  }
  const fair = n === 0 ? 0 : Math.floor((total + numNew + n - 1) / n)
  const expected = Math.max(Math.ceil(multiplier * fair), busiest)
  return hardCap === undefined ? expected : Math.min(expected, hardCap)
}

/**
 * Strict (`attentionDpRelax: false`) requests first, stable (Python's `sorted` by the relax flag).
 *
 * @example
 * ```ts
 * import { Trtllm } from "@loadledger/policies"
 * Trtllm.strictFirst([{ id: 1, inputLength: 1 }, { id: 2, inputLength: 1, attentionDpRelax: false }]).map((r) => r.id)
 * // => [2, 1]
 * ```
 *
 * @category trtllm
 * @since 0.7.0
 */
export const strictFirst = (reqs: ReadonlyArray<AdpRequest>): Array<AdpRequest> => [
  ...reqs.filter((r) => r.attentionDpRelax === false),
  ...reqs.filter((r) => r.attentionDpRelax !== false)
]

/**
 * The explicit pass (`_assign_explicit_dp_ranks`): a request with an `attentionDpRank` goes there
 * while that rank holds fewer than `maxNumActiveRequests`; `active` and `assigned` are updated in
 * place; the rest are returned in order.
 *
 * @example
 * ```ts
 * import { Trtllm } from "@loadledger/policies"
 * const assigned = [[], []] as Array<Array<number | string>>
 * const active = [0, 2]
 * Trtllm.assignExplicit([{ id: 1, inputLength: 10, attentionDpRank: 1 }], assigned, active, 2).map((r) => r.id) // => [1]
 * assigned // => [[], []]
 * ```
 *
 * @category trtllm
 * @since 0.7.0
 */
export const assignExplicit = (
  reqs: ReadonlyArray<AdpRequest>,
  assigned: Array<Array<number | string>>,
  active: Array<number>,
  maxNumActiveRequests: number
): Array<AdpRequest> => {
  const rest: Array<AdpRequest> = []
  for (const r of reqs) {
    const t = r.attentionDpRank
    if (t !== undefined && t >= 0 && t < active.length && active[t]! < maxNumActiveRequests) {
      active[t]!++
      assigned[t]!.push(r.id)
    } else rest.push(r)
  }
  return rest
}

/** The default router's heap entry, ordered as upstream's `HeapVal` tuple: tokens, requests, rank. */
interface Slot {
  tokens: number
  requests: number
  readonly rank: number
}

const less = (a: Slot, b: Slot): boolean =>
  a.tokens !== b.tokens
    ? a.tokens < b.tokens
    : a.requests !== b.requests
      ? a.requests < b.requests
      : a.rank < b.rank

/**
 * `DefaultADPRouter.route_requests`: the explicit pass, then the cap
 * ({@link expectedNumActiveRequests}, multiplier 1, capped at `maxNumActiveRequests` when
 * `hardCap` is true: the later revision; false reproduces @1addeb3d), then the rest sorted by prompt
 * length (longest first, stable) each to the rank with the fewest (tokens, requests, rank) among
 * those under the cap. Tokens are not charged for explicit placements, as upstream.
 *
 * @example
 * ```ts
 * import { Trtllm } from "@loadledger/policies"
 * const states = [
 *   { rank: 0, numActiveRequests: 3, numActiveTokens: 300 },
 *   { rank: 1, numActiveRequests: 1, numActiveTokens: 100 }
 * ]
 * const reqs = [0, 1, 2, 3].map((id) => ({ id, inputLength: 50 }))
 * // the cap is max(ceil(8 / 2), 3) = 4: rank 1 takes three, then rank 0 the last
 * Trtllm.assignDefault(states, reqs, 10).assigned // => [[3], [0, 1, 2]]
 * ```
 *
 * @category trtllm
 * @since 0.7.0
 */
export const assignDefault = (
  states: ReadonlyArray<AdpRankState>,
  reqs: ReadonlyArray<AdpRequest>,
  maxNumActiveRequests: number,
  hardCap = true
): AdpAssignment => {
  const assigned: Array<Array<number | string>> = states.map(() => [])
  const active = states.map((s) => s.numActiveRequests)
  const rest = assignExplicit(strictFirst(reqs), assigned, active, maxNumActiveRequests)
  const expected = expectedNumActiveRequests(
    active,
    rest.length,
    1,
    hardCap ? maxNumActiveRequests : undefined
  )
  const heap: Array<Slot> = []
  states.forEach((s, i) => {
    if (active[i]! < expected) heap.push({ tokens: s.numActiveTokens, requests: active[i]!, rank: i })
  })
  const unassigned: Array<number | string> = []
  const late: Array<Array<number | string>> = states.map(() => [])
  const sorted = rest.map((r, i) => ({ r, i })).sort((a, b) => b.r.inputLength - a.r.inputLength || a.i - b.i)
  for (const { r } of sorted) {
    let best = -1
    for (let k = 0; k < heap.length; k++) if (best < 0 || less(heap[k]!, heap[best]!)) best = k
    if (best < 0) {
      unassigned.push(r.id)
      continue
    }
    const slot = heap[best]!
    slot.tokens += r.inputLength
    slot.requests += 1
    late[slot.rank]!.push(r.id)
    if (slot.requests >= expected) heap.splice(best, 1)
  }
  return {
    assigned: assigned.map((a, i) => [...a, ...late[i]!]),
    unassigned,
    expectedNumActiveRequests: expected
  }
}
