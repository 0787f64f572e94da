/**
 * production-stack `LoadAwareRouter` (`--routing-logic loadaware`, PR vllm-project/production-stack#1035,
 * merged 2026-08): every endpoint scored `min(matched, prompt) / max(prompt, 1) - beta * relative_load`,
 * argmax over the endpoints in code-point url order (strict `>`, so the smallest url wins a tie).
 * Upstream: vllm-project/production-stack `src/vllm_router/routers/routing_logic.py` (`LoadAwareRouter`,
 * `DEFAULT_LOADAWARE_BETA`, `_loadaware_beta`) and `src/tests/test_loadaware_router.py` (commit
 * 0aed3a001af099f2c3919d00ad57b390a928fa45). The matched token counts are the LMCache controller's
 * `lookup` answer (`layout_info`: instance id -> (location, matched_prefix_length)), an explicit input here.
 *
 * @since 0.9.0
 */
import { type PolicyError, policyError } from "../../Policy.js"
import { byCodePoint } from "../internal/codePointOrder.js"
import { psSessionSelect } from "./Session.js"

/**
 * upstream `LoadAwareRouter.relative_loads`: per url, `(load - mean) / max(1, mean)` with `mean` the
 * mean load over `urls`; a url missing from `loads` has load 0 (upstream: not in `request_stats`).
 * `loads` are the router's in-flight counts (`in_prefill_requests + in_decoding_requests`).
 *
 * **When to use**: to see the load term of the score.
 *
 * @example
 * ```ts
 * import { ProductionStack } from "@loadledger/policies"
 * // four engines, loads 12/0/0/0: mean 3, so +3 and -1 (upstream test)
 * const r = ProductionStack.psLoadAwareRelativeLoads(["a", "b", "c", "d"], new Map([["a", 12]]))
 * const pair = [r.get("a"), r.get("b")]
 * pair // => [3, -1]
 * // mean 0.5 is clamped to 1: +0.5 / -0.5, not +1 / -1
 * ProductionStack.psLoadAwareRelativeLoads(["a", "b"], new Map([["a", 1]])).get("a") // => 0.5
 * ```
 *
 * @category production-stack
 * @since 0.9.0
 */
export const psLoadAwareRelativeLoads = (
  urls: ReadonlyArray<string>,
  loads: ReadonlyMap<string, number>
): Map<string, number> => {
  const load = new Map<string, number>()
  for (const u of urls) load.set(u, loads.get(u) ?? 0)
  const out = new Map<string, number>()
  if (load.size === 0) return out
  let sum = 0
  for (const v of load.values()) sum += v
  const mean = sum / load.size
  for (const [u, v] of load) out.set(u, (v - mean) / Math.max(1, mean))
  return out
}

/**
 * upstream `LoadAwareRouter.score_endpoint`: `min(matched, prompt) / max(prompt, 1) - beta * relativeLoad`
 * (the cap keeps a match rounded up to LMCache's chunk boundary from outranking a full hit).
 *
 * @example
 * ```ts
 * import { ProductionStack } from "@loadledger/policies"
 * ProductionStack.psLoadAwareScore(2304, 2048, 0, 1) // => 1
 * ProductionStack.psLoadAwareScore(2048, 2048, 1, 1) // => 0
 * ```
 *
 * @category production-stack
 * @since 0.9.0
 */
export const psLoadAwareScore = (
  matched: number,
  prompt: number,
  relativeLoad: number,
  beta: number
): number => Math.min(matched, prompt) / Math.max(prompt, 1) - beta * relativeLoad

/**
 * upstream `LoadAwareRouter.matched_tokens_by_url`: re-key the controller's `layout` (instance id ->
 * matched prefix tokens) by url through the bridge `instanceToUrl` (instance id -> url, in insertion
 * order). When two ids share a url, only the last one written is credited (a restarted engine's live
 * id; the dead id's match is phantom), and a holder the bridge does not name earns nothing.
 *
 * @example
 * ```ts
 * import { ProductionStack } from "@loadledger/policies"
 * const bridge: Array<[string, string]> = [["a", "urlA"], ["b", "urlB"], ["a2", "urlA"]]
 * const live = ProductionStack.psLoadAwareMatchedByUrl(bridge, new Map([["a2", 512]]))
 * live.get("urlA") // => 512
 * live.size // => 1
 * ProductionStack.psLoadAwareMatchedByUrl(bridge, new Map([["a", 2048]])).size // => 0
 * ```
 *
 * @category production-stack
 * @since 0.9.0
 */
export const psLoadAwareMatchedByUrl = (
  instanceToUrl: ReadonlyArray<readonly [string, string]>,
  layout: ReadonlyMap<string, number>
): Map<string, number> => {
  // a dict (like a Map) keeps each id once, at its first position with its last value; inverting it
  // keeps, per url, the last id in that order
  const bridge = new Map<string, string>()
  for (const [id, url] of instanceToUrl) bridge.set(id, url)
  const live = new Map<string, string>()
  for (const [id, url] of bridge) live.set(url, id)
  const out = new Map<string, number>()
  for (const [url, id] of live) {
    const m = layout.get(id)
    if (m !== undefined) out.set(url, m)
  }
  return out
}

/**
 * upstream `LoadAwareRouter.select_url` (pure; no fallback): every endpoint of `urls`, in code-point
 * url order, scores {@link psLoadAwareScore} with `matched.get(url) ?? 0` and its
 * {@link psLoadAwareRelativeLoads} term; the first strictly greater score wins (so the smallest url
 * wins a tie); `url` is `undefined` when no score beats -inf (no endpoints, or every score NaN).
 * Inputs are not checked here ({@link psLoadAwareSelect} checks them).
 *
 * @example
 * ```ts
 * import { ProductionStack } from "@loadledger/policies"
 * // no cache anywhere: pure load penalty (upstream test, beta 0.1)
 * ProductionStack.psLoadAwareSelectUrl(["a", "b"], new Map([["a", 4], ["b", 1]]), new Map(), 2048, 0.1).url // => "b"
 * // equal scores: the smaller url, whatever the list order
 * ProductionStack.psLoadAwareSelectUrl(["b", "a"], new Map(), new Map([["a", 1024], ["b", 1024]]), 2048, 1).url // => "a"
 * ```
 *
 * @category production-stack
 * @since 0.9.0
 */
export const psLoadAwareSelectUrl = (
  urls: ReadonlyArray<string>,
  loads: ReadonlyMap<string, number>,
  matched: ReadonlyMap<string, number>,
  promptTokens: number,
  beta: number
): {
  readonly url: string | undefined
  readonly scores: ReadonlyMap<string, number>
  readonly relativeLoads: ReadonlyMap<string, number>
} => {
  const relativeLoads = psLoadAwareRelativeLoads(urls, loads)
  const scores = new Map<string, number>()
  let url: string | undefined
  let bestScore = Number.NEGATIVE_INFINITY
  for (const u of [...urls].sort(byCodePoint)) {
    const s = psLoadAwareScore(matched.get(u) ?? 0, promptTokens, relativeLoads.get(u) ?? 0, beta)
    scores.set(u, s)
    if (s > bestScore) {
      bestScore = s
      url = u
    }
  }
  return { url, scores, relativeLoads }
}

/**
 * What {@link psLoadAwareSelect} decided: `url` (`undefined` when no score beats -inf: no endpoints,
 * or every score NaN), `branch` (`loadaware`, or the fallback's `hash_ring` / `qps` when the lookup
 * named no holder), `scores` and `relativeLoads` per url (empty on a fallback), `sessionId` on `hash_ring`.
 *
 * @category production-stack
 * @since 0.9.0
 */
export interface PsLoadAwareSelected {
  readonly _tag: "PsLoadAwareSelected"
  readonly url: string | undefined
  readonly branch: "loadaware" | "hash_ring" | "qps"
  readonly scores: ReadonlyMap<string, number>
  readonly relativeLoads: ReadonlyMap<string, number>
  readonly sessionId?: string | undefined
}

/**
 * The inputs of {@link psLoadAwareSelect}: the endpoints `urls`; `loads` (url -> in-flight count,
 * absent = 0); `qps` (url -> `request_stats[url].qps`, absent = not in the stats; the fallback's);
 * `layout` (the controller's `layout_info`: instance id -> matched prefix tokens) and `instanceToUrl`
 * (the router's bridge, assumed refreshed: upstream queries the controller for every endpoint first);
 * `promptTokens` (`len(token_ids)`); `beta`; the session `headers` / `body` / `sessionKey` the fallback reads.
 *
 * @category production-stack
 * @since 0.9.0
 */
export interface PsLoadAwareInput {
  readonly urls: ReadonlyArray<string>
  readonly loads: ReadonlyMap<string, number>
  readonly qps: ReadonlyMap<string, number>
  readonly layout: ReadonlyMap<string, number>
  readonly instanceToUrl: ReadonlyArray<readonly [string, string]>
  readonly promptTokens: number
  readonly beta: number
  readonly headers?: Readonly<Record<string, string>> | undefined
  readonly body?: Readonly<Record<string, unknown>> | undefined
  readonly sessionKey?: string | undefined
}

const count = (x: number) => Number.isSafeInteger(x) && x >= 0

/**
 * `LoadAwareRouter.route_request` after tokenizing and the controller lookup: no endpoints is
 * upstream's HTTP 503 (here a `PolicyError` `AllRanksUnavailable` naming `urls`); an empty `layout`
 * takes the `kvaware` fallback (session header / body on the uhashring ring, else lowest QPS:
 * {@link psSessionSelect}); otherwise {@link psLoadAwareSelectUrl} with the
 * {@link psLoadAwareMatchedByUrl} credits. `kv_aware_threshold` is
 * not applied (upstream forwards it unused). Bad input: a `PolicyError` `InvalidInput` naming the
 * field (`beta` not finite; `promptTokens`, a load or a matched count not an integer >= 0).
 *
 * **When to use**: replaying production-stack's load-aware routing with the controller's answer in
 * hand; `production-stack/loadaware` wraps it with a router-side index in place of the controller.
 *
 * @example
 * ```ts
 * import { ProductionStack } from "@loadledger/policies"
 * // warm but loaded (12 in flight) loses to cold but idle at beta 1 (upstream test)
 * const out = ProductionStack.psLoadAwareSelect({
 *   urls: ["http://10.0.0.1:8000", "http://10.0.0.2:8000"],
 *   loads: new Map([["http://10.0.0.1:8000", 12]]),
 *   qps: new Map(),
 *   layout: new Map([["instance-a", 2048]]),
 *   instanceToUrl: [["instance-a", "http://10.0.0.1:8000"], ["instance-b", "http://10.0.0.2:8000"]],
 *   promptTokens: 2048,
 *   beta: 1
 * })
 * out._tag === "PsLoadAwareSelected" && out.url // => "http://10.0.0.2:8000"
 * out._tag === "PsLoadAwareSelected" && [...out.scores.values()] // => [0, 1]
 * ```
 *
 * @category production-stack
 * @since 0.9.0
 */
export const psLoadAwareSelect = (input: PsLoadAwareInput): PsLoadAwareSelected | PolicyError => {
  const { urls, loads, layout, promptTokens, beta } = input
  if (!Number.isFinite(beta)) return policyError("InvalidInput", "beta must be a finite number", "beta")
  if (!count(promptTokens))
    return policyError("InvalidInput", "promptTokens must be an integer >= 0", "promptTokens")
  for (const [u, v] of loads)
    if (!count(v)) return policyError("InvalidInput", `load of ${u} must be an integer >= 0`, "loads")
  for (const [i, v] of layout)
    if (!count(v))
      return policyError("InvalidInput", `matched tokens of ${i} must be an integer >= 0`, "layout")
  if (urls.length === 0)
    return policyError("AllRanksUnavailable", "no backend endpoints available (HTTP 503)", "urls")
  const empty = new Map<string, number>()
  if (layout.size === 0) {
    const fb = psSessionSelect(urls, input.qps, input.headers, input.body, input.sessionKey ?? "x-session-id")
    return { _tag: "PsLoadAwareSelected", ...fb, scores: empty, relativeLoads: empty }
  }
  return {
    _tag: "PsLoadAwareSelected",
    ...psLoadAwareSelectUrl(
      urls,
      loads,
      psLoadAwareMatchedByUrl(input.instanceToUrl, layout),
      promptTokens,
      beta
    ),
    branch: "loadaware"
  }
}
