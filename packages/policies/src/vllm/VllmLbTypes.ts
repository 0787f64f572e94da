/**
 * The shapes of the vLLM data-parallel load-balancing front end (`VllmLb.ts`): an engine's row, the
 * front end's state, its client options and what one `route` decided. A leaf module below
 * `VllmLb.ts` and `VllmLbUpdates.ts`; `VllmLb.ts` re-exports them.
 *
 * @since 0.1.0
 */
import type * as HashMap from "effect/HashMap"

/**
 * One engine's row in the vLLM front end's load table: `[waiting, running, kvCacheUsage]`.
 * `kvCacheUsage` is a 0..1 fraction; `undefined` means the source did not report it, and then no
 * KV penalty is added (the upstream coordinator always reports it; loadledger's adapters may not).
 *
 * @category vllm
 * @since 0.1.0
 */
export type VllmEngineRow = readonly [waiting: number, running: number, kvCacheUsage: number | undefined]

/**
 * The state of one vLLM data-parallel load-balancing front end (`DPLBAsyncMPClient`), immutable.
 *
 * - `lbEngines[i]`: the coordinator's last row for engine `i`, plus this front end's local
 *   `waiting += clientCount` bumps since then.
 * - `inflight[i]`: requests this front end sent to engine `i` that have not finished.
 * - `reqsInFlight`: request id to engine index (a persistent hash map, so routing stays O(N)).
 * - `engStartIndex`: where the next scan starts; starts at `floor(N * clientIndex / clientCount)`.
 * - `currentWave` / `enginesRunning`: the wave view the coordinator last published.
 *
 * Reproduces `vllm/v1/engine/core_client.py` (`DPLBAsyncMPClient`, `DPAsyncMPClient`) at
 * vllm-project/vllm commit `00080ee13c7a451fce071ccb8d0e94d395acf5a7`.
 *
 * @category vllm
 * @since 0.1.0
 */
export interface VllmLbState {
  readonly numEngines: number
  readonly clientCount: number
  readonly clientIndex: number
  readonly lbEngines: ReadonlyArray<VllmEngineRow>
  readonly inflight: ReadonlyArray<number>
  readonly reqsInFlight: HashMap.HashMap<string, number>
  readonly engStartIndex: number
  readonly currentWave: number
  readonly enginesRunning: boolean
}

/**
 * Which front end this is: `clientCount` API-server processes (C), this one's `clientIndex` (0..C-1).
 *
 * @category vllm
 * @since 0.1.0
 */
export interface VllmClientOptions {
  readonly clientCount?: number | undefined
  readonly clientIndex?: number | undefined
}

/**
 * What one `route` decided: the chosen engine, the start index the scan used, the per-engine
 * scores (indexed by engine; `null` for an explicit-rank request), the wave stamped on the request,
 * whether a FIRST_REQ went to the coordinator, and the next state.
 *
 * @category vllm
 * @since 0.1.0
 */
export interface VllmLbRouted {
  readonly chosen: number
  readonly startIndexUsed: number
  readonly scores: ReadonlyArray<number> | null
  readonly requestWave: number
  readonly firstReq: boolean
  readonly state: VllmLbState
}
