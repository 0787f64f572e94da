/**
 * TensorRT-LLM's conversation-affinity attention-DP router (`ConversationAwareADPRouter`) as a pure
 * batch function: the explicit pass, then each request of a known conversation returns to its rank
 * while that rank is under `maxNumActiveRequests` (an LRU touch), else (a new conversation, an
 * overflow, no conversation id) it goes round-robin to the next rank under the soft cap
 * `ceil(fairShareMultiplier * fairShare)` (not capped at the hard one), the least-loaded rank when
 * none is; a new conversation is bound to its first rank. The returned cap is raised to the
 * busiest rank's count after the batch.
 *
 * Upstream: NVIDIA/TensorRT-LLM `tensorrt_llm/_torch/pyexecutor/scheduler/adp_router.py`
 * (`ConversationAwareADPRouter`, `kv_cache_routing_conversation_affinity`,
 * `kv_cache_routing_max_sessions` default 2^16), added by pull request NVIDIA/TensorRT-LLM#14983,
 * as read on 2026-12-07 through the reference index (its file version 56141410210, 37,409
 * characters; the index records no commit for it, and no other stored version holds this
 * router). Checked against it: the explicit pass first; a known conversation returns to its rank
 * under the hard cap `max_num_active_requests` (an LRU touch), else falls through without
 * rebinding; round-robin under the soft cap from a cursor kept across batches, the least-loaded
 * (then lowest) rank when none is under it; a new conversation bound to its first rank; the
 * returned cap raised to the busiest rank. Not here: #16815 (merged 2026-07-23), which binds a
 * new conversation that names an explicit `attention_dp_rank` to that rank; here such a first turn
 * is placed by the explicit pass and its conversation is bound by its next relaxed turn.
 * Implemented from the behaviour, not copied.
 *
 * @since 0.7.0
 */
import {
  type AdpAssignment,
  type AdpRankState,
  type AdpRequest,
  assignExplicit,
  expectedNumActiveRequests,
  strictFirst
} from "./AdpRouter.js"

/**
 * The conversation router's memory between batches: conversation id -> rank, oldest first (the
 * LRU order), and the round-robin cursor.
 *
 * @example
 * ```ts
 * import { Trtllm } from "@loadledger/policies"
 * Trtllm.conversationStart // => { sessions: [], cursor: 0 }
 * ```
 *
 * @category trtllm
 * @since 0.7.0
 */
export interface ConversationMemory {
  readonly sessions: ReadonlyArray<readonly [string, number]>
  readonly cursor: number
}

/**
 * A fresh {@link ConversationMemory}.
 *
 * @example
 * ```ts
 * import { Trtllm } from "@loadledger/policies"
 * Trtllm.conversationStart.cursor // => 0
 * ```
 *
 * @category trtllm
 * @since 0.7.0
 */
export const conversationStart: ConversationMemory = { sessions: [], cursor: 0 }

/**
 * One batch through the conversation-affinity router; the assignment and the memory after it.
 * `maxSessions` bounds the map (default 65536), `fairShareMultiplier` the soft cap (>= 1, default 2).
 *
 * @example
 * ```ts
 * import { Trtllm } from "@loadledger/policies"
 * const states = [0, 1].map((rank) => ({ rank, numActiveRequests: 0, numActiveTokens: 0 }))
 * const reqs = [{ id: 1, inputLength: 5, conversationId: "a" }, { id: 2, inputLength: 5, conversationId: "a" }]
 * Trtllm.assignConversationAware(states, reqs, 8, Trtllm.conversationStart).assignment.assigned
 * // => [[1, 2], []]
 * ```
 *
 * @category trtllm
 * @since 0.7.0
 */
export const assignConversationAware = (
  states: ReadonlyArray<AdpRankState>,
  reqs: ReadonlyArray<AdpRequest>,
  maxNumActiveRequests: number,
  memory: ConversationMemory,
  fairShareMultiplier = 2,
  maxSessions = 1 << 16
): { readonly assignment: AdpAssignment; readonly memory: ConversationMemory } => {
  const n = states.length
  const assigned: Array<Array<number | string>> = states.map(() => [])
  const active = states.map((s) => s.numActiveRequests)
  const rest = assignExplicit(strictFirst(reqs), assigned, active, maxNumActiveRequests)
  const soft = expectedNumActiveRequests(active, rest.length, Math.max(1, fairShareMultiplier))
  const sessions = new Map(memory.sessions)
  const cap = Math.max(1, Math.trunc(maxSessions))
  const touch = (id: string, rank: number): void => {
    sessions.delete(id)
    sessions.set(id, rank)
    while (sessions.size > cap) sessions.delete(sessions.keys().next().value as string)
  }
  let cursor = memory.cursor
  const leastLoaded = (): number => {
    let cands = [...Array(n).keys()].filter((r) => active[r]! < soft)
    if (cands.length === 0) cands = [...Array(n).keys()]
    return cands.reduce((b, r) => (active[r]! < active[b]! ? r : b))
  }
  const nextRoundRobin = (): number => {
    for (let k = 0; k < n; k++) {
      const r = cursor % n
      cursor = (cursor + 1) % n
      if (active[r]! < soft) return r
    }
    return leastLoaded()
  }
  for (const r of rest) {
    const conv = r.conversationId === "" ? undefined : r.conversationId
    let rank: number | undefined
    if (conv !== undefined && sessions.has(conv)) {
      const target = sessions.get(conv)!
      if (active[target]! < maxNumActiveRequests) {
        rank = target
        touch(conv, target)
      }
    }
    if (rank === undefined) {
      rank = nextRoundRobin()
      if (conv !== undefined && !sessions.has(conv)) touch(conv, rank)
    }
    assigned[rank]!.push(r.id)
    active[rank]!++
  }
  return {
    assignment: {
      assigned,
      unassigned: [],
      expectedNumActiveRequests: Math.max(soft, ...active)
    },
    memory: { sessions: [...sessions], cursor }
  }
}
