/**
 * vllm-project/router's key-based policies as loadledger `Policy` reducers (ranks = workers by
 * index): `consistent_hash` (a ring of 160 virtual nodes per worker url) and `rendezvous_hash`
 * (highest `fbi_hash` of key and url). Upstream: vllm-project/router `src/policies/consistent_hash.rs`
 * (commit `080589a0b729acb003907a0bdd53809b229dc805`), `src/policies/rendezvous_hash.rs` (commit
 * `292889ebe341b5520624bc1db09b2e39fdabd98a`), `src/policies/hash_key.rs` (commit
 * `335c57e2ee621d7984ed645c9d23e871cd34331a`).
 *
 * @since 0.7.0
 */
import type { RankLoad } from "@loadledger/schema"
import { ranksOf } from "../../internal/ranksOf.js"
import { policyError, type RouteRequest, type RouteResult } from "../../Policy.js"
import { checkStatus } from "../../RankStatus.js"
import { checkInputLength, checkNow, checkRequestFields } from "../../RequestChecks.js"
import { type Charges, charge, noCharges, release } from "../internal/charges.js"
import type { PeerPolicy } from "../PeerPolicy.js"
import { fbiHash } from "./FbiHash.js"
import { vllmRouterHashKey } from "./HashKey.js"
import { dpInfo, type HashRing, ringOf, ringWorker } from "./internal/ring.js"

/**
 * The vllm-project/router policies the registry offers (`vllm-router/<name>`).
 *
 * @category vllm-router
 * @since 0.7.0
 */
export type VllmRouterPolicyName = "consistent-hash" | "rendezvous-hash"

/**
 * Options of {@link makeVllmRouterPolicy}: the workers' urls (`workerUrls`, default `rank-<i>`;
 * both policies hash them, so the urls decide the placement) and the ring's `virtualNodes`
 * (upstream `VIRTUAL_NODES_PER_WORKER`, 160).
 *
 * @category vllm-router
 * @since 0.7.0
 */
export interface VllmRouterPolicyOptions {
  readonly workerUrls?: ReadonlyArray<string> | undefined
  readonly virtualNodes?: number | undefined
}

/**
 * State of a vllm-router policy: the worker urls and health, the ring (`consistent-hash`; built
 * once per url list, as upstream rebuilds it only when the list changes) and which rank each
 * request in flight was routed to.
 *
 * @category vllm-router
 * @since 0.7.0
 */
export interface VllmRouterPolicyState {
  readonly urls: ReadonlyArray<string>
  readonly healthy: ReadonlyArray<boolean>
  readonly ring: HashRing | undefined
  readonly charges: Charges
}

/**
 * The headers and body a trace request stands for: `sessionId` is the `x-session-id` header;
 * without one, the request id is the `x-request-id` header (upstream would hash the body, which a
 * trace does not carry; both give one key per request).
 */
const headersOf = (req: RouteRequest): Record<string, string> =>
  req.sessionId !== undefined && req.sessionId !== ""
    ? { "x-session-id": req.sessionId }
    : { "x-request-id": req.requestId }

/**
 * Build a vllm-project/router policy (registry names `vllm-router/<name>`).
 *
 * - `consistent-hash`: `fbiHash("<url>:<i>")` for `i < virtualNodes` per worker, over every worker
 *   healthy or not (a later point with the same hash overwrites an earlier one, as upstream's
 *   `BTreeMap::insert`); the key's `fbiHash` takes the first point at or above it, wrapping to the
 *   smallest. The worker found is taken if healthy, else the first healthy worker.
 * - `rendezvous-hash`: each healthy worker scores `fbiHash("<key>:<url>")`; the highest wins, and
 *   of equal scores the last in worker order (Rust `Iterator::max_by_key`).
 *
 * The key is {@link vllmRouterHashKey} of the request's headers: `sessionId` as `x-session-id`,
 * else the request id as `x-request-id` (a trace has no body). A url `host@rank` is matched
 * exactly, others by the part before `@` (upstream `extract_dp_info`; `rank-<i>` has none).
 * `routedDpRank` (loadledger's; upstream has no target-worker header) is honoured when healthy,
 * refused (`InvalidRoutedRank`) otherwise. No healthy worker: `AllRanksUnavailable` (upstream
 * `None`). Loads are not read (`observe` returns the state as it is); `route` records the request
 * in flight and `finish` releases it.
 *
 * **When to use**: the registry builds these; call it directly to hash the real worker urls.
 *
 * @example
 * ```ts
 * import { VllmRouter } from "@loadledger/policies"
 * const urls = ["http://worker1:8000", "http://worker2:8000", "http://worker3:8000"]
 * const p = VllmRouter.makeVllmRouterPolicy("rendezvous-hash", { workerUrls: urls })
 * const r = p.route(p.init(3), { requestId: "a", inputLength: 8, sessionId: "test-session-123" }, 0)
 * r._tag === "Routed" && r.rank // => 1
 * ```
 *
 * @category vllm-router
 * @since 0.7.0
 */
export const makeVllmRouterPolicy = (
  name: VllmRouterPolicyName,
  options: VllmRouterPolicyOptions = {}
): PeerPolicy<VllmRouterPolicyState> => {
  const vnodes =
    options.virtualNodes !== undefined &&
    Number.isSafeInteger(options.virtualNodes) &&
    options.virtualNodes >= 0
      ? options.virtualNodes
      : 160
  const init = (dpSize: number): VllmRouterPolicyState => {
    const n = ranksOf(dpSize)
    const urls = Array.from({ length: n }, (_, i) => options.workerUrls?.[i] ?? `rank-${i}`)
    return {
      urls,
      healthy: urls.map(() => true),
      ring: name === "consistent-hash" ? ringOf(urls, vnodes) : undefined,
      charges: noCharges
    }
  }
  const pick = (s: VllmRouterPolicyState, h: ReadonlyArray<number>, key: string): number => {
    if (s.ring !== undefined) {
      const target = ringWorker(s.ring, fbiHash(key))
      if (target === undefined) return h[0]!
      const url = s.urls[target]!
      const [base, dpRank] = dpInfo(url)
      const idx = dpRank !== undefined ? s.urls.indexOf(url) : s.urls.findIndex((u) => dpInfo(u)[0] === base)
      return idx >= 0 && s.healthy[idx] === true ? idx : h[0]!
    }
    let best = h[0]!
    let bestScore = -1n
    for (const i of h) {
      const score = fbiHash(`${key}:${s.urls[i]!}`)
      if (score >= bestScore) {
        best = i
        bestScore = score
      }
    }
    return best
  }
  const route = (
    s: VllmRouterPolicyState,
    req: RouteRequest,
    now: number
  ): RouteResult<VllmRouterPolicyState> => {
    if (s.urls.length === 0) return policyError("NoRanks", "no ranks", "dpSize")
    const bad = checkInputLength(req.inputLength) ?? checkNow(now) ?? checkRequestFields(req)
    if (bad !== undefined) return bad
    const at = (rank: number, details: Record<string, unknown>): RouteResult<VllmRouterPolicyState> => ({
      _tag: "Routed",
      rank,
      state: { ...s, charges: charge(s.charges, req.requestId, rank) },
      explanation: {
        tieBreak: tieBreakOf[name],
        details: { ...details, upstream: `vllm-project/router ${name}` }
      }
    })
    if (req.routedDpRank !== undefined) {
      const r = req.routedDpRank
      if (!Number.isInteger(r) || r < 0 || r >= s.urls.length || s.healthy[r] !== true)
        return policyError(
          "InvalidRoutedRank",
          `${name}: routedDpRank ${r} is not a healthy rank`,
          "routedDpRank"
        )
      return at(r, { pinned: r })
    }
    const h: Array<number> = []
    for (let i = 0; i < s.healthy.length; i++) if (s.healthy[i] === true) h.push(i)
    if (h.length === 0) return policyError("AllRanksUnavailable", `${name}: no healthy worker`, "status")
    const key = vllmRouterHashKey(headersOf(req), undefined)
    return at(pick(s, h, key), { key })
  }
  return {
    name: `vllm-router/${name}`,
    init,
    observe: (s: VllmRouterPolicyState, _loads: ReadonlyArray<RankLoad>) => s,
    route,
    finish: (s, ids) => {
      const [charges, ranks] = release(s.charges, ids)
      return ranks.length === 0 ? s : { ...s, charges }
    },
    setStatus: (s, status) =>
      checkStatus(status, s.urls.length) !== undefined ? s : { ...s, healthy: [...status] }
  }
}

const tieBreakOf: Record<VllmRouterPolicyName, string> = {
  "consistent-hash":
    "FurcHash ring position of the routing key; first healthy worker when its worker is down",
  "rendezvous-hash": "highest fbi_hash of key and url; the last of equal scores"
}
