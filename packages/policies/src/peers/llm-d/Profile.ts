/**
 * An llm-d scheduler profile run: filters, then scorers weighted and summed, then the picker, with
 * the approximate prefix producer and the in-flight load producer around it.
 *
 * @since 0.2.0
 */
import type { DrawSource } from "../Draws.js"
import type { LlmdEndpoint } from "./Endpoint.js"
import { maxScorePick, randomPick, weightedRandomPick } from "./Pickers.js"
import {
  type LlmdPrefixIndex,
  type LlmdPrefixProducerConfig,
  llmdBlockHashes,
  llmdBlockSize,
  llmdEstimateTokens,
  llmdIndexAdd,
  llmdLruCapacity,
  llmdMatch
} from "./PrefixProducer.js"
import { type LlmdScorerType, llmdScores } from "./Scorers.js"
import { type LlmdDetectorConfig, utilizationDetect } from "./UtilizationDetector.js"

/**
 * A profile: scorers (weight default 1) in order, the picker, optional filters (the
 * utilization detector), the prefix producer (on when given or when a prefix-cache scorer is
 * listed) and the model name hashed into the prefix.
 *
 * @category llm-d
 * @since 0.2.0
 */
export interface LlmdProfileConfig {
  readonly scorers: ReadonlyArray<{
    readonly type: LlmdScorerType
    readonly weight?: number | undefined
    readonly params?: Readonly<Record<string, unknown>> | undefined
  }>
  readonly picker: "max-score-picker" | "weighted-random-picker" | "random-picker"
  readonly filters?:
    | ReadonlyArray<{
        readonly type: "utilization-detector"
        readonly params?: LlmdDetectorConfig | undefined
      }>
    | undefined
  readonly prefixProducer?: LlmdPrefixProducerConfig | undefined
  readonly model?: string | undefined
}

/**
 * llm-d's default profile (`config/loader/defaults.go`): queue 2, kv-cache-utilization 2,
 * prefix-cache 3 (approximate producer), max-score picker, no filters.
 *
 * @example
 * ```ts
 * import { LlmD } from "@loadledger/policies"
 * LlmD.llmdDefaultProfile.scorers.map((s) => s.weight) // => [2, 2, 3]
 * ```
 *
 * @category llm-d
 * @since 0.2.0
 */
export const llmdDefaultProfile: LlmdProfileConfig = {
  scorers: [
    { type: "queue-scorer", weight: 2.0 },
    { type: "kv-cache-utilization-scorer", weight: 2.0 },
    { type: "prefix-cache-scorer", weight: 3.0 }
  ],
  picker: "max-score-picker",
  prefixProducer: {}
}

/**
 * A request as the producers see it: token ids, or prompt text (tokenized by the `estimate`
 * backend), or already-computed block hashes (`blockHashes`, e.g. a trace's block ids standing in for
 * token blocks); `inputTokens` overrides the token count; `model` / `cacheSalt` seed the prefix hash.
 *
 * @category llm-d
 * @since 0.2.0
 */
export interface LlmdRequest {
  readonly tokenIds?: ReadonlyArray<number> | undefined
  readonly text?: string | undefined
  readonly blockHashes?: ReadonlyArray<string> | undefined
  readonly blockSizeTokens?: number | undefined
  readonly inputTokens?: number | undefined
  readonly model?: string | undefined
  readonly cacheSalt?: string | undefined
}

/**
 * A profile decision. `index` is into the endpoints given; `candidates` are the indices the scorers
 * saw (after filters); `raw[s][j]` is scorer s's raw score of candidate j; `totals[j]` the weighted
 * sum; `detection` the filter's outcome; `prefix` the producer's block hashes, matches and block
 * size; `uncachedTokens` per endpoint; `tokensCharged` what PreRequest adds to the chosen endpoint's
 * in-flight tokens; `index` after `indexer.Add`.
 *
 * @category llm-d
 * @since 0.2.0
 */
export interface LlmdProfileResult {
  readonly _tag: "LlmdPicked"
  readonly index: number
  readonly candidates: ReadonlyArray<number>
  readonly raw: ReadonlyArray<ReadonlyArray<number>>
  readonly totals: ReadonlyArray<number>
  readonly detection?:
    | {
        readonly kept: ReadonlyArray<number>
        readonly stale: ReadonlyArray<number>
        readonly saturation: number
      }
    | undefined
  readonly prefix?:
    | {
        readonly hashes: ReadonlyArray<string>
        readonly matchBlocks: ReadonlyArray<number>
        readonly blockSizeTokens: number
      }
    | undefined
  readonly uncachedTokens: ReadonlyArray<number>
  readonly tokensCharged: number
  readonly prefixIndex: LlmdPrefixIndex
  readonly drawsUsed: number
}

/**
 * Run one llm-d profile over the candidate endpoints (the ready ones, in candidate order) with the
 * explicit picker draws: the approximate prefix producer (hashes, per-endpoint match, block size),
 * the uncached-token estimate (`(total - match) * bs + max(0, input - total * bs)` with prefix info,
 * else the input length; an endpoint's `uncachedRequestTokens` attribute wins), the filters, each
 * scorer (raw), `total += clamp(score, 0, 1) * weight` in scorer order, the picker, and
 * `indexer.Add(hashes, chosen)`. In-flight counters are the caller's: it adds one request and
 * `tokensCharged` to the chosen endpoint, and releases them when the request finishes.
 *
 * **When to use**: replaying llm-d's scheduling decision (any weighted profile of the scorers here).
 *
 * Upstream: llm-d/llm-d-router `pkg/epp/scheduling/scheduler_profile.go` (`Run`,
 * `runScorerPlugins`), `requestcontrol/dataproducer/{approximateprefix,inflightload}` at
 * ebab687927f5331c1b39defcb579a07951bce56c.
 *
 * @example
 * ```ts
 * import { LlmD } from "@loadledger/policies"
 * const eps = [
 *   { id: "w0", metrics: { waitingQueueSize: 3, kvCacheUsagePercent: 0.5 } },
 *   { id: "w1", metrics: { waitingQueueSize: 0, kvCacheUsagePercent: 0.2 } }
 * ]
 * const r = LlmD.runLlmdProfile(eps, { text: "hello" }, LlmD.llmdPrefixIndex(), LlmD.llmdDefaultProfile, [0])
 * r === undefined ? -1 : r.index // => 1
 * r?.totals // => [1, 3.6]
 * ```
 *
 * @category llm-d
 * @since 0.2.0
 */
export const runLlmdProfile = (
  eps: ReadonlyArray<LlmdEndpoint>,
  request: LlmdRequest,
  index: LlmdPrefixIndex,
  config: LlmdProfileConfig,
  draws: DrawSource
): LlmdProfileResult | undefined => {
  if (eps.length === 0) return undefined
  const producerOn =
    config.prefixProducer !== undefined || config.scorers.some((s) => s.type === "prefix-cache-scorer")
  const pc = config.prefixProducer ?? {}
  const tokens =
    request.tokenIds ?? (request.text !== undefined ? llmdEstimateTokens(request.text) : undefined) ?? []
  const inputTokens = request.inputTokens ?? tokens.length
  let prefix: LlmdProfileResult["prefix"]
  if (producerOn) {
    const bs = request.blockSizeTokens ?? llmdBlockSize(pc, eps)
    const hashes =
      request.blockHashes ??
      llmdBlockHashes(tokens, bs, request.model ?? config.model ?? "", request.cacheSalt ?? "", pc)
    const m = llmdMatch(index, hashes)
    prefix = { hashes, matchBlocks: eps.map((e) => m.get(e.id) ?? 0), blockSizeTokens: bs }
  }
  const uncachedTokens = eps.map((e, i) => {
    if (e.uncachedRequestTokens !== undefined) return e.uncachedRequestTokens
    if (prefix === undefined) return Math.max(0, inputTokens)
    const total = prefix.hashes.length
    const bs = prefix.blockSizeTokens
    return Math.max(0, (total - prefix.matchBlocks[i]!) * bs) + Math.max(0, inputTokens - total * bs)
  })
  let candidates = eps.map((_, i) => i)
  let detection: LlmdProfileResult["detection"]
  for (const f of config.filters ?? []) {
    const d = utilizationDetect(
      candidates.map((i) => eps[i]!),
      f.params ?? {}
    )
    detection = {
      kept: d.kept.map((j) => candidates[j]!),
      stale: d.stale.map((j) => candidates[j]!),
      saturation: d.saturation
    }
    candidates = detection.kept as Array<number>
  }
  const ceps = candidates.map((i) => eps[i]!)
  const ctx = {
    prefix:
      prefix === undefined
        ? undefined
        : candidates.map((i) => ({
            matchBlocks: prefix!.matchBlocks[i]!,
            totalBlocks: prefix!.hashes.length,
            blockSizeTokens: prefix!.blockSizeTokens
          })),
    uncachedTokens: candidates.map((i) => uncachedTokens[i]!)
  }
  const totals = ceps.map(() => 0.0)
  const raw = config.scorers.map((s) => {
    const xs = llmdScores(s.type, s.params, ceps, ctx)
    const w = s.weight ?? 1.0
    xs.forEach((x, j) => {
      totals[j] = totals[j]! + Math.min(Math.max(x, 0), 1) * w
    })
    return xs
  })
  const pick =
    config.picker === "weighted-random-picker"
      ? weightedRandomPick(totals, draws)
      : config.picker === "random-picker"
        ? randomPick(totals.length, draws)
        : maxScorePick(totals, draws)
  const chosen = candidates[pick.index]!
  const prefixIndex =
    prefix === undefined || prefix.hashes.length === 0
      ? index
      : llmdIndexAdd(index, prefix.hashes, eps[chosen]!.id, llmdLruCapacity(pc, eps[chosen]!))
  return {
    _tag: "LlmdPicked",
    index: chosen,
    candidates,
    raw,
    totals,
    detection,
    prefix,
    uncachedTokens,
    tokensCharged: uncachedTokens[chosen]!,
    prefixIndex,
    drawsUsed: pick.drawsUsed
  }
}
