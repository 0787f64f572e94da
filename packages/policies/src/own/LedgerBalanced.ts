/**
 * `makeLedgerBalanced`: least (tokens, requests) or (requests, tokens) over the in-flight ledger:
 * speculative charges survive snapshot overwrites until a snapshot covers them, ties rotate.
 *
 * @since 0.1.0
 */
import { clientsOf } from "../internal/clients.js"
import { type Policy, policyError, type RouteRequest, type RouteResult } from "../Policy.js"
import { checkNotInFlight, checkRequest } from "./internal/checkRequest.js"
import { kvFeasible } from "./internal/FreeKv.js"
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
import {
  freshMax,
  isDated,
  isStaleRow,
  ledgerView,
  maxKnownKv,
  unknownBase,
  unknownLevel
} from "./internal/LoadView.js"
import type { RankView } from "./RankView.js"

/**
 * Options of {@link makeLedgerBalanced}. Every field is optional.
 *
 * - `metric`: `"tokens"` (default) compares `(tokens, requests)` lexicographically, like SGLang's
 *   TOTAL_TOKENS; `"requests"` compares `(requests, tokens)`.
 * - `clientCount` / `clientIndex`: router replicas (vLLM API servers) sharing the engines. Ties are
 *   broken by index starting at `floor(dpSize * clientIndex / clientCount)` plus a cursor that
 *   advances by one on every scored route (as vLLM's rotating `eng_start_index`), so replicas do not
 *   all pile onto rank 0 and repeated tied snapshots do not keep favouring the same ranks.
 * - `chargeScale`: how many requests one routed request is charged as (default `clientCount`, 1 when
 *   absent): each replica assumes the others route alike between snapshots.
 * - `staleAfterSeconds` (default 1): a snapshot older than this (`now - timestamp >`) is stale.
 * - `inclusionMarginSeconds` (default 0): a snapshot stamped `T` includes the requests routed before
 *   `T - margin` (raise it for clock skew between router and engines).
 * - `kvFull` (0.99) / `kvRoom` (0.9): KV-pressure guard thresholds.
 *
 * @category own policies
 * @since 0.1.0
 */
export interface LedgerBalancedOptions {
  readonly metric?: "tokens" | "requests" | undefined
  readonly clientCount?: number | undefined
  readonly clientIndex?: number | undefined
  readonly chargeScale?: number | undefined
  readonly staleAfterSeconds?: number | undefined
  readonly inclusionMarginSeconds?: number | undefined
  readonly kvFull?: number | undefined
  readonly kvRoom?: number | undefined
}

/**
 * The state of a `ledger-balanced` policy: the in-flight ledger (newest snapshot per rank,
 * outstanding charges, health) and `cursor`, the rotating start of the tie-breaking scan (advanced
 * by one on every scored route, as vLLM's `eng_start_index`). Treat it as opaque and immutable.
 *
 * @category own policies
 * @since 0.1.0
 */
export interface LedgerBalancedState {
  readonly ledger: LedgerState
  readonly cursor: number
}

/**
 * A `ledger-balanced` policy plus `view`, the per-rank belief it routes on at `now`.
 *
 * @category own policies
 * @since 0.1.0
 */
export interface LedgerBalancedPolicy extends Policy<LedgerBalancedState> {
  readonly view: (state: LedgerBalancedState, now: number) => ReadonlyArray<RankView>
}

const ascending = (x: number, y: number): number => x - y

/** Whether rank `r` at `(a, b)` beats `than` at `(thanA, thanB)`: lower, or a full tie on a better-known load. */
const better = (
  state: LedgerState,
  now: number,
  staleAfterSeconds: number,
  r: number,
  a: number,
  b: number,
  than: number,
  thanA: number,
  thanB: number
): boolean =>
  than < 0 ||
  a < thanA ||
  (a === thanA &&
    (b < thanB ||
      (b === thanB &&
        unknownLevel(state, r, now, staleAfterSeconds) < unknownLevel(state, than, now, staleAfterSeconds))))

/**
 * Build loadledger's in-flight-charging ledger policy (`ledger-balanced`).
 *
 * **Fault class it fixes**: a stale load view during a burst. Every routed request is charged to its
 * rank (requests and prompt tokens) and the charge stays until a snapshot stamped after the routing
 * time arrives (or the request finishes), so a coordinator broadcast that overwrites the view cannot
 * erase in-flight work (vLLM #48027 / #21617, S02; vLLM #41626, S03; SGLang #21699, S05), and an
 * older snapshot never overwrites a newer one (SGLang's DPBudget applies an older timestamp, see
 * `fixtures/reference/sglang/README.md`, `update_budget`). Snapshot age is tracked: a rank whose
 * snapshot is older than `staleAfterSeconds` (a frozen publisher, vLLM #48808, S04) or that never
 * published is flagged in `explanation.stale` / `details.unknown` and treated as at least as busy as
 * the busiest fresh rank, never as idle. KV-pressure guard (vLLM #36748, S07): a rank with
 * `kvCacheUsage >= kvFull` and waiting work is never chosen while a healthy rank has
 * `kvCacheUsage < kvRoom`. KV feasibility: while some healthy rank's free KV (`kvAvailableTokens` +
 * `kvEvictableTokens`, else capacity minus `numUsedTokens`, minus tokens charged since) holds the
 * prompt, a rank whose free KV does not (or is unknown) is never chosen (`details.kvGuarded`).
 *
 * **Unknown, absent, stale, unhealthy** (the ledger contract's rows). Needs `numRunningReqs`,
 * `numWaitingReqs` and `numTotalTokens`. A row that is `unknown` or lacks one of them makes the rank
 * unknown (`details.unknown`): its base keeps each count it did report and takes, for each one it did
 * not, the busiest known value (the maximum over ranks with a known row, stale ones included), and
 * when its row is stale at least the busiest fresh base, so it is never less busy than a known rank
 * in its place; with no known rank at all, unreported counts are 0 for every rank alike. A rank that
 * did not report `kvCacheUsage` is guarded as if at the highest reported usage. A row without
 * `timestamp` is observed at `now`. Stale: at least the busiest fresh base. Unhealthy: never chosen
 * (`AllRanksUnavailable` when none is healthy).
 *
 * **When to use**: in place of SGLang TOTAL_TOKENS / TOTAL_REQUESTS or vLLM's DP balancer, when
 * snapshots arrive late or are overwritten mid-burst. Upstream for comparison: SGLang
 * `python/sglang/srt/managers/data_parallel_controller.py` (DPBudget, reference README), vLLM
 * `vllm/v1/engine/core_client.py` @ 00080ee1 (`DPLBAsyncMPClient`).
 *
 * Errors: `InvalidInput` naming `clientCount` / `clientIndex` when `checkClientOptions` refuses
 * them (every route, first), `NoRanks` (dpSize 0), `InvalidInput` (`inputLength`), `InvalidRoutedRank`,
 * `AllRanksUnavailable`. A pinned request (`routedDpRank`) is charged but not scored.
 *
 * **Gotchas**: snapshot `timestamp`s and `now` must be on the same clock (seconds); with skew,
 * raise `inclusionMarginSeconds`. Without `finish` calls, a charge lives until a snapshot stamped
 * after its routing time arrives, so a publisher that never advances its timestamp keeps every
 * charge (conservative: the rank only looks busier).
 *
 * @example
 * ```ts
 * import { makeLedgerBalanced } from "@loadledger/policies"
 * const p = makeLedgerBalanced({})
 * let s = p.observe(p.init(2), [
 *   { dpRank: 0, timestamp: 0, numRunningReqs: 0, numWaitingReqs: 0, numTotalTokens: 100 },
 *   { dpRank: 1, timestamp: 0, numRunningReqs: 0, numWaitingReqs: 0, numTotalTokens: 100 }
 * ], 0)
 * const a = p.route(s, { requestId: "a", inputLength: 50 }, 0.001)
 * a._tag === "Routed" && a.rank // => 0
 * // rank 0 now carries 150 tokens, so the next request goes to rank 1
 * const b = a._tag === "Routed" ? p.route(a.state, { requestId: "b", inputLength: 50 }, 0.002) : a
 * b._tag === "Routed" && b.rank // => 1
 * ```
 *
 * @category own policies
 * @since 0.1.0
 */
export const makeLedgerBalanced = (options: LedgerBalancedOptions = {}): LedgerBalancedPolicy => {
  const metric = options.metric ?? "tokens"
  const { clientCount, clientIndex, error: optionsError } = clientsOf(options)
  const chargeScale = options.chargeScale ?? clientCount
  const staleAfterSeconds = options.staleAfterSeconds ?? 1
  const margin = options.inclusionMarginSeconds ?? 0
  const kvFull = options.kvFull ?? 0.99
  const kvRoom = options.kvRoom ?? 0.9
  const view = (s: LedgerBalancedState, now: number) => ledgerView(s.ledger, now, staleAfterSeconds)
  const withLedger = (s: LedgerBalancedState, ledger: LedgerState): LedgerBalancedState =>
    ledger === s.ledger ? s : { ledger, cursor: s.cursor }

  const route = (
    outer: LedgerBalancedState,
    request: RouteRequest,
    now: number
  ): RouteResult<LedgerBalancedState> => {
    if (optionsError !== undefined) return optionsError
    const state = outer.ledger
    const n = state.dpSize
    const bad =
      checkRequest(n, request, now, state.healthy) ??
      checkNotInFlight(request, ledgerHolds(state, request.requestId))
    if (bad !== undefined) return bad
    const charge = chargeOf(request, now, chargeScale)
    if (request.routedDpRank !== undefined) {
      const r = request.routedDpRank
      return {
        _tag: "Routed",
        rank: r,
        state: { ledger: chargeLedger(state, r, charge), cursor: outer.cursor },
        explanation: { tieBreak: "pinned by routedDpRank" }
      }
    }
    const fm = freshMax(state, now, staleAfterSeconds)
    const {
      healthy,
      snapshots,
      snapTimestamp,
      rowTimestamp,
      snapRequests,
      snapTokens,
      snapWaiting,
      snapKv,
      chargedRequests,
      chargedTokens
    } = state
    const byTokens = metric === "tokens"
    let room = false
    for (let r = 0; r < n; r++) if (healthy[r] && snapKv[r]! < kvRoom) room = true
    // a rank whose KV usage is unknown is guarded as if it had the highest reported usage
    const kvUnknownAs = room ? maxKnownKv(state) : undefined
    const fits = kvFeasible(state, request.inputLength)
    const scores = new Array<number>(n)
    const stale: Array<number> = []
    const unknown: Array<number> = []
    const guarded: Array<number> = []
    // the replica's offset plus the rotating cursor: repeated tied snapshots do not keep picking
    // the same ranks (the bias vLLM removed with its rotating eng_start_index)
    const start = (Math.floor((n * clientIndex) / clientCount) + outer.cursor) % n
    // the least loaded usable rank, and among the ranks whose newest counts are fresh (`dated`): a
    // stale or unknown rank is chosen only while no dated one is usable (its floors tie it at
    // best, and it may be hung or gone: unknown is never attractive)
    let best = -1
    let bestA = 0
    let bestB = 0
    let dated = -1
    let datedA = 0
    let datedB = 0
    for (let i = 0, r = start; i < n; i++, r = r + 1 === n ? 0 : r + 1) {
      let q = snapRequests[r]!
      let t = snapTokens[r]!
      let w = snapWaiting[r]!
      if (!(now - snapTimestamp[r]! <= staleAfterSeconds)) {
        if (Number.isNaN(snapTimestamp[r]!)) {
          // unknown or never published: what it reported, the busiest known values for the rest
          unknown.push(r)
          // a partial row (counts, no tokens: vLLM's) whose counts are old is stale too
          if (isStaleRow(state, r, now, staleAfterSeconds)) stale.push(r)
          const base = unknownBase(snapshots[r], fm, now, staleAfterSeconds)
          q = base[0]
          t = base[1]
          w = base[2]
        } else {
          // stale: never idle, at least the busiest fresh rank's base
          stale.push(r)
          if (fm.requests >= 0) {
            q = Math.max(q, fm.requests)
            t = Math.max(t, fm.tokens)
          }
        }
      }
      q += chargedRequests[r]!
      t += chargedTokens[r]!
      const a = byTokens ? t : q
      const b = byTokens ? q : t
      scores[r] = a
      if (!healthy[r]) continue
      if (fits !== undefined && !fits[r]) {
        guarded.push(r)
        continue
      }
      const kv = Number.isNaN(snapKv[r]!) ? kvUnknownAs : snapKv[r]!
      if (room && kv !== undefined && kv >= kvFull && w + chargedRequests[r]! > 0) {
        guarded.push(r)
        continue
      }
      // unknown is never attractive: on a full tie a known rank beats an unknown one
      if (better(state, now, staleAfterSeconds, r, a, b, best, bestA, bestB)) {
        best = r
        bestA = a
        bestB = b
      }
      if (
        isDated(state, r, now, staleAfterSeconds) &&
        better(state, now, staleAfterSeconds, r, a, b, dated, datedA, datedB)
      ) {
        dated = r
        datedA = a
        datedB = b
      }
    }
    if (dated >= 0) best = dated
    if (best < 0)
      return policyError(
        "AllRanksUnavailable",
        `Cannot route request: all ${n} DP ranks are unavailable.`,
        "status"
      )
    if (start !== 0) {
      stale.sort(ascending)
      unknown.sort(ascending)
      guarded.sort(ascending)
    }
    const staleAgesSeconds: Array<number> = []
    for (let i = 0; i < stale.length; i++) staleAgesSeconds.push(now - rowTimestamp[stale[i]!]!)
    return {
      _tag: "Routed",
      rank: best,
      state: { ledger: chargeLedger(state, best, charge), cursor: (outer.cursor + 1) % n },
      explanation: {
        scores,
        tieBreak: `lowest (${metric === "tokens" ? "tokens, requests" : "requests, tokens"}), then known before unknown, then index from ${start}`,
        stale,
        details: {
          unknown,
          kvGuarded: guarded,
          staleAgesSeconds
        }
      }
    }
  }

  return {
    name: "ledger-balanced",
    init: (dpSize) => ({ ledger: emptyLedger(dpSize), cursor: 0 }),
    observe: (s, loads, now) =>
      Number.isFinite(now) ? withLedger(s, observeLedger(s.ledger, loads, margin, now)) : s,
    route,
    finish: (s, requestIds) => withLedger(s, finishLedger(s.ledger, requestIds)),
    setStatus: (s, status) => withLedger(s, setLedgerStatus(s.ledger, status)),
    view
  }
}

/**
 * `ledger-balanced` with default options (tokens metric, one router replica, 1 s staleness bound).
 *
 * @example
 * ```ts
 * import { ledgerBalanced } from "@loadledger/policies"
 * const r = ledgerBalanced.route(ledgerBalanced.init(4), { requestId: "a", inputLength: 10 }, 0)
 * r._tag === "Routed" && r.rank // => 0
 * ```
 *
 * @category own policies
 * @since 0.1.0
 */
export const ledgerBalanced: LedgerBalancedPolicy = makeLedgerBalanced()
