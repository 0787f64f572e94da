/**
 * The production-stack policies as loadledger `Policy` reducers (ranks = engines by index), for the
 * registry, the simulator and the laws. Upstream: vllm-project/production-stack
 * `src/vllm_router/routers/routing_logic.py`, `src/vllm_router/stats/request_stats.py`, commit
 * a6c01db05f65f556235413ba8dbcfb0c01132fff.
 *
 * @since 0.2.0
 */

import { ranksOf } from "../../internal/ranksOf.js"
import { policyError, type RouteRequest, type RouteResult } from "../../Policy.js"
import { checkStatus } from "../../RankStatus.js"
import { checkInputLength, checkNow, checkRequestFields } from "../../RequestChecks.js"
import { blocksAsChunks } from "../internal/blocks.js"
import { type Charges, charge, noCharges, release } from "../internal/charges.js"
import { drawBelow } from "../internal/rng.js"
import type { PeerPolicy } from "../PeerPolicy.js"
import { chunkHashes, emptyTrie, longestPrefixMatch, type TrieNode } from "./internal/hashTrie.js"
import { loadAwareStep } from "./internal/loadAwareStep.js"
import { PS_LOADAWARE_DEFAULT_BETA } from "./LoadAwareBeta.js"
import { type PsPrefixAwareState, psPrefixAwareInit, psPrefixAwareSelect } from "./PrefixAware.js"
import { psRoundRobinSelect } from "./RoundRobin.js"
import { psSessionSelect } from "./Session.js"

/**
 * The production-stack policies the registry offers (`production-stack/<name>`).
 *
 * @category production-stack
 * @since 0.2.0
 */
export type PsPolicyName = "roundrobin" | "session" | "prefixaware" | "loadaware"

/**
 * Options of {@link makePsPolicy}: `seed` (prefixaware's draw), `sessionKey` (the header
 * carrying `RouteRequest.sessionId`, default `x-session-id`), `qpsWindowSeconds` (the router's
 * request-stats window, default 60 s), `prefixMinMatchLength` (0), `beta` (`loadaware`'s load weight,
 * default 1.0), `blockTokens` (tokens one trace block stands for in `loadaware`'s index, 512 as Mooncake).
 *
 * @category production-stack
 * @since 0.2.0
 */
export interface PsPolicyOptions {
  readonly seed?: number | undefined
  readonly sessionKey?: string | undefined
  readonly qpsWindowSeconds?: number | undefined
  readonly prefixMinMatchLength?: number | undefined
  /** @since 0.9.0 */
  readonly beta?: number | undefined
  /** @since 0.9.0 */
  readonly blockTokens?: number | undefined
}

/**
 * State of a production-stack reducer: engine health, the arrival times the router's request stats
 * hold per engine (`undefined` = the engine never got a request, so it is not in `request_stats`),
 * in-flight charges, the draw seed and the core's state.
 *
 * @category production-stack
 * @since 0.2.0
 */
export interface PsPolicyState {
  readonly healthy: ReadonlyArray<boolean>
  readonly arrivals: ReadonlyArray<ReadonlyArray<number> | undefined>
  readonly inflight: ReadonlyArray<number>
  readonly charges: Charges
  readonly seed: number
  readonly core: unknown
}

const urlOf = (rank: number) => `rank-${rank}`

/** `request_stats[url].qps`: arrivals in `(now - window, now]` / window, for engines in the stats. */
const qpsOf = (s: PsPolicyState, now: number, window: number): Map<string, number> => {
  const m = new Map<string, number>()
  s.arrivals.forEach((a, i) => {
    if (a === undefined) return
    let lo = 0
    let hi = a.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (a[mid]! <= now - window) lo = mid + 1
      else hi = mid
    }
    m.set(urlOf(i), (a.length - lo) / window)
  })
  return m
}

/**
 * Build a production-stack policy as a loadledger `Policy` (registry names `production-stack/<name>`).
 * The endpoints are the healthy ranks (`setStatus`); `observe` is a no-op (these routers read no
 * engine load: their load signal is the router's own request stats). QPS is modelled as upstream's
 * `RequestStatsMonitor`: arrivals the router sent to an engine within the window / window seconds;
 * an engine never sent a request is missing from the stats and wins the QPS scan outright (upstream).
 * `route` records the arrival and charges an in-flight count (released by `finish`; informational).
 *
 * From the trace: `session` reads `sessionId` (as header `sessionKey`; none -> QPS routing);
 * `prefixaware` reads `prefixHashes`, each block one 128-character chunk (its hash, left-padded), so
 * the trie's nodes are the trace's blocks and `match_length` counts 128 per matched block; the draw
 * among candidates comes from the seeded stream. `loadaware` (since 0.9.0) models the LMCache controller
 * with a router-side index: the blocks of every prompt are recorded for the engine it went to (no
 * eviction; an engine's cache is what the router sent it), and an engine's matched tokens are its
 * held leading blocks x `blockTokens`; its load is the router's in-flight count (`route` to `finish`,
 * upstream's `in_prefill_requests + in_decoding_requests`); a prompt no engine holds takes the
 * session / QPS fallback. Limits: LMCache's real answer also reflects eviction, its 256-token chunks
 * and what other routers sent; this index is an upper bound. No healthy engine: `AllRanksUnavailable` (upstream
 * raises `ValueError` / `IndexError`).
 *
 * **When to use**: the registry builds these; call it directly for a session key or window.
 *
 * @example
 * ```ts
 * import { ProductionStack } from "@loadledger/policies"
 * const p = ProductionStack.makePsPolicy("roundrobin")
 * const r = p.route(p.init(3), { requestId: "a", inputLength: 10 }, 0)
 * r._tag === "Routed" && r.rank // => 0
 * ```
 *
 * @category production-stack
 * @since 0.2.0
 */
export const makePsPolicy = (
  name: PsPolicyName,
  options: PsPolicyOptions = {}
): PeerPolicy<PsPolicyState> => {
  const window =
    options.qpsWindowSeconds !== undefined && options.qpsWindowSeconds > 0 ? options.qpsWindowSeconds : 60
  const sessionKey = options.sessionKey ?? "x-session-id"
  const beta = options.beta ?? PS_LOADAWARE_DEFAULT_BETA
  const bt = options.blockTokens
  const blockTokens = bt !== undefined && Number.isSafeInteger(bt) && bt > 0 ? bt : 512
  const init = (dpSize: number): PsPolicyState => {
    const n = ranksOf(dpSize)
    return {
      healthy: new Array<boolean>(n).fill(true),
      arrivals: new Array<undefined>(n).fill(undefined),
      inflight: new Array<number>(n).fill(0),
      charges: noCharges,
      seed: (options.seed ?? 0) >>> 0,
      core:
        name === "prefixaware"
          ? psPrefixAwareInit()
          : name === "loadaware"
            ? { trie: emptyTrie }
            : name === "roundrobin"
              ? { nextIndex: new Map() }
              : undefined
    }
  }
  const commit = (
    s: PsPolicyState,
    url: string | undefined,
    req: RouteRequest,
    now: number,
    core: unknown,
    seed: number,
    details: Readonly<Record<string, unknown>>,
    tieBreak: string
  ): RouteResult<PsPolicyState> => {
    if (url === undefined)
      return policyError(
        "AllRanksUnavailable",
        `${name}: upstream selects no engine (${String(details.error ?? "none")})`,
        "status"
      )
    const rank = Number(url.slice(5))
    const arrivals = s.arrivals.slice()
    const prev = arrivals[rank] ?? []
    let lo = 0
    while (lo < prev.length && prev[lo]! <= now - window) lo++
    arrivals[rank] = [...prev.slice(lo), now]
    const inflight = s.inflight.slice()
    inflight[rank] = inflight[rank]! + 1
    return {
      _tag: "Routed",
      rank,
      state: { ...s, arrivals, inflight, charges: charge(s.charges, req.requestId, rank), core, seed },
      explanation: { tieBreak, details: { ...details, upstream: `vllm-project/production-stack ${name}` } }
    }
  }
  const route = (s: PsPolicyState, req: RouteRequest, now: number): RouteResult<PsPolicyState> => {
    if (s.healthy.length === 0) return policyError("NoRanks", "no ranks", "dpSize")
    const bad = checkInputLength(req.inputLength) ?? checkNow(now) ?? checkRequestFields(req)
    if (bad !== undefined) return bad
    const urls: Array<string> = []
    s.healthy.forEach((h, i) => {
      if (h) urls.push(urlOf(i))
    })
    if (name === "roundrobin") {
      const out = psRoundRobinSelect(s.core as never, urls)
      return commit(
        s,
        out.url,
        req,
        now,
        out.state,
        s.seed,
        { error: out.error },
        "one cursor per sorted endpoint set"
      )
    }
    const qps = qpsOf(s, now, window)
    const headers = req.sessionId === undefined ? undefined : { [sessionKey]: req.sessionId }
    if (name === "loadaware") {
      const step = loadAwareStep(s.core, s.healthy.length, s.inflight, urls, qps, req, headers, {
        beta,
        blockTokens,
        sessionKey
      })
      if (step._tag === "PolicyError") return step
      return commit(s, step.url, req, now, step.core, s.seed, step.details, step.tieBreak)
    }
    if (name === "session") {
      const out = psSessionSelect(urls, qps, headers, undefined, sessionKey)
      return commit(
        s,
        out.url,
        req,
        now,
        s.core,
        s.seed,
        { branch: out.branch, sessionId: out.sessionId, qps: Object.fromEntries(qps) },
        out.branch === "qps"
          ? "first engine missing from the stats, else first minimum QPS"
          : "uhashring MD5 ring"
      )
    }
    const prompt = blocksAsChunks(req.prefixHashes)
    // the match first (to size the draw), then the core with that match: one lookup, one draw
    const m = longestPrefixMatch(
      (s.core as PsPrefixAwareState).trie as TrieNode,
      chunkHashes(prompt),
      new Set(urls)
    )
    const [draw, next] = drawBelow(s.seed, Math.max(1, m.endpoints.size))
    const out = psPrefixAwareSelect(
      s.core as never,
      urls,
      qps,
      prompt,
      [draw],
      { prefixMinMatchLength: options.prefixMinMatchLength },
      { matchLength: m.matchLength, endpoints: [...m.endpoints] }
    )
    if (out._tag === "PolicyError") return out
    return commit(
      s,
      out.url,
      req,
      now,
      out.state,
      next,
      { branch: out.branch, matchLength: out.matchLength, candidates: out.candidates, error: out.error },
      out.branch === "qps_fallback" ? "QPS scan" : "seeded draw among the longest-match endpoints"
    )
  }
  return {
    name: `production-stack/${name}`,
    init,
    observe: (s) => s,
    route,
    finish: (s, ids) => {
      const [charges, ranks] = release(s.charges, ids)
      if (ranks.length === 0) return s
      const inflight = s.inflight.slice()
      for (const r of ranks) inflight[r] = Math.max(0, inflight[r]! - 1)
      return { ...s, inflight, charges }
    },
    setStatus: (s, status) =>
      checkStatus(status, s.healthy.length) === undefined ? { ...s, healthy: status.slice() } : s
  }
}
