/**
 * `makeCacheAffinity`: prefix-cache and session affinity with load gates, over the one ledger and
 * load view. Over 300 lines: one policy whose gates and session table read one another's state.
 * Not a sum of terms (issue 29 left it whole): a veto, a session table and hysteresis are state
 * and thresholds that depend on the previous decision, not per-rank costs of one read-only view.
 *
 * @since 0.1.0
 */
import { packed } from "../internal/packed.js"
import type { Explanation, Policy, RouteRequest, RouteResult } from "../Policy.js"
import { allUnavailable, checkNotInFlight, checkRequest } from "./internal/checkRequest.js"
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
import { freshMax, LedgerScoreView, ledgerView } from "./internal/LoadView.js"
import type { RankView } from "./RankView.js"

/**
 * Options of {@link makeCacheAffinity}, all optional: `cacheThreshold` (0.5, share of the prefix
 * blocks for a hit), the imbalance gate `max - min > balanceAbsThreshold (64) && max >
 * balanceRelThreshold (1.5) x min`, `kvOverloadThreshold` (0.95, no affinity traffic at or above),
 * session hysteresis `migrateHighWater` (0.95) / `migrateLowWater` (0.8), `affinityLoadBound`
 * (0.25: a hit only while the holder's load is at most `least + floor(0.25 x least)`),
 * `staleAfterSeconds` (1), `inclusionMarginSeconds` (0), `maxPrefixEntries` / `maxSessions` (100 000).
 *
 * @category own policies
 * @since 0.1.0
 */
export interface CacheAffinityOptions {
  readonly cacheThreshold?: number | undefined
  readonly balanceAbsThreshold?: number | undefined
  readonly balanceRelThreshold?: number | undefined
  readonly kvOverloadThreshold?: number | undefined
  readonly migrateHighWater?: number | undefined
  readonly migrateLowWater?: number | undefined
  readonly affinityLoadBound?: number | undefined
  readonly staleAfterSeconds?: number | undefined
  readonly inclusionMarginSeconds?: number | undefined
  readonly maxPrefixEntries?: number | undefined
  readonly maxSessions?: number | undefined
}

interface KvAdjust {
  readonly atSeconds: number
  readonly delta: number
}

/**
 * The state of a `cache-affinity` policy: the ledger, each prefix block's workers (newest first,
 * at most 4), each session's engine and per-engine counts, requests routed, KV moves not yet in a
 * snapshot, draining engines. Opaque and immutable.
 *
 * @category own policies
 * @since 0.1.0
 */
export interface CacheAffinityState {
  readonly ledger: LedgerState
  readonly prefixOwners: HashTrie<ReadonlyArray<number>>
  readonly sessions: HashTrie<number>
  readonly sessionCount: ReadonlyArray<number>
  readonly processed: ReadonlyArray<number>
  readonly kvAdjust: ReadonlyArray<ReadonlyArray<KvAdjust>>
  readonly draining: ReadonlyArray<boolean>
}

/**
 * A `cache-affinity` policy plus `view`, `projectedKv` (reported KV usage plus session moves not
 * yet in a snapshot) and `sessionRank`.
 *
 * @category own policies
 * @since 0.1.0
 */
export interface CacheAffinityPolicy extends Policy<CacheAffinityState> {
  readonly view: (state: CacheAffinityState, now: number) => ReadonlyArray<RankView>
  readonly projectedKv: (state: CacheAffinityState) => ReadonlyArray<number | undefined>
  readonly sessionRank: (state: CacheAffinityState, sessionId: string) => number | undefined
}

const maxOwners = 4
const noOwners: ReadonlyArray<number> = []
const tieBreak = "lowest (load, processed), then known before unknown, then index"

const isOverloaded = (kv: ReadonlyArray<number | undefined>, r: number, kvOverload: number): boolean => {
  const k = kv[r]
  return k !== undefined && k >= kvOverload
}

/**
 * The candidate with the lowest load, then a fresh one before a stale or never-dated one
 * (`unknown[r]` >= 4), then the fewest processed, then the lowest `unknown[r]` (4 when stale, plus
 * 2 when its counts are unknown, plus 1 when its KV usage is: unknown is never attractive), then
 * the first of `cands`.
 */
const leastLoaded = (
  cands: ReadonlyArray<number>,
  loads: ReadonlyArray<number>,
  processed: ReadonlyArray<number>,
  unknown: ReadonlyArray<number>
): number => {
  let best = cands[0]!
  for (let i = 0; i < cands.length; i++) {
    const r = cands[i]!
    const a = loads[r]! - loads[best]!
    const st = (unknown[r]! >= 4 ? 1 : 0) - (unknown[best]! >= 4 ? 1 : 0)
    const p = processed[r]! - processed[best]!
    if (a < 0 || (a === 0 && (st < 0 || (st === 0 && (p < 0 || (p === 0 && unknown[r]! < unknown[best]!))))))
      best = r
  }
  return best
}

const projected = (state: CacheAffinityState, r: number): number | undefined => {
  let x = state.ledger.snapKv[r]!
  if (Number.isNaN(x)) return undefined
  for (const a of state.kvAdjust[r]!) x += a.delta
  return Math.max(0, x)
}

/**
 * `cache-affinity`: a request goes to its session's engine or a worker holding its prefix unless a
 * load gate vetoes it (imbalance on engine-reported counts plus charges, KV overload, the affinity
 * load bound), else to the least loaded by (load, processed, index); sessions leave an engine past
 * `migrateHighWater` KV usage for engines below `migrateLowWater`, one per turn. Fixes SGLang
 * #14305 / #14532 (S12), smg #1621 (S13), vllm-project/router #198 (S14), prime-rl #3255 (S15);
 * details in docs/own-policies.md.
 *
 * **When to use**: in front of prefix-caching engines with multi-turn sessions (`prefixHashes`,
 * `sessionId`). Errors: `NoRanks`, `InvalidInput`, `InvalidRoutedRank`, `AllRanksUnavailable`;
 * `details.reason`: `pinned`, `session`, `session-migrated`, `cache-hit`, `cache-miss`,
 * `kv-overloaded`, `imbalanced` or `beyond-load-bound`.
 *
 * @example
 * ```ts
 * import { makeCacheAffinity } from "@loadledger/policies"
 * const p = makeCacheAffinity({})
 * const a = p.route(p.init(2), { requestId: "a", inputLength: 8, prefixHashes: ["sys", "u1"] }, 0)
 * a._tag === "Routed" && a.rank // => 0
 * ```
 *
 * @category own policies
 * @since 0.1.0
 */
export const makeCacheAffinity = (options: CacheAffinityOptions = {}): CacheAffinityPolicy => {
  const cacheThreshold = options.cacheThreshold ?? 0.5
  const absT = options.balanceAbsThreshold ?? 64
  const relT = options.balanceRelThreshold ?? 1.5
  const kvOverload = options.kvOverloadThreshold ?? 0.95
  const high = options.migrateHighWater ?? 0.95
  const low = options.migrateLowWater ?? 0.8
  const staleAfter = options.staleAfterSeconds ?? 1
  const margin = options.inclusionMarginSeconds ?? 0
  const loadBound = options.affinityLoadBound ?? 0.25
  const maxPrefix = options.maxPrefixEntries ?? 100_000
  const maxSessions = options.maxSessions ?? 100_000

  const init = (dpSize: number): CacheAffinityState => {
    const ledger = emptyLedger(dpSize)
    const n = ledger.dpSize
    return {
      ledger,
      prefixOwners: emptyTrie(maxPrefix),
      sessions: emptyTrie(maxSessions),
      sessionCount: packed<number>(n, 0),
      processed: packed<number>(n, 0),
      kvAdjust: packed<ReadonlyArray<KvAdjust>>(n, []),
      draining: packed<boolean>(n, false)
    }
  }

  const observe = (
    state: CacheAffinityState,
    loads: Parameters<Policy<unknown>["observe"]>[1],
    now: number
  ) => {
    if (!Number.isFinite(now)) return state
    const ledger = observeLedger(state.ledger, loads, margin, now)
    if (ledger === state.ledger) return state
    const kvAdjust = state.kvAdjust.map((adj, r) => {
      const s = ledger.snapshots[r]
      const at = ledger.snapTimestamp[r]!
      if (s === undefined || s === state.ledger.snapshots[r] || adj.length === 0 || Number.isNaN(at))
        return adj
      return adj.filter((a) => !(a.atSeconds + margin < at))
    })
    return { ...state, ledger, kvAdjust }
  }

  const commit = (
    state: CacheAffinityState,
    request: RouteRequest,
    rank: number,
    now: number,
    explanation: Explanation,
    sessionFrom?: number,
    kvShare?: number,
    draining: ReadonlyArray<boolean> = state.draining
  ): RouteResult<CacheAffinityState> => {
    const ledger = chargeLedger(state.ledger, rank, chargeOf(request, now, 1))
    const processed = state.processed.slice()
    processed[rank] = processed[rank]! + 1
    const hashes = request.prefixHashes ?? []
    let prefixOwners = state.prefixOwners
    for (const h of hashes) {
      const prev = getTrie(prefixOwners, h) ?? noOwners
      if (prev[0] !== rank) {
        const owners = [rank]
        for (let i = 0; i < prev.length && owners.length < maxOwners; i++)
          if (prev[i] !== rank) owners.push(prev[i]!)
        prefixOwners = setTrie(prefixOwners, h, owners)
      }
    }
    let { sessions, sessionCount, kvAdjust } = state
    if (request.sessionId !== undefined && sessionFrom !== rank) {
      sessions = setTrie(sessions, request.sessionId, rank)
      const counts = sessionCount.slice()
      counts[rank] = counts[rank]! + 1
      if (sessionFrom !== undefined) counts[sessionFrom] = Math.max(0, counts[sessionFrom]! - 1)
      sessionCount = counts
      if (sessionFrom !== undefined && kvShare !== undefined && kvShare > 0) {
        const adj = [...kvAdjust]
        adj[sessionFrom] = [...adj[sessionFrom]!, { atSeconds: now, delta: -kvShare }]
        adj[rank] = [...adj[rank]!, { atSeconds: now, delta: kvShare }]
        kvAdjust = adj
      }
    }
    let next: CacheAffinityState = {
      ledger,
      prefixOwners,
      sessions,
      sessionCount,
      processed,
      kvAdjust,
      draining
    }
    if (sessionFrom !== undefined && draining[sessionFrom]) {
      const p = projected(next, sessionFrom)
      if (p === undefined || p <= low) {
        const d = [...draining]
        d[sessionFrom] = false
        next = { ...next, draining: d }
      }
    }
    return { _tag: "Routed", rank, state: next, explanation }
  }

  const route = (
    state: CacheAffinityState,
    request: RouteRequest,
    now: number
  ): RouteResult<CacheAffinityState> => {
    const n = state.ledger.dpSize
    const bad =
      checkRequest(n, request, now, state.ledger.healthy) ??
      checkNotInFlight(request, ledgerHolds(state.ledger, request.requestId))
    if (bad !== undefined) return bad
    const known = request.sessionId === undefined ? undefined : getTrie(state.sessions, request.sessionId)
    if (request.routedDpRank !== undefined) {
      const pinned = { tieBreak: "pinned by routedDpRank", details: { reason: "pinned" } }
      return commit(state, request, request.routedDpRank, now, pinned, known)
    }
    // the one load view: loads are its requests (reported + charged, stale and unknown floored)
    const fm = freshMax(state.ledger, now, staleAfter)
    const view = new LedgerScoreView(state.ledger, now, request, staleAfter, fm, undefined, undefined)
    const loads = new Array<number>(n)
    const stale: Array<number> = []
    for (let r = 0; r < n; r++) {
      if (view.stale(r)) stale.push(r)
      loads[r] = view.requests(r)
    }
    // indexed stores then a trimmed length: several times faster than push in V8
    // KV feasibility: while a rank's known free KV holds the prompt, only such ranks are eligible
    const fits = kvFeasible(state.ledger, request.inputLength)
    let eligible = new Array<number>(n)
    let ne = 0
    for (let r = 0; r < n; r++)
      if (state.ledger.healthy[r] && (fits === undefined || fits[r])) eligible[ne++] = r
    eligible.length = ne
    // while a fresh rank is eligible, a stale or unknown one is not: not by load (its floor ties it
    // at best), nor by a session or a prefix it holds (it may be hung or gone: never attractive)
    const dated = (r: number) => view.dated(r)
    const freshOnly = eligible.some(dated) && !eligible.every(dated)
    if (freshOnly) {
      eligible = eligible.filter(dated)
      ne = eligible.length
    }
    const barred = (r: number) => freshOnly && !dated(r)
    if (eligible.length === 0) return allUnavailable(n, "workers are")
    const kv = new Array<number | undefined>(n)
    // a rank whose load or KV usage is unknown loses every full tie to a known one
    const unknown = new Array<number>(n)
    let kvMax: number | undefined
    for (let r = 0; r < n; r++) {
      const k = projected(state, r)
      kv[r] = k
      // as the ledger's unknownLevel (stale 4, counts 2), with the projected KV usage for 1
      unknown[r] =
        (dated(r) ? 0 : 4) +
        (Number.isNaN(state.ledger.snapTimestamp[r]!) ? 2 : 0) +
        (k === undefined ? 1 : 0)
      if (k !== undefined && !(kvMax !== undefined && kvMax >= k)) kvMax = k
    }
    // a worker whose KV usage is unknown is taken to have the highest reported (never the coolest)
    if (kvMax !== undefined) for (let r = 0; r < n; r++) if (kv[r] === undefined) kv[r] = kvMax
    const cool = new Array<number>(ne)
    const hot = new Array<number>(ne)
    let nc = 0
    let nh = 0
    let maxL = Number.NEGATIVE_INFINITY
    let minL = Number.POSITIVE_INFINITY
    for (let i = 0; i < ne; i++) {
      const r = eligible[i]!
      if (isOverloaded(kv, r, kvOverload)) hot[nh++] = r
      else cool[nc++] = r
      maxL = Math.max(maxL, loads[r]!)
      minL = Math.min(minL, loads[r]!)
    }
    cool.length = nc
    hot.length = nh
    const pool = cool.length > 0 ? cool : eligible
    const imbalanced = maxL - minL > absT && maxL > relT * minL
    const processed = state.processed
    const explain = (details: Record<string, unknown>): Explanation => ({
      scores: loads,
      tieBreak,
      stale,
      details: { imbalanced, projectedKv: kv, overloaded: hot, ...details }
    })

    if (known !== undefined && known < n) {
      const e = known
      let draining = state.draining
      const ke = kv[e]
      if (!draining[e] && ke !== undefined && ke >= high) {
        const d = draining.slice()
        d[e] = true
        draining = d
      }
      const dests: Array<number> = []
      for (let i = 0; i < eligible.length; i++) {
        const r = eligible[i]!
        const k = kv[r]
        if (r !== e && k !== undefined && k < low) dests.push(r)
      }
      if (
        state.ledger.healthy[e] &&
        (fits === undefined || fits[e] === true) &&
        !barred(e) &&
        !(draining[e] && dests.length > 0)
      )
        return commit(state, request, e, now, explain({ reason: "session" }), e, undefined, draining)
      const others: Array<number> = []
      for (let i = 0; i < pool.length; i++) if (pool[i] !== e) others.push(pool[i]!)
      const dest =
        dests.length > 0
          ? leastLoaded(dests, loads, processed, unknown)
          : leastLoaded(others.length > 0 ? others : pool, loads, processed, unknown)
      const share = ke !== undefined && state.sessionCount[e]! > 0 ? ke / state.sessionCount[e]! : undefined
      const migrated = explain({ reason: "session-migrated", migratedFrom: e, kvShare: share })
      return commit(state, request, dest, now, migrated, e, share, draining)
    }

    const hashes = request.prefixHashes ?? []
    let matchRank: number | undefined
    let matchLen = 0
    if (hashes.length > 0) {
      const first = getTrie(state.prefixOwners, hashes[0]!) ?? noOwners
      let alive: Array<number> = []
      for (let i = 0; i < first.length; i++) {
        const w = first[i]!
        if (w < n && state.ledger.healthy[w] && (fits === undefined || fits[w] === true) && !barred(w))
          alive.push(w)
      }
      let len = 0
      let lastAlive = alive
      while (alive.length > 0 && len < hashes.length) {
        lastAlive = alive
        len++
        if (len === hashes.length) break
        const owners = getTrie(state.prefixOwners, hashes[len]!) ?? noOwners
        const next: Array<number> = []
        for (let i = 0; i < alive.length; i++) if (owners.includes(alive[i]!)) next.push(alive[i]!)
        alive = next
      }
      if (len > 0 && lastAlive.length > 0) {
        matchRank = leastLoaded(lastAlive, loads, processed, unknown)
        matchLen = len
      }
    }
    const matchRatio = hashes.length > 0 ? matchLen / hashes.length : 0
    let poolMin = Number.POSITIVE_INFINITY
    for (let i = 0; i < pool.length; i++) poolMin = Math.min(poolMin, loads[pool[i]!]!)
    // a hit unless a gate vetoes it (bounded load: a shared prefix never keeps work off a much less loaded rank)
    const reason =
      matchRank === undefined || matchRatio < cacheThreshold
        ? "cache-miss"
        : isOverloaded(kv, matchRank, kvOverload) && cool.length > 0
          ? "kv-overloaded"
          : imbalanced
            ? "imbalanced"
            : loads[matchRank]! > poolMin + Math.floor(loadBound * poolMin)
              ? "beyond-load-bound"
              : "cache-hit"
    const rank = reason === "cache-hit" ? matchRank! : leastLoaded(pool, loads, processed, unknown)
    return commit(state, request, rank, now, explain({ reason, matchRank, matchRatio }))
  }

  return {
    name: "cache-affinity",
    init,
    observe,
    route,
    finish: (state, requestIds) => {
      const ledger = finishLedger(state.ledger, requestIds)
      return ledger === state.ledger ? state : { ...state, ledger }
    },
    setStatus: (state, status) => {
      const ledger = setLedgerStatus(state.ledger, status)
      return ledger === state.ledger ? state : { ...state, ledger }
    },
    view: (state, now) => ledgerView(state.ledger, now, staleAfter),
    projectedKv: (state) => Array.from({ length: state.ledger.dpSize }, (_, r) => projected(state, r)),
    sessionRank: (state, sessionId) => getTrie(state.sessions, sessionId)
  }
}

/**
 * `cache-affinity` with default options.
 *
 * @example
 * ```ts
 * import { cacheAffinity } from "@loadledger/policies"
 * const r = cacheAffinity.route(cacheAffinity.init(3), { requestId: "a", inputLength: 10 }, 0)
 * r._tag === "Routed" && r.rank // => 0
 * ```
 *
 * @category own policies
 * @since 0.1.0
 */
export const cacheAffinity: CacheAffinityPolicy = makeCacheAffinity()
