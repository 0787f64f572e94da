/**
 * The shapes of the loopback fake engine (`FakeEngine.ts`): its fault switches (`LoadsFault`,
 * `CompletionsFault`), its options, what it received and the running engine's handle. A leaf
 * module; `FakeEngine.ts` re-exports them.
 *
 * @since 0.2.0
 */

/**
 * What the load endpoint answers:
 * - `live`: current-era SGLang `/v1/loads` JSON built from the requests the engine is serving;
 * - `frozen`: the live payload of the moment the fault began, repeated (same publisher timestamp);
 * - `negative`: live, with `num_running_reqs: -1` on every rank (the sentinel of sglang#32070);
 * - `drift`: a changed schema (`{"engines": [{"rank", "running", "waiting"}]}`, no `loads`);
 * - `nested`: valid live `/v1/loads` with `decode_metrics_windows` nested `depth` deep and padded to
 *   about `bytes` (an oversized payload);
 * - `file` / `body`: a fixed payload; `status`: that HTTP status; `hang`: never answers.
 *
 * @category models
 * @since 0.2.0
 */
export type LoadsFault =
  | { readonly _tag: "live" }
  | { readonly _tag: "frozen" }
  | { readonly _tag: "negative" }
  | { readonly _tag: "drift" }
  | { readonly _tag: "nested"; readonly bytes: number; readonly depth: number }
  | { readonly _tag: "file"; readonly path: string; readonly contentType?: string }
  | { readonly _tag: "body"; readonly body: string; readonly contentType?: string }
  | { readonly _tag: "status"; readonly status: number }
  | { readonly _tag: "hang" }

/**
 * What completions do: answer (`ok`), answer 500 (`500`), or never answer (`hang`).
 *
 * @category models
 * @since 0.2.0
 */
export type CompletionsFault = "ok" | "500" | "hang"

/**
 * Fake engine options: `dpSize` (default 1), `port` (0 = ephemeral), `loadPaths` (default
 * `/v1/loads` and `/metrics`), `loads`, `completions`, `latencyMs` before the first byte,
 * `chunks` per answer (default 3) and `chunkDelayMs` between streamed chunks.
 *
 * @category models
 * @since 0.2.0
 */
export interface FakeEngineOptions {
  readonly dpSize?: number
  readonly port?: number
  readonly loadPaths?: ReadonlyArray<string>
  readonly loads?: LoadsFault
  readonly completions?: CompletionsFault
  readonly latencyMs?: number
  readonly chunks?: number
  readonly chunkDelayMs?: number
}

/**
 * One completion request as the engine received it (request id from `X-Request-Id`, rank from
 * `X-Data-Parallel-Rank`, `atMs`: arrival, `Date.now()` milliseconds).
 *
 * @category models
 * @since 0.2.0
 */
export interface Received {
  readonly requestId: string
  readonly path: string
  readonly dpRank: number
  readonly atMs: number
}

/**
 * A running fake engine. `received()`: every completion request since it started (kept across
 * `stop`/`start`, so duplicates can be counted over a restart); `running()`: completions in
 * progress per rank; `set` switches faults; `stop` closes the port (connections dropped), `start`
 * listens again on the same port.
 *
 * @category models
 * @since 0.2.0
 */
export interface FakeEngine {
  readonly url: string
  readonly port: number
  readonly received: () => ReadonlyArray<Received>
  readonly running: () => ReadonlyArray<number>
  readonly set: (options: Partial<FakeEngineOptions>) => void
  readonly stop: () => Promise<void>
  readonly start: () => Promise<void>
  readonly close: () => Promise<void>
}
