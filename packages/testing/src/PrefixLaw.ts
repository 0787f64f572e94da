/**
 * The stale-prefix law (issue 35, item 5): a policy's prefix index holds only what the evidence
 * says. Once a worker's rank is removed from the set, a later request is never placed on whatever
 * takes that rank's place (a different worker, or the same id come back empty) because of prefix
 * entries the removed one left.
 *
 * Field report: smg-project/smg PR #2132 ("fix(kv_index): purge tree tenants when a worker is
 * removed", 2026-08-13): `CacheAwarePolicy::remove_worker` was a no-op relying on LRU eviction, so a
 * removed worker's radix-tree tenant was kept forever and matched again. The same fault when the
 * worker comes back in place: llm-d/llm-d-router #1736 / PR #1738 (KV block index entries of a
 * removed or restarted pod kept until `Index.Clear` on endpoint deletion) and #2853 (a restarted
 * engine's blocks kept when event replay is off), vllm-project/aibrix #2287 (the prefix index not
 * invalidated when an engine clears its cache), volcano-sh/kthena #1428 (block ownership survives a
 * restart that keeps the pod name). Those three arrive here as the `"status"` removal: the policy
 * interface carries no cache-cleared event, so a restart in place is the rank marked down and back.
 *
 * @since 0.8.0
 */
import type { Policy, RankLoad, RouteRequest } from "@loadledger/policies"

/**
 * How a rank leaves the set and comes back, as a policy sees it:
 *
 * - `"rebuilt"`: the live router's way (`PolicyView`): a new state for the ranks left (`init`,
 *   `observe`), then one for the full set again when the newcomer joins: pins that a state built
 *   by `init` carries no history. (An index kept outside the state, module-level, would feed the
 *   law's control run too, and is outside what this law sees.)
 * - `"status"`: the state kept, the rank marked unhealthy (`setStatus`) and observed without it,
 *   then healthy again with a row of its own (one request running that is not this prefix's).
 *
 * @category laws
 * @since 0.8.0
 */
export type Removal = "rebuilt" | "status"

/**
 * A placement made from a removed rank's prefix entries: on `dpSize` ranks, the request with
 * prefix `h0` went to `rank`; after `removal` of that rank and its return, the same prefix went to
 * `rank` again, where the same history with another prefix sends it elsewhere (`control`).
 *
 * @category laws
 * @since 0.8.0
 */
export interface StalePrefixViolation {
  readonly policy: string
  readonly dpSize: number
  readonly removal: Removal
  readonly rank: number
  readonly control: number
}

const PREFIX_BLOCKS = 8

/** A request of prefix `key`: 8 block hashes, 2,048 token ids, a 4,096-token prompt. */
const request = (id: string, key: string): RouteRequest => ({
  requestId: id,
  inputLength: 4096,
  prefixHashes: Array.from({ length: PREFIX_BLOCKS }, (_, i) => `${key}-${i}`),
  tokenIds: Array.from({ length: 2048 }, (_, i) => (key.charCodeAt(0) * 7919 + i * 31) % 50_000)
})

const row = (dpRank: number, running: number, now: number): RankLoad => ({
  dpRank,
  timestamp: now,
  numRunningReqs: running,
  numWaitingReqs: 0,
  numTotalTokens: running * 256,
  kvCacheUsage: running * 0.001
})

/** Rows of `dpSize` ranks at `now`, `busy` running one request, `without` left out. */
const rows = (dpSize: number, now: number, busy?: number, without?: number): Array<RankLoad> =>
  Array.from({ length: dpSize }, (_, r) => row(r, r === busy ? 1 : 0, now)).filter(
    (r) => r.dpRank !== without
  )

/**
 * The rank the next request of prefix `next` goes to after the history: a first request of prefix
 * `first` on idle ranks (finished), the removal of the rank it went to and its return with one
 * request running. `undefined` when the first request is not routed.
 */
const after = <S>(
  policy: Policy<S>,
  dpSize: number,
  removal: Removal,
  first: string,
  next: string
): { readonly placed: number; readonly chose: number | undefined } | undefined => {
  let s = policy.observe(policy.init(dpSize), rows(dpSize, 1), 1)
  const r = policy.route(s, request("q0", first), 1)
  if (r._tag !== "Routed") return undefined
  const v = r.rank
  s = policy.finish(r.state, ["q0"], 1.5)
  if (removal === "rebuilt") {
    // the router's view of the full set once the newcomer joins: a new state (`PolicyView`)
    s = policy.observe(policy.init(dpSize), rows(dpSize, 3, v), 3)
  } else {
    const down = Array.from({ length: dpSize }, (_, i) => i !== v)
    s = policy.observe(policy.setStatus(s, down), rows(dpSize, 2, undefined, v), 2)
    s = policy.observe(
      policy.setStatus(
        s,
        down.map(() => true)
      ),
      rows(dpSize, 3, v),
      3
    )
  }
  const n = policy.route(s, request("q1", next), 3.1)
  return { placed: v, chose: n._tag === "Routed" ? n.rank : undefined }
}

/**
 * The stale-prefix law on `policy` for 2 to `maxRanks` (default 4) ranks and both removals: when a
 * request of prefix A went to rank v, v was removed and came back holding one other request, the
 * next request of prefix A goes to v only if it would go there had the first request carried
 * another prefix (and gone to v too). Returns the violations (empty: the law holds; a case whose
 * control request went elsewhere is skipped).
 *
 * **When to use**: over every registered policy (`policyEntries()`), with the known exceptions
 * kept exact (`stalePrefixExceptions`).
 *
 * @example
 * ```ts
 * import { stalePrefixViolations } from "@loadledger/testing"
 * import { totalRequests } from "@loadledger/policies"
 * stalePrefixViolations(totalRequests) // => []
 * // a policy that remembers the rank of every prefix it placed, whatever happened to the rank
 * const sticky = {
 *   ...totalRequests,
 *   name: "sticky",
 *   init: () => new Map<string, number>(),
 *   observe: (s: Map<string, number>) => s,
 *   finish: (s: Map<string, number>) => s,
 *   setStatus: (s: Map<string, number>) => s,
 *   route: (s: Map<string, number>, r: { requestId: string; prefixHashes?: ReadonlyArray<string> }) => {
 *     const key = r.prefixHashes?.[0] ?? ""
 *     const rank = s.get(key) ?? s.size % 2
 *     return { _tag: "Routed" as const, rank, state: new Map(s).set(key, rank), explanation: {} }
 *   }
 * }
 * stalePrefixViolations(sticky as never, 2)
 * // => [{ policy: "sticky", dpSize: 2, removal: "status", rank: 0, control: 1 }]
 * ```
 *
 * @category laws
 * @since 0.8.0
 */
export const stalePrefixViolations = <S>(
  policy: Policy<S>,
  maxRanks = 4
): ReadonlyArray<StalePrefixViolation> => {
  const out: Array<StalePrefixViolation> = []
  for (const removal of ["rebuilt", "status"] as const)
    for (let dpSize = 2; dpSize <= maxRanks; dpSize++) {
      const subject = after(policy, dpSize, removal, "A", "A")
      const control = after(policy, dpSize, removal, "B", "A")
      if (subject === undefined || control === undefined || control.placed !== subject.placed) continue
      if (subject.chose === subject.placed && control.chose !== subject.placed && control.chose !== undefined)
        out.push({ policy: policy.name, dpSize, removal, rank: subject.placed, control: control.chose })
    }
  return out
}

/**
 * The registered policies that break the stale-prefix law, each with its removal and reason (exact:
 * the registry test fails when one starts or stops breaking it). Every policy holds it under the
 * live router's removal (`"rebuilt"`); these keep a rank's prefix entries across a health change
 * (`"status"`) and place a request by them once the rank is back.
 *
 * **When to use**: read it before driving one of these policies' `setStatus` yourself across a
 * restart; behind the live router (which rebuilds the state when a rank leaves the view) none of
 * them breaks the law.
 *
 * @example
 * ```ts
 * import { stalePrefixExceptions } from "@loadledger/testing"
 * stalePrefixExceptions.length // => 8
 * stalePrefixExceptions.every((x) => x.removal === "status") // => true
 * ```
 *
 * @category laws
 * @since 0.8.0
 */
export const stalePrefixExceptions: ReadonlyArray<{
  readonly policy: string
  readonly removal: Removal
  readonly reason: string
}> = [
  ...(["smg/cache-aware"] as const).map((policy) => ({
    policy,
    removal: "status" as const,
    reason:
      "upstream purges a worker's radix-tree tenant only when the worker is removed (smg-project/smg PR #2132: CacheAwarePolicy::remove_worker); a health change leaves the tree, and selection matches it again once the worker is healthy"
  })),
  ...(["production-stack/prefixaware"] as const).map((policy) => ({
    policy,
    removal: "status" as const,
    reason:
      "upstream's HashTrie keeps an endpoint's entries whatever its health (vllm-project/production-stack PR #432; no eviction at all before the open PR #711): a prefix matches an endpoint again once it is available"
  })),
  ...(["production-stack/loadaware"] as const).map((policy) => ({
    policy,
    removal: "status" as const,
    reason:
      "the LMCache controller drops an instance's chunks only on an explicit deregister (LoadAwareRouter.matched_tokens_by_url, production-stack #1035), so a holder's prefix is credited again once it is healthy; the router-side index keeps it likewise"
  })),
  ...(["llm-d/profile", "llm-d/profile-load-aware", "llm-d/prefix-cache-scorer"] as const).map((policy) => ({
    policy,
    removal: "status" as const,
    reason:
      "upstream clears a pod's index entries on endpoint deletion (llm-d/llm-d-router PR #1738), not on a restart in place (llm-d/llm-d-router #2853, open): the prefix scorer credits the pod that came back"
  })),
  ...(["aibrix/prefix-cache", "aibrix/multi"] as const).map((policy) => ({
    policy,
    removal: "status" as const,
    reason:
      "upstream removes a pod's prefixes only on pod unsubscribe (vllm-project/aibrix #2287, open: a pod that clears its cache while Running keeps its entries)"
  }))
]
