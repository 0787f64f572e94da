/**
 * llm-d profiles as loadledger `Policy` values over DP ranks.
 *
 * @since 0.2.0
 */
import type { RankLoad } from "@loadledger/schema"
import type { Policy } from "../../Policy.js"
import { policyError } from "../../Policy.js"
import { candidateRanks, type PeerState, peerPolicy } from "../internal/PeerLedger.js"
import type { LlmdEndpoint } from "./Endpoint.js"
import { type LlmdPrefixIndex, llmdPrefixIndex } from "./PrefixProducer.js"
import { type LlmdProfileConfig, llmdDefaultProfile, runLlmdProfile } from "./Profile.js"

/**
 * Options of an llm-d policy: the profile, the tokens one trace block hash stands for (Mooncake:
 * 512), the model name, and the seed of the picker's draws.
 *
 * @category llm-d
 * @since 0.2.0
 */
export interface LlmdPolicyOptions {
  readonly name?: string | undefined
  readonly profile: LlmdProfileConfig
  readonly blockSizeTokens?: number | undefined
  readonly seed?: number | undefined
}

const neededFields = (p: LlmdProfileConfig): Array<keyof RankLoad> => {
  const f = new Set<keyof RankLoad>()
  for (const s of p.scorers) {
    if (s.type === "queue-scorer" || s.type === "load-aware-scorer") f.add("numWaitingReqs")
    if (s.type === "running-requests-size-scorer") f.add("numRunningReqs")
    if (s.type === "kv-cache-utilization-scorer") f.add("kvCacheUsage")
  }
  if ((p.filters ?? []).length > 0) {
    f.add("numWaitingReqs")
    f.add("kvCacheUsage")
  }
  return [...f]
}

/**
 * An llm-d profile as a `Policy` over DP ranks (rank i is endpoint `"i"`, in rank order as the
 * candidate order).
 *
 * - **Loads**: `numWaitingReqs` -> `WaitingQueueSize`, `numRunningReqs` -> `RunningRequestsSize`,
 *   `kvCacheUsage` -> `KVCacheUsagePercent`; `now - timestamp` -> the metrics age the utilization
 *   detector compares with its staleness threshold (a rank never reported is stale).
 * - **Unknown / absent**: upstream reads an unscraped metric as 0 (an idle endpoint). Here a rank whose
 *   row is absent, `unknown`, or lacks a field the profile's scorers read is left out of the
 *   candidates while a known healthy rank exists. When none is known all healthy ranks are
 *   candidates, and a missing field reads as the busiest candidate's value of it (absent when no
 *   candidate has it), so an unknown rank is never the idlest.
 * - **Unhealthy** ranks (`setStatus`) are not candidates (upstream passes only ready pods).
 * - **In flight**: route charges the rank one request and the producer's uncached-token estimate
 *   (`InFlightLoad`), finish releases both (the active-request and token-load scorers read them).
 * - **Prefix**: the trace's block hashes (`RouteRequest.prefixHashes`, Mooncake's `hash_ids`, each
 *   standing for `blockSizeTokens` tokens, default 512) are used as the producer's chained block
 *   hashes (they already identify a whole prefix, as upstream's chain does); the per-endpoint LRU
 *   index and the match are upstream's. `inputLength` is the token count. `routedDpRank` is ignored
 *   (llm-d has no DP-rank pin).
 * - **Randomness**: the picker's draws come from a seeded generator in the state.
 *
 * **When to use**: comparing llm-d's scheduling with other policies in the simulator, the laws and
 * the bench; {@link runLlmdProfile} is the exact core.
 *
 * Upstream: llm-d/llm-d-router `pkg/epp/scheduling/scheduler_profile.go` and the plugins named in
 * fixtures/reference/peers/README-llm-d.md, at ebab687927f5331c1b39defcb579a07951bce56c.
 *
 * @example
 * ```ts
 * import { LlmD } from "@loadledger/policies"
 * const p = LlmD.makeLlmdPolicy({ profile: LlmD.llmdDefaultProfile })
 * const s = p.observe(p.init(2), [
 *   { dpRank: 0, timestamp: 1, numWaitingReqs: 4, numRunningReqs: 1, numTotalTokens: 0, kvCacheUsage: 0.5 },
 *   { dpRank: 1, timestamp: 1, numWaitingReqs: 0, numRunningReqs: 1, numTotalTokens: 0, kvCacheUsage: 0.5 }
 * ], 1)
 * const r = p.route(s, { requestId: "a", inputLength: 100 }, 1)
 * r._tag === "Routed" && r.rank // => 1
 * ```
 *
 * @category llm-d
 * @since 0.2.0
 */
export const makeLlmdPolicy = (o: LlmdPolicyOptions): Policy<PeerState<LlmdPrefixIndex>> => {
  const fields = neededFields(o.profile)
  const bs = o.blockSizeTokens ?? 512
  return peerPolicy<LlmdPrefixIndex>({
    name: o.name ?? "llm-d/profile",
    seed: o.seed ?? 0,
    initExtra: () => llmdPrefixIndex(),
    decide: (l, index, request, now, draw) => {
      const { ranks, unknown } = candidateRanks(l, fields)
      // no rank fully known (all healthy ranks are candidates): a missing field reads as the busiest
      // candidate's value of it, never upstream's 0 (an idle endpoint); a field no candidate has stays absent
      const rows = ranks.map((i) => {
        const row = l.loads[i]
        return row !== undefined && row.unknown === undefined ? row : undefined
      })
      const busiest = (f: "numWaitingReqs" | "numRunningReqs" | "kvCacheUsage"): number | undefined => {
        const xs = rows.flatMap((row) => (row?.[f] === undefined ? [] : [row[f]]))
        return xs.length === 0 ? undefined : Math.max(...xs)
      }
      const worst = {
        waitingQueueSize: busiest("numWaitingReqs"),
        runningRequestsSize: busiest("numRunningReqs"),
        kvCacheUsagePercent: busiest("kvCacheUsage")
      }
      const eps: Array<LlmdEndpoint> = ranks.map((i, k) => {
        const row = rows[k]
        const ok = row !== undefined
        return {
          id: String(i),
          metrics: {
            waitingQueueSize: row?.numWaitingReqs ?? worst.waitingQueueSize,
            runningRequestsSize: row?.numRunningReqs ?? worst.runningRequestsSize,
            kvCacheUsagePercent: row?.kvCacheUsage ?? worst.kvCacheUsagePercent
          },
          inFlight: { requests: l.requests[i]!, tokens: l.tokens[i]! },
          metricsAgeMs: !ok ? null : row.timestamp === undefined ? undefined : (now - row.timestamp) * 1000
        }
      })
      const hashes = request.prefixHashes
      const r = runLlmdProfile(
        eps,
        {
          blockHashes: hashes ?? [],
          blockSizeTokens: bs,
          inputTokens: request.inputLength
        },
        index,
        o.profile,
        draw
      )
      if (r === undefined) return policyError("AllRanksUnavailable", "no candidate endpoint", "status")
      const scores = new Array<number>(l.dpSize).fill(Number.POSITIVE_INFINITY)
      r.candidates.forEach((c, j) => {
        scores[ranks[c]!] = -r.totals[j]!
      })
      const rank = ranks[r.index]!
      return {
        rank,
        extra: r.prefixIndex,
        tokens: r.tokensCharged,
        explanation: {
          scores,
          tieBreak: o.profile.picker,
          stale: r.detection?.stale.map((c) => ranks[c]!),
          details: {
            scores: "minus the profile's weighted total (higher total wins); Infinity = not a candidate",
            perScorer: Object.fromEntries(
              o.profile.scorers.map((s, k) => [s.type, r.raw[k]!.map((x, j) => [ranks[r.candidates[j]!], x])])
            ),
            prefixMatchBlocks: r.prefix?.matchBlocks,
            prefixTotalBlocks: r.prefix?.hashes.length,
            uncachedTokens: r.tokensCharged,
            unknownRanks: unknown,
            saturation: r.detection?.saturation
          }
        }
      }
    }
  })
}

const single = (type: LlmdProfileConfig["scorers"][number]["type"]): LlmdProfileConfig => ({
  scorers: [{ type, weight: 1.0 }],
  picker: "max-score-picker",
  prefixProducer: type === "prefix-cache-scorer" ? {} : undefined
})

/**
 * The llm-d profiles registered by name: `llm-d/profile` (the default queue 2 / kv 2 / prefix 3),
 * `llm-d/profile-load-aware` (load-aware 1 / active-request 2 / prefix 3), one single-scorer
 * profile per scorer (`llm-d/queue-scorer`, ...), `llm-d/weighted-random-picker` (the default
 * scorers under the weighted-random picker) and `llm-d/utilization-detector` (the detector as a
 * filter in front of the queue scorer).
 *
 * @example
 * ```ts
 * import { LlmD } from "@loadledger/policies"
 * Object.keys(LlmD.llmdProfiles).includes("llm-d/profile") // => true
 * ```
 *
 * @category llm-d
 * @since 0.2.0
 */
export const llmdProfiles: Readonly<Record<string, LlmdProfileConfig>> = {
  "llm-d/profile": llmdDefaultProfile,
  "llm-d/profile-load-aware": {
    scorers: [
      { type: "load-aware-scorer", weight: 1.0 },
      { type: "active-request-scorer", weight: 2.0 },
      { type: "prefix-cache-scorer", weight: 3.0 }
    ],
    picker: "max-score-picker",
    prefixProducer: {}
  },
  "llm-d/queue-scorer": single("queue-scorer"),
  "llm-d/kv-cache-utilization-scorer": single("kv-cache-utilization-scorer"),
  "llm-d/running-requests-size-scorer": single("running-requests-size-scorer"),
  "llm-d/load-aware-scorer": single("load-aware-scorer"),
  "llm-d/active-request-scorer": single("active-request-scorer"),
  "llm-d/token-load-scorer": single("token-load-scorer"),
  "llm-d/prefix-cache-scorer": single("prefix-cache-scorer"),
  "llm-d/weighted-random-picker": { ...llmdDefaultProfile, picker: "weighted-random-picker" },
  "llm-d/utilization-detector": {
    scorers: [{ type: "queue-scorer", weight: 1.0 }],
    picker: "max-score-picker",
    filters: [{ type: "utilization-detector" }]
  }
}
