/**
 * Ready-made scorers over the load ledger's fields, for `makeScored` and `makePowerOfChoices`
 * (imported as the `Scorers` namespace): `tokens`, `requests`, `running`, `waiting`,
 * `kvCacheUsage`, `waitingUncachedTokens`, `uncachedPromptTokens`, `loadTokens`, the
 * `kvPressureGate` and `perRank` to write your own.
 *
 * @since 0.4.0
 */
import type { Scorer, ScoreView } from "./ScoreView.js"

/**
 * A scorer from a per-rank cost function (lower is preferred; `+Infinity` excludes the rank, `NaN`
 * is never attractive). `uses` as in {@link Scorer}.
 *
 * **When to use**: to add a criterion of your own to `makeScored` / `makePowerOfChoices`.
 *
 * @example
 * ```ts
 * import { makeScored, Scorers } from "@loadledger/policies"
 * // prefer odd ranks (a stand-in for any per-rank criterion)
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
 * `numTotalTokens` plus the prompt tokens charged since the snapshot (`ScoreView.tokens`): the
 * token load SGLang's TOTAL_TOKENS and `ledger-balanced` balance.
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
export const tokens: Scorer = {
  name: "tokens",
  costs: (view, ranks, out) => {
    for (let i = 0; i < ranks.length; i++) out[i] = view.tokens(ranks[i]!)
  }
}

/**
 * Running + waiting requests plus the requests charged since the snapshot (`ScoreView.requests`):
 * SGLang's TOTAL_REQUESTS count, vLLM's `waiting + running`.
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
export const requests: Scorer = {
  name: "requests",
  costs: (view, ranks, out) => {
    for (let i = 0; i < ranks.length; i++) out[i] = view.requests(ranks[i]!)
  }
}

/**
 * `numRunningReqs` (`ScoreView.running`): the decode batch a rank carries.
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
export const running: Scorer = {
  name: "numRunningReqs",
  costs: (view, ranks, out) => {
    for (let i = 0; i < ranks.length; i++) out[i] = view.running(ranks[i]!)
  }
}

/**
 * `numWaitingReqs` plus the requests charged since the snapshot (`ScoreView.waiting`): the queue a
 * new request joins.
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
export const waiting: Scorer = {
  name: "numWaitingReqs",
  costs: (view, ranks, out) => {
    for (let i = 0; i < ranks.length; i++) out[i] = view.waiting(ranks[i]!)
  }
}

/**
 * `kvCacheUsage` (0..1); a rank that did not report it counts as the highest reported usage
 * (never attractive), and when no rank reports it every rank costs the same.
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
 * `numWaitingUncachedTokens`: prompt tokens queued and not in the rank's cache (SGLang reports it);
 * a rank that did not report it takes the highest reported or its waiting requests x the request's
 * prompt tokens, whichever is more (see `ScoreView`).
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
export const waitingUncachedTokens: Scorer = {
  name: "numWaitingUncachedTokens",
  costs: (view, ranks, out) => {
    for (let i = 0; i < ranks.length; i++) out[i] = view.waitingUncachedTokens(ranks[i]!)
  }
}

/**
 * The request's prompt tokens each rank would have to prefill: the prompt minus the leading
 * `prefixHashes` blocks the router already sent that rank (router-side prefix index, bounded; 31
 * ranks at most, above that the whole prompt for every rank). The policy keeps the index because
 * this scorer `uses` it.
 *
 * @example
 * ```ts
 * import { makeScored, Scorers } from "@loadledger/policies"
 * const p = makeScored({ scorers: [{ scorer: Scorers.uncachedPromptTokens, weight: 1 }] })
 * const a = p.route(p.init(2), { requestId: "a", inputLength: 100, prefixHashes: ["sys", "a"], routedDpRank: 1 }, 0)
 * // rank 1 holds block "sys": 50 of b's 100 tokens are cached there
 * const b = a._tag === "Routed" ? p.route(a.state, { requestId: "b", inputLength: 100, prefixHashes: ["sys", "b"] }, 0) : a
 * b._tag === "Routed" && b.rank // => 1
 * b._tag === "Routed" && b.explanation.details?.["costs"] // => { uncachedPromptTokens: [100, 50] }
 * ```
 *
 * @category own policies
 * @since 0.4.0
 */
export const uncachedPromptTokens: Scorer = {
  name: "uncachedPromptTokens",
  uses: ["prefixIndex"],
  costs: (view, ranks, out) => {
    for (let i = 0; i < ranks.length; i++) out[i] = view.uncachedPromptTokens(ranks[i]!)
  }
}

/**
 * The token load `uncached-tokens` compares: `tokens` plus `waitingUncachedTokens`, never less
 * than the prompt tokens this front end has in flight there (times `clientCount`). With
 * `uncachedPromptTokens`, both unnormalised and weight 1, it is `uncached-tokens` exactly.
 *
 * @example
 * ```ts
 * import { makeScored, Scorers } from "@loadledger/policies"
 * const p = makeScored({ scorers: [{ scorer: Scorers.loadTokens, weight: 1, normalise: "none" }] })
 * const a = p.route(p.init(2), { requestId: "a", inputLength: 300, routedDpRank: 0 }, 0)
 * // a snapshot that does not show a yet: its 300 tokens stay as the in-flight floor of rank 0
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
 * A gate (costs 0 or `+Infinity`): while some candidate has `kvCacheUsage < kvRoom` (0.9), exclude
 * every candidate with `kvCacheUsage >= kvFull` (0.99) and waiting work (a rank that did not report
 * its usage counts as the highest reported). The KV-pressure guard of `ledger-balanced` (vLLM #36748,
 * fault case S07). Give it weight 0.
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
