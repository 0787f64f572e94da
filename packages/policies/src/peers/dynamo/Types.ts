/**
 * The shapes Dynamo's KV router selector reads and returns: a worker's projected load and cache
 * overlap, the candidate (`workerId`, `dpRank`), the router config knobs, the scheduling request,
 * and the selection or its typed error. Upstream: ai-dynamo/dynamo `lib/kv-router/src/scheduling/`
 * at 07a6c9ce3bb096cfaf353fe69ee578e105c6a512.
 *
 * @since 0.2.0
 */

/**
 * A worker's load as Dynamo's router projects it (`WorkerLoadProjection`): prompt tokens still in
 * prefill, KV blocks held by decoding requests, blocks the router has added since, active requests.
 *
 * @category dynamo
 * @since 0.2.0
 */
export interface DynamoWorkerLoad {
  readonly activePrefillTokens: number
  readonly activeDecodeBlocks: number
  readonly additionalActiveBlocks: number
  readonly activeRequests: number
}

/**
 * The request's cache overlap with one worker (`OverlapSignals`): blocks per tier (`device`,
 * `host_pinned`, `disk`), the effective overlap (blocks, float) and effective cached tokens. Absent
 * fields are absent upstream (`None` / no tier entry).
 *
 * @category dynamo
 * @since 0.2.0
 */
export interface DynamoOverlap {
  readonly deviceBlocks?: number | undefined
  readonly hostPinnedBlocks?: number | undefined
  readonly diskBlocks?: number | undefined
  readonly effectiveOverlapBlocks?: number | undefined
  readonly effectiveCachedTokens?: number | undefined
}

/**
 * One candidate rank, keyed by `(workerId, dpRank)`. `load` absent = the Rust `None`.
 * `overloaded` marks the worker busy (every rank of that worker is then skipped).
 * `preferredTaintMultiplier` multiplies the cost when present.
 *
 * @category dynamo
 * @since 0.2.0
 */
export interface DynamoWorker {
  readonly workerId: number
  readonly dpRank: number
  readonly load?: DynamoWorkerLoad | undefined
  readonly overlap?: DynamoOverlap | undefined
  readonly overloaded?: boolean | undefined
  readonly preferredTaintMultiplier?: number | undefined
}

/**
 * `KvRouterConfig`'s selector knobs; every field optional, defaults as upstream `config.rs`
 * (credit 1, decay 0, prefill scale 1, host 0.75, disk 0.25, shared 0, decode-request weight 0,
 * temperature 0, worker type "prefill").
 *
 * @category dynamo
 * @since 0.2.0
 */
export interface DynamoKvRouterConfig {
  readonly overlapScoreCredit?: number | undefined
  readonly overlapScoreCreditDecay?: number | undefined
  readonly prefillLoadScale?: number | undefined
  readonly hostCacheHitWeight?: number | undefined
  readonly diskCacheHitWeight?: number | undefined
  readonly sharedCacheMultiplier?: number | undefined
  readonly decodeActiveRequestWeight?: number | undefined
  readonly routerTemperature?: number | undefined
  readonly workerType?: string | undefined
}

/**
 * A scheduling request: prompt length (tokens), KV block size (tokens), whether prefill tokens are
 * tracked, shared-cache hit ranges `[start, end)` in blocks, per-request overrides, and the
 * preferred / pinned worker and allowed worker ids.
 *
 * @category dynamo
 * @since 0.2.0
 */
export interface DynamoRequest {
  readonly islTokens: number
  readonly blockSize: number
  readonly trackPrefillTokens?: boolean | undefined
  readonly sharedCacheHits?: ReadonlyArray<readonly [number, number]> | undefined
  readonly routerConfigOverride?:
    | Pick<
        DynamoKvRouterConfig,
        "overlapScoreCredit" | "prefillLoadScale" | "sharedCacheMultiplier" | "routerTemperature"
      >
    | undefined
  readonly preferredWorker?: readonly [number, number] | undefined
  readonly pinnedWorker?: readonly [number, number] | undefined
  readonly allowedWorkerIds?: ReadonlyArray<number> | undefined
}

/**
 * Why Dynamo's selector placed nothing (upstream error names).
 *
 * @category dynamo
 * @since 0.2.0
 */
export interface DynamoSelectError {
  readonly _tag: "DynamoSelectError"
  readonly reason:
    | "NoEndpoints"
    | "AllEligibleWorkersOverloaded"
    | "PinnedWorkerOverloaded"
    | "PinnedWorkerNotAllowed"
  readonly message: string
}

/**
 * A selection: `index` into the workers given, the costs compared (`index`/`cost` per candidate,
 * ascending (workerId, dpRank)), the softmax probabilities when the temperature is positive, how
 * the pick was made, and how many draws were used.
 *
 * @category dynamo
 * @since 0.2.0
 */
export interface DynamoSelection {
  readonly _tag: "DynamoSelection"
  readonly index: number
  readonly costs: ReadonlyArray<{ readonly index: number; readonly cost: number }>
  readonly probabilities?: ReadonlyArray<number> | undefined
  readonly how: "pinned" | "preferred" | "argmin" | "softmax"
  readonly drawsUsed: number
}
