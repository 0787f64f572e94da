/**
 * The named cost terms of the scorer (the `Scorers` namespace), each over the one load view, and
 * `ledgerTerms`, the names a configuration gives them (a new term: a `Scorer` here, a line there).
 *
 * @since 0.4.0
 */
import type { Scorer, ScoreView } from "./ScoreView.js"

/**
 * A term from a per-rank cost function (lower wins; `+Infinity` excludes, `NaN` never attracts).
 *
 * **When to use**: to add a criterion of your own to `makeScored` / `makePowerOfChoices`.
 *
 * @example
 * ```ts
 * import { makeScored, Scorers } from "@loadledger/policies"
 * const odd = Scorers.perRank("odd", (_view, r) => (r % 2 === 1 ? 0 : 1))
 * const p = makeScored({ scorers: [{ scorer: odd, weight: 1 }] })
 * const r = p.route(p.init(4), { requestId: "a", inputLength: 1 }, 0)
 * r._tag === "Routed" && r.rank // => 1
 * ```
 *
 * @category own policies
 * @since 0.4.0
 */
export const perRank = (
  name: string,
  cost: (view: ScoreView, rank: number) => number,
  uses?: Scorer["uses"]
): Scorer => ({
  name,
  uses,
  costs: (view, ranks, out) => {
    for (let i = 0; i < ranks.length; i++) out[i] = cost(view, ranks[i]!)
  }
})

/**
 * Token load, in tokens: `numTotalTokens` plus the prompt tokens charged since the snapshot (what
 * SGLang's TOTAL_TOKENS balances).
 *
 * @example
 * ```ts
 * import { makeScored, Scorers } from "@loadledger/policies"
 * const p = makeScored({ scorers: [{ scorer: Scorers.tokens, weight: 1 }] })
 * const rows = [900, 100].map((numTotalTokens, dpRank) => ({ dpRank, timestamp: 1, numRunningReqs: 0, numWaitingReqs: 0, numTotalTokens }))
 * const r = p.route(p.observe(p.init(2), rows, 1), { requestId: "a", inputLength: 5 }, 1)
 * r._tag === "Routed" && r.rank // => 1
 * ```
 *
 * @category own policies
 * @since 0.4.0
 */
export const tokens: Scorer = perRank("tokens", (view, r) => view.tokens(r))

/**
 * Request load, in requests: running + waiting plus those charged since the snapshot (SGLang's
 * TOTAL_REQUESTS, vLLM's `waiting + running`).
 *
 * @example
 * ```ts
 * import { Scorers } from "@loadledger/policies"
 * Scorers.requests.name // => "requests"
 * ```
 *
 * @category own policies
 * @since 0.4.0
 */
export const requests: Scorer = perRank("requests", (view, r) => view.requests(r))

/**
 * Decode load, in requests: `numRunningReqs`.
 *
 * @example
 * ```ts
 * import { Scorers } from "@loadledger/policies"
 * Scorers.running.name // => "numRunningReqs"
 * ```
 *
 * @category own policies
 * @since 0.4.0
 */
export const running: Scorer = perRank("numRunningReqs", (view, r) => view.running(r))

/**
 * Queued requests: `numWaitingReqs` plus those charged since the snapshot.
 *
 * @example
 * ```ts
 * import { Scorers } from "@loadledger/policies"
 * Scorers.waiting.name // => "numWaitingReqs"
 * ```
 *
 * @category own policies
 * @since 0.4.0
 */
export const waiting: Scorer = perRank("numWaitingReqs", (view, r) => view.waiting(r))

/**
 * KV headroom, as `kvCacheUsage` (0..1); unreported counts as the highest reported.
 *
 * @example
 * ```ts
 * import { makeScored, Scorers } from "@loadledger/policies"
 * const p = makeScored({ scorers: [{ scorer: Scorers.kvCacheUsage, weight: 1 }] })
 * const rows = [0.2, undefined, 0.5].map((kvCacheUsage, dpRank) => ({ dpRank, timestamp: 1, numRunningReqs: 0, numWaitingReqs: 0, numTotalTokens: 0, kvCacheUsage }))
 * const r = p.route(p.observe(p.init(3), rows, 1), { requestId: "a", inputLength: 5 }, 1)
 * r._tag === "Routed" && r.explanation.details?.["costs"]
 * // => { kvCacheUsage: [0.2, 0.5, 0.5] }
 * ```
 *
 * @category own policies
 * @since 0.4.0
 */
export const kvCacheUsage: Scorer = {
  name: "kvCacheUsage",
  costs: (view, ranks, out) => {
    const unknownAs = view.maxKvCacheUsage() ?? 0
    for (let i = 0; i < ranks.length; i++) out[i] = view.kvCacheUsage(ranks[i]!) ?? unknownAs
  }
}

/**
 * Queued prefill, in tokens: `numWaitingUncachedTokens` (SGLang); unreported, the highest reported
 * or the waiting requests x this prompt's tokens, whichever is more.
 *
 * @example
 * ```ts
 * import { Scorers } from "@loadledger/policies"
 * Scorers.waitingUncachedTokens.name // => "numWaitingUncachedTokens"
 * ```
 *
 * @category own policies
 * @since 0.4.0
 */
export const waitingUncachedTokens: Scorer = perRank("numWaitingUncachedTokens", (view, r) =>
  view.waitingUncachedTokens(r)
)

/**
 * Cached prefix, as the prompt tokens a rank would still prefill: the prompt minus the leading
 * `prefixHashes` blocks the router already sent it (router-side index, at most 31 ranks).
 *
 * @example
 * ```ts
 * import { makeScored, Scorers } from "@loadledger/policies"
 * const p = makeScored({ scorers: [{ scorer: Scorers.uncachedPromptTokens, weight: 1 }] })
 * const a = p.route(p.init(2), { requestId: "a", inputLength: 100, prefixHashes: ["sys", "a"], routedDpRank: 1 }, 0)
 * const b = a._tag === "Routed" ? p.route(a.state, { requestId: "b", inputLength: 100, prefixHashes: ["sys", "b"] }, 0) : a
 * b._tag === "Routed" && b.rank // => 1
 * b._tag === "Routed" && b.explanation.details?.["costs"] // => { uncachedPromptTokens: [100, 50] }
 * ```
 *
 * @category own policies
 * @since 0.4.0
 */
export const uncachedPromptTokens: Scorer = perRank(
  "uncachedPromptTokens",
  (view, r) => view.uncachedPromptTokens(r),
  ["prefixIndex"]
)

/**
 * Pending charges as a floor, in tokens: `tokens` + `waitingUncachedTokens`, never below the prompt
 * tokens in flight there (x `clientCount`). With `uncachedPromptTokens` (raw, weight 1): `uncached-tokens`.
 *
 * @example
 * ```ts
 * import { makeScored, Scorers } from "@loadledger/policies"
 * const p = makeScored({ scorers: [{ scorer: Scorers.loadTokens, weight: 1, normalise: "none" }] })
 * const a = p.route(p.init(2), { requestId: "a", inputLength: 300, routedDpRank: 0 }, 0)
 * const rows = [0, 1].map((dpRank) => ({ dpRank, timestamp: 1, numRunningReqs: 0, numWaitingReqs: 0, numTotalTokens: 0 }))
 * const s = a._tag === "Routed" ? p.observe(a.state, rows, 1) : p.init(2)
 * const b = p.route(s, { requestId: "b", inputLength: 10 }, 1)
 * b._tag === "Routed" && b.explanation.details?.["costs"] // => { loadTokens: [300, 0] }
 * ```
 *
 * @category own policies
 * @since 0.4.0
 */
export const loadTokens: Scorer = {
  name: "loadTokens",
  uses: ["inflight"],
  costs: (view, ranks, out) => {
    for (let i = 0; i < ranks.length; i++) {
      const r = ranks[i]!
      const load = view.tokens(r) + view.waitingUncachedTokens(r)
      const floor = view.inflightTokens(r)
      out[i] = floor === undefined ? load : Math.max(load, floor)
    }
  }
}

/**
 * KV pressure gate (0 or `+Infinity`; give it weight 0): while a candidate has `kvCacheUsage <
 * kvRoom` (0.9), exclude those at `>= kvFull` (0.99) with waiting work (vLLM #36748, fault S07).
 *
 * @example
 * ```ts
 * import { makeScored, Scorers } from "@loadledger/policies"
 * const p = makeScored({
 *   scorers: [{ scorer: Scorers.requests, weight: 1 }, { scorer: Scorers.kvPressureGate(), weight: 0 }]
 * })
 * const rows = [
 *   { dpRank: 0, timestamp: 1, numRunningReqs: 1, numWaitingReqs: 1, numTotalTokens: 0, kvCacheUsage: 1 },
 *   { dpRank: 1, timestamp: 1, numRunningReqs: 9, numWaitingReqs: 0, numTotalTokens: 0, kvCacheUsage: 0.5 }
 * ]
 * const r = p.route(p.observe(p.init(2), rows, 1), { requestId: "a", inputLength: 5 }, 1)
 * r._tag === "Routed" && r.rank // => 1
 * ```
 *
 * @category own policies
 * @since 0.4.0
 */
export const kvPressureGate = (
  options: { readonly kvFull?: number | undefined; readonly kvRoom?: number | undefined } = {}
): Scorer => {
  const kvFull = options.kvFull ?? 0.99
  const kvRoom = options.kvRoom ?? 0.9
  return {
    name: "kvPressureGate",
    costs: (view, ranks, out) => {
      let room = false
      for (let i = 0; i < ranks.length && !room; i++) {
        const kv = view.kvCacheUsage(ranks[i]!)
        room = view.healthy(ranks[i]!) && kv !== undefined && kv < kvRoom
      }
      const unknownAs = room ? view.maxKvCacheUsage() : undefined
      for (let i = 0; i < ranks.length; i++) {
        const r = ranks[i]!
        const kv = view.kvCacheUsage(r) ?? unknownAs
        out[i] =
          room && kv !== undefined && kv >= kvFull && view.waiting(r) > 0 ? Number.POSITIVE_INFINITY : 0
      }
    }
  }
}

/** The fields of a configured term a term's builder reads. */
interface TermFields {
  readonly kvFull?: number | undefined
  readonly kvRoom?: number | undefined
}

/**
 * The terms a `"scored"` or `"power-of-choices"` configuration may name, each a `Scorer` over the
 * in-flight ledger's `ScoreView` (units in each one's docstring in `Scorers`): `tokens` (tokens),
 * `requests`, `running`, `waiting` (requests), `kvCacheUsage` (0..1), `waitingUncachedTokens`,
 * `uncachedPromptTokens` (cached prefix: prompt tokens still to prefill), `loadTokens` (tokens with
 * the pending in-flight floor), `kvPressureGate` (a gate: 0 or `+Infinity`).
 *
 * @example
 * ```ts
 * import { ledgerTerms } from "@loadledger/policies"
 * Object.keys(ledgerTerms).length // => 9
 * ledgerTerms.tokens!({}).name // => "tokens"
 * ```
 *
 * @category own policies
 * @since 0.6.0
 */
export const ledgerTerms: Readonly<Record<string, (t: TermFields) => Scorer>> = {
  tokens: () => tokens,
  requests: () => requests,
  running: () => running,
  waiting: () => waiting,
  kvCacheUsage: () => kvCacheUsage,
  waitingUncachedTokens: () => waitingUncachedTokens,
  uncachedPromptTokens: () => uncachedPromptTokens,
  loadTokens: () => loadTokens,
  kvPressureGate: (t) => kvPressureGate({ kvFull: t.kvFull, kvRoom: t.kvRoom })
}
