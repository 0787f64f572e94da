/**
 * The TensorRT-LLM attention-DP routers as loadledger `Policy` reducers: `trtllm/default`,
 * `trtllm/kv-cache-aware` and `trtllm/conversation-affinity`.
 *
 * **Batch as a sequence.** Upstream assigns one batch of new requests per iteration from the
 * allgathered `RankState`s (`AdpRouter.ts`). A `Policy` places one request at a time, so each
 * `route` here is that router run on a batch of one over the state its earlier routes updated:
 * the rank state is the router's own count of the requests it placed and has not seen finish
 * (`numActiveRequests`) and their prompt tokens (`numActiveTokens`; net of the modelled prefix
 * match for the KV-cache-aware router), which is exactly what upstream's executor, the only router
 * of its ranks, allgathers. A batch of `k` routed as `k` calls differs from upstream's batch only in
 * order and cap: the simulator's TensorRT-LLM engine (`@loadledger/sim` `engines/trtllm`) feeds
 * each iteration's batch in upstream's order (strict `attentionDpRank` first, then the longest
 * prompt first), and the per-rank cap is computed per decision (a batch of one's fair share), which
 * can only be tighter than the batch's. Load rows (`observe`) are kept but not read: upstream
 * routes from its own state. A pinned request (`routedDpRank`) is upstream's strict
 * `attention_dp_rank`; an unhealthy rank takes no request unless pinned.
 *
 * Prefix matches (KV-cache-aware): each rank's radix tree is modelled by the prefix-block hashes
 * (`RouteRequest.prefixHashes`) of the requests routed to it, never evicted; a request's match on
 * a rank is its leading hashes found there, as a share of its prompt (`floor(k / n *
 * inputLength)`, at most `inputLength - 1`, as upstream probes all tokens but the last).
 * `account_for_in_transfer` (disaggregated KV transfer) is not modelled.
 *
 * @since 0.7.0
 */
import * as HashSet from "effect/HashSet"
import type { Policy } from "../Policy.js"
import { policyError } from "../Policy.js"
import { type PeerLedger, type PeerState, peerPolicy } from "../peers/internal/PeerLedger.js"
import { type AdpAssignment, type AdpRankState, type AdpRequest, assignDefault } from "./AdpRouter.js"
import { assignConversationAware, type ConversationMemory, conversationStart } from "./ConversationAware.js"
import { assignKvCacheAware, type KvCacheAwareOptions, kvCacheAwareDefaults } from "./KvCacheAware.js"

/**
 * Options of the TensorRT-LLM policies: `maxNumActiveRequests` (the executor's
 * `max_num_active_requests`, its max batch size; default 2048, `TorchLlmArgs.max_batch_size`),
 * the KV-cache-aware knobs, `coldStartWarmup` (default false), `fairShareMultiplier` of the
 * conversation router (default 2).
 *
 * @example
 * ```ts
 * import type { Trtllm } from "@loadledger/policies"
 * const o: Trtllm.TrtllmPolicyOptions = { maxNumActiveRequests: 512 }
 * o.maxNumActiveRequests // => 512
 * ```
 *
 * @category trtllm
 * @since 0.7.0
 */
export interface TrtllmPolicyOptions {
  readonly maxNumActiveRequests?: number | undefined
  readonly kvCacheAware?: Partial<KvCacheAwareOptions> | undefined
  readonly coldStartWarmup?: boolean | undefined
  readonly conversationFairShareMultiplier?: number | undefined
}

/** What the routers remember besides the in-flight ledger. */
interface Extra {
  readonly cached: ReadonlyArray<HashSet.HashSet<string>>
  readonly warmup: ReadonlyArray<number>
  readonly conversations: ConversationMemory
}

const healthyStates = (l: PeerLedger): { states: Array<AdpRankState>; ranks: Array<number> } => {
  const ranks: Array<number> = []
  for (let i = 0; i < l.dpSize; i++) if (l.status[i] === true) ranks.push(i)
  return {
    ranks,
    states: ranks.map((r, k) => ({
      rank: k,
      numActiveRequests: l.requests[r]!,
      numActiveTokens: l.tokens[r]!
    }))
  }
}

const matchLength = (
  set: HashSet.HashSet<string>,
  hashes: ReadonlyArray<string>,
  inputLength: number
): number => {
  let k = 0
  while (k < hashes.length && HashSet.has(set, hashes[k]!)) k++
  return k === 0 ? 0 : Math.max(0, Math.min(inputLength - 1, Math.floor((k / hashes.length) * inputLength)))
}

type Kind = "default" | "kv-cache-aware" | "conversation-affinity"

/**
 * Make a TensorRT-LLM router policy of the given kind (see the module docs for what a `route` is).
 *
 * @example
 * ```ts
 * import { Trtllm } from "@loadledger/policies"
 * const p = Trtllm.makeTrtllmPolicy("default", {})
 * let s = p.init(2)
 * const a = p.route(s, { requestId: "a", inputLength: 100 }, 0)
 * a._tag === "Routed" && a.rank // => 0
 * if (a._tag === "Routed") s = a.state
 * const b = p.route(s, { requestId: "b", inputLength: 10 }, 0)
 * b._tag === "Routed" && b.rank // => 1
 * ```
 *
 * @category trtllm
 * @since 0.7.0
 */
export const makeTrtllmPolicy = (kind: Kind, o: TrtllmPolicyOptions): Policy<PeerState<Extra>> => {
  const max = o.maxNumActiveRequests ?? 2048
  const kvOptions: KvCacheAwareOptions = { ...kvCacheAwareDefaults, ...o.kvCacheAware }
  return peerPolicy<Extra>({
    name: `trtllm/${kind}`,
    seed: 0,
    initExtra: (dpSize) => ({
      cached: Array.from({ length: dpSize }, () => HashSet.empty<string>()),
      warmup: kind === "kv-cache-aware" && o.coldStartWarmup === true ? [...Array(dpSize).keys()] : [],
      conversations: conversationStart
    }),
    decide: (l, extra, request) => {
      const { states, ranks } = healthyStates(l)
      const pin = request.routedDpRank
      if (pin !== undefined && (!Number.isInteger(pin) || pin < 0 || pin >= l.dpSize))
        return policyError(
          "InvalidRoutedRank",
          `routedDpRank ${pin} is outside 0..${l.dpSize - 1}`,
          "routedDpRank"
        )
      if (pin !== undefined && !ranks.includes(pin)) {
        // upstream honours the target rank whatever its health; it is not in the healthy view
        ranks.push(pin)
        states.push({
          rank: states.length,
          numActiveRequests: l.requests[pin]!,
          numActiveTokens: l.tokens[pin]!
        })
      }
      const hashes = request.prefixHashes ?? []
      const req: AdpRequest = {
        id: request.requestId,
        inputLength: request.inputLength,
        attentionDpRank: pin === undefined ? undefined : ranks.indexOf(pin),
        attentionDpRelax: pin === undefined,
        conversationId: request.sessionId,
        tokenIds: request.tokenIds
      }
      const matches = ranks.map((r) => matchLength(extra.cached[r]!, hashes, request.inputLength))
      let out: AdpAssignment
      let next = extra
      if (kind === "default") out = assignDefault(states, [req], max)
      else if (kind === "kv-cache-aware") {
        const warm = extra.warmup.filter((r) => ranks.includes(r)).map((r) => ranks.indexOf(r))
        const res = assignKvCacheAware(
          states,
          [req],
          max,
          matches.map((m) => new Map([[req.id, m]])),
          kvOptions,
          warm
        )
        out = res.assignment
        const stillPending = new Set(res.pendingWarmup.map((k) => ranks[k]!))
        next = { ...extra, warmup: extra.warmup.filter((r) => !ranks.includes(r) || stillPending.has(r)) }
      } else {
        const res = assignConversationAware(
          states,
          [req],
          max,
          extra.conversations,
          o.conversationFairShareMultiplier
        )
        out = res.assignment
        next = { ...extra, conversations: res.memory }
      }
      const k = out.assigned.findIndex((a) => a.length > 0)
      if (k < 0)
        return policyError(
          "AllRanksUnavailable",
          `every healthy rank holds ${max} active requests (max_num_active_requests)`,
          "maxNumActiveRequests"
        )
      const rank = ranks[k]!
      const charged =
        kind === "kv-cache-aware" ? Math.max(request.inputLength - matches[k]!, 0) : request.inputLength
      if (kind === "kv-cache-aware" && hashes.length > 0) {
        let set = extra.cached[rank]!
        for (const h of hashes) set = HashSet.add(set, h)
        const cached = [...next.cached]
        cached[rank] = set
        next = { ...next, cached }
      }
      return {
        rank,
        extra: next,
        tokens: charged,
        explanation: {
          scores: Array.from({ length: l.dpSize }, (_, r) => l.tokens[r]!),
          tieBreak: kind === "default" ? "fewest (tokens, requests), then lowest rank" : kind,
          details: {
            scores: "active prompt tokens per rank before this request",
            expectedNumActiveRequests: out.expectedNumActiveRequests,
            matchLengths: matches
          }
        }
      }
    }
  })
}
