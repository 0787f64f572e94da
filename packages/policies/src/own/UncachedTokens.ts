/**
 * The `uncached-tokens` policy: cost a request by the tokens each rank would still have to prefill
 * (ledger waiting-uncached tokens plus a bounded router-side index of the prefixes each rank was sent).
 *
 * @since 0.2.0
 */
import { clientsOf } from "../internal/clients.js"
import { type Policy, policyError, type RouteRequest, type RouteResult } from "../Policy.js"
import { checkNotInFlight, checkRequest } from "./internal/checkRequest.js"
import { kvFeasible } from "./internal/FreeKv.js"
import { emptyTrie, getTrie, type HashTrie, setTrie } from "./internal/HashTrie.js"
import {
  chargeLedger,
  chargeOf,
  emptyLedger,
  finishLedger,
  type LedgerState,
  ledgerHolds,
  observeLedger,
  setLedgerStatus
} from "./internal/InflightCharges.js"
import { baseOf, displacesBest, freshMax, isDated, ledgerView } from "./internal/LoadView.js"
import { emptyPrefixIndex, matchedBlocks, type PrefixIndex, recordBlocks } from "./internal/PrefixIndex.js"
import type { RankView } from "./RankView.js"

/**
 * Options of {@link makeUncachedTokens}. Every field is optional.
 *
 * - `clientCount` / `clientIndex`: front ends sharing the ranks; each charges a routed request
 *   `clientCount` times (it assumes the others route alike until the next snapshot) and starts its
 *   tie scan at `floor(dpSize * clientIndex / clientCount)`.
 * - `maxIndexedBlocks` (65 536): bound of the router-side prefix index (least recently sent go first).
 * - `staleAfterSeconds` (1) / `inclusionMarginSeconds` (0): as in `ledger-balanced`.
 *
 * @category own policies
 * @since 0.3.0
 */
export interface UncachedTokensOptions {
  readonly clientCount?: number | undefined
  readonly clientIndex?: number | undefined
  readonly maxIndexedBlocks?: number | undefined
  readonly staleAfterSeconds?: number | undefined
  readonly inclusionMarginSeconds?: number | undefined
}

/**
 * The state of an `uncached-tokens` policy: the in-flight ledger, the rotating tie cursor and the
 * prefix index (block hash -> ranks it was sent to). Opaque and immutable.
 *
 * @category own policies
 * @since 0.3.0
 */
export interface UncachedTokensState {
  readonly ledger: LedgerState
  readonly cursor: number
  readonly index: PrefixIndex
  /** Prompt tokens this front end has in flight per rank (routed, not finished). */
  readonly inflightTokens: ReadonlyArray<number>
  /** requestId -> [rank, tokens] of the requests in flight. */
  readonly inflight: HashTrie<readonly [number, number]>
}

/**
 * An `uncached-tokens` policy plus `view`, the per-rank belief it routes on at `now`.
 *
 * @category own policies
 * @since 0.3.0
 */
export interface UncachedTokensPolicy extends Policy<UncachedTokensState> {
  readonly view: (state: UncachedTokensState, now: number) => ReadonlyArray<RankView>
}

/**
 * Build loadledger's uncached-token policy (`uncached-tokens`).
 *
 * **What it optimises**: the prefill work the group must still do after admission. A request
 * costs each rank the prompt tokens that rank would have to prefill: `inputLength` minus the
 * leading blocks the router already sent it (`prefixHashes`, one block = `inputLength /
 * prefixHashes.length` tokens), read from a bounded router-side index. Each rank's load is its
 * `numTotalTokens` plus its `numWaitingUncachedTokens` when reported, plus the prompt tokens
 * charged to it and not yet in a snapshot, and never less than `clientCount` times the prompt
 * tokens this front end has in flight there (routed, not finished: the in-flight floor vLLM's
 * balancer keeps with request counts, so a snapshot that lags cannot hide them). It picks the rank with the lowest load + cost, so a
 * shared prefix attracts exactly as far as the prefill it saves outweighs the load gap: no
 * herding (an idle rank wins as soon as a holder is busier by more than the cached part).
 *
 * **When to use**: prefix-heavy traffic (multi-turn chat, agents, RL rollouts sharing prompts)
 * on DP attention, where total-tokens ignores the cache and cache-aware routers herd.
 *
 * **Unknown, absent, stale, unhealthy**: as `ledger-balanced` (an unknown or stale rank is never
 * less busy than the busiest known one; unhealthy ranks are never chosen); a rank whose
 * `numWaitingUncachedTokens` is absent while another rank reports it takes the highest reported
 * value. KV feasibility: while some rank's known free KV holds the prompt, no other rank is chosen.
 * Ties break from a rotating cursor. The prefix index covers 31 ranks; above that the cost is the
 * whole prompt for every rank (plain token balancing).
 *
 * Errors: `InvalidInput` naming `clientCount` / `clientIndex` when `checkClientOptions` refuses
 * them (every route, first), `NoRanks`, `InvalidInput` (`inputLength`), `InvalidRoutedRank`,
 * `AllRanksUnavailable`.
 *
 * @example
 * ```ts
 * import { makeUncachedTokens } from "@loadledger/policies"
 * const p = makeUncachedTokens()
 * const rows = [0, 1].map((dpRank) => ({ dpRank, timestamp: 1, numRunningReqs: 0, numWaitingReqs: 0, numTotalTokens: 0 }))
 * const a = p.route(p.observe(p.init(2), rows, 1), { requestId: "a", inputLength: 1000, prefixHashes: ["x", "y"] }, 1)
 * a._tag === "Routed" && a.rank // => 0
 * // a snapshot shows a's 1000 tokens on rank 0; b shares block "x": rank 0 costs 1000 + 500
 * // uncached, rank 1 costs 0 + 1000, so the cached half does not outweigh the load gap
 * const s = a._tag === "Routed" ? p.observe(a.state, [{ ...rows[0]!, timestamp: 2, numTotalTokens: 1000 }, { ...rows[1]!, timestamp: 2 }], 2) : a
 * const b = "ledger" in s ? p.route(s, { requestId: "b", inputLength: 1000, prefixHashes: ["x", "z"] }, 2) : s
 * b._tag === "Routed" && b.rank // => 1
 * ```
 *
 * @category own policies
 * @since 0.3.0
 */
export const makeUncachedTokens = (options: UncachedTokensOptions = {}): UncachedTokensPolicy => {
  const { clientCount, clientIndex, error: optionsError } = clientsOf(options)
  const staleAfter = options.staleAfterSeconds ?? 1
  const margin = options.inclusionMarginSeconds ?? 0
  const maxBlocks = options.maxIndexedBlocks ?? 65_536
  const addInflight = (s: UncachedTokensState, request: RouteRequest, rank: number) => {
    const inflightTokens = s.inflightTokens.slice()
    inflightTokens[rank] = inflightTokens[rank]! + request.inputLength
    return {
      inflightTokens,
      inflight: setTrie(s.inflight, request.requestId, [rank, request.inputLength] as const)
    }
  }
  const finish = (s: UncachedTokensState, ids: ReadonlyArray<string>): UncachedTokensState => {
    const ledger = finishLedger(s.ledger, ids)
    let { inflight, inflightTokens } = s
    for (const id of ids) {
      const x = getTrie(inflight, id)
      if (x === undefined) continue
      if (inflightTokens === s.inflightTokens) inflightTokens = s.inflightTokens.slice()
      ;(inflightTokens as Array<number>)[x[0]] = Math.max(0, inflightTokens[x[0]]! - x[1])
      inflight = setTrie(inflight, id, undefined)
    }
    return ledger === s.ledger && inflight === s.inflight ? s : { ...s, ledger, inflight, inflightTokens }
  }
  const withLedger = (s: UncachedTokensState, ledger: LedgerState): UncachedTokensState =>
    ledger === s.ledger ? s : { ...s, ledger }

  const route = (
    s: UncachedTokensState,
    request: RouteRequest,
    now: number
  ): RouteResult<UncachedTokensState> => {
    if (optionsError !== undefined) return optionsError
    const state = s.ledger
    const n = state.dpSize
    const bad =
      checkRequest(n, request, now, state.healthy) ??
      checkNotInFlight(request, ledgerHolds(state, request.requestId))
    if (bad !== undefined) return bad
    const charge = chargeOf(request, now, clientCount)
    const commit = (
      rank: number,
      cursor: number,
      scores?: ReadonlyArray<number>
    ): RouteResult<UncachedTokensState> => ({
      _tag: "Routed",
      rank,
      state: {
        ledger: chargeLedger(state, rank, charge),
        cursor,
        index: recordBlocks(s.index, request.prefixHashes, rank),
        ...addInflight(s, request, rank)
      },
      explanation: {
        scores,
        tieBreak: "lowest load + uncached prompt tokens, then known before unknown, then rotating index"
      }
    })
    if (request.routedDpRank !== undefined) {
      const r = request.routedDpRank
      return commit(r, s.cursor)
    }
    const fm = freshMax(state, now, staleAfter)
    const fits = kvFeasible(state, request.inputLength)
    const matched = new Array<number>(n)
    matchedBlocks(s.index, request.prefixHashes, matched)
    const blocks = request.prefixHashes?.length ?? 0
    const blockTokens = blocks > 0 ? request.inputLength / blocks : 0
    let maxUncached = 0
    // while a fresh healthy rank can take the prompt, a stale or unknown one is not chosen (a
    // prefix it holds must not outweigh that it may be hung or gone: never attractive)
    let freshUsable = false
    for (let r = 0; r < n; r++) {
      const u = state.snapshots[r]?.numWaitingUncachedTokens
      if (u !== undefined && u > maxUncached) maxUncached = u
      if (state.healthy[r] && (fits === undefined || fits[r]) && isDated(state, r, now, staleAfter))
        freshUsable = true
    }
    const scores = new Array<number>(n)
    const start = (Math.floor((n * clientIndex) / clientCount) + s.cursor) % n
    let best = -1
    let bestScore = 0
    for (let i = 0, r = start; i < n; i++, r = r + 1 === n ? 0 : r + 1) {
      const row = state.snapshots[r]
      const waitingUncached =
        row === undefined || row.unknown !== undefined
          ? maxUncached
          : (row.numWaitingUncachedTokens ?? maxUncached)
      const cost = Math.max(0, request.inputLength - matched[r]! * blockTokens)
      const load = baseOf(state, r, now, staleAfter, fm)[1] + state.chargedTokens[r]! + waitingUncached
      const score = Math.max(load, clientCount * s.inflightTokens[r]!) + cost
      scores[r] = score
      if (!state.healthy[r] || (fits !== undefined && !fits[r])) continue
      if (freshUsable && !isDated(state, r, now, staleAfter)) continue
      if (displacesBest(state, r, score, best, bestScore, now, staleAfter)) {
        best = r
        bestScore = score
      }
    }
    if (best < 0)
      return policyError(
        "AllRanksUnavailable",
        `Cannot route request: all ${n} DP ranks are unavailable.`,
        "status"
      )
    return commit(best, (s.cursor + 1) % n, scores)
  }

  return {
    name: "uncached-tokens",
    init: (dpSize) => {
      const ledger = emptyLedger(dpSize)
      return {
        ledger,
        cursor: 0,
        index: emptyPrefixIndex(maxBlocks),
        inflightTokens: new Array<number>(ledger.dpSize).fill(0),
        inflight: emptyTrie(1_000_000)
      }
    },
    observe: (s, loads, now) =>
      Number.isFinite(now) ? withLedger(s, observeLedger(s.ledger, loads, margin, now)) : s,
    route,
    finish,
    setStatus: (s, status) => withLedger(s, setLedgerStatus(s.ledger, status)),
    view: (s, now) => ledgerView(s.ledger, now, staleAfter)
  }
}
