/**
 * What `loadledger sweep` says before it starts: how many cells, how many are already done, the
 * requests they replay and a rough wall-clock estimate, and whether to ask for `--yes`.
 *
 * @since 0.6.0
 */
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import type { Cell } from "./Spec.js"

/**
 * Thread-seconds per replayed request of a fixed-rate cell: the README's 600-cell comparison
 * (`examples/sweeps/compare.yaml`, 7.08 million replayed requests) took 18 minutes on 2 threads of
 * this project's 2-core machine, 0.3 ms a request.
 *
 * @example
 * ```ts
 * import { SECONDS_PER_REQUEST } from "./estimate.js"
 * SECONDS_PER_REQUEST // => 0.0003
 * ```
 */
export const SECONDS_PER_REQUEST = 0.0003

/** A goodput cell replays its windows about this many times over (bracketing, then bisection). */
const GOODPUT_PASSES = 8

/**
 * Above this estimate (seconds) a sweep started on a terminal asks for `--yes` before it starts.
 *
 * @example
 * ```ts
 * import { CONFIRM_SECONDS } from "./estimate.js"
 * CONFIRM_SECONDS // => 120
 * ```
 */
export const CONFIRM_SECONDS = 120

/**
 * A sweep's size before it runs: its cells, how many are kept from an earlier run in the output
 * folder, the requests the rest replay, and the estimated seconds on `threads` threads.
 *
 * @category sweep
 * @since 0.6.0
 */
export interface SweepEstimate {
  readonly cells: number
  readonly kept: number
  readonly requests: number
  readonly seconds: number
}

/** Requests in a trace file: its non-empty lines (less a CSV's header), read once per file. */
const requestCount = (path: string, cache: Map<string, number>): number => {
  const hit = cache.get(path)
  if (hit !== undefined) return hit
  const text = readFileSync(path, "utf8")
  let lines = 0
  for (const line of text.split("\n")) if (line.trim() !== "") lines++
  const n = path.toLowerCase().endsWith(".csv") ? Math.max(0, lines - 1) : lines
  cache.set(path, n)
  return n
}

/**
 * Size the cells a run would do: those without a kept result in `outDir/cells`, the requests each
 * replays (its trace's, or the spec's `limit`; a goodput cell about 8 times over) and the time at
 * {@link SECONDS_PER_REQUEST} spread over `threads`. Reads the trace files (each once).
 *
 * @example
 * ```ts
 * import { estimateSweep } from "./estimate.js"
 * const cell = {
 *   id: "a", trace: "examples/traces/mooncake/conversation_trace.jsonl", traceName: "conversation", rate: 1,
 *   limit: 1000, dp: 8, engine: "sglang" as const, frontEnds: 1, policy: "total-tokens", model: "glm-5.3", gpu: "h200", seed: 0
 * }
 * estimateSweep([cell, { ...cell, id: "b" }], "/no/such/dir", 2) // => { cells: 2, kept: 0, requests: 2000, seconds: 0.3 }
 * ```
 *
 * @category sweep
 * @since 0.6.0
 */
export const estimateSweep = (cells: ReadonlyArray<Cell>, outDir: string, threads: number): SweepEstimate => {
  const cache = new Map<string, number>()
  let kept = 0
  let requests = 0
  for (const c of cells) {
    if (existsSync(join(outDir, "cells", `${c.id}.json`))) {
      kept++
      continue
    }
    const n = Math.min(requestCount(c.trace, cache), c.limit ?? Number.POSITIVE_INFINITY)
    requests += c.goodput === undefined ? n : n * GOODPUT_PASSES
  }
  const seconds = +((requests * SECONDS_PER_REQUEST) / Math.max(1, threads)).toPrecision(3)
  return { cells: cells.length, kept, requests, seconds }
}

/**
 * A duration as people say it: "40 s", "3 min", "1 h 20 min".
 *
 * @example
 * ```ts
 * import { humanDuration } from "./estimate.js"
 * humanDuration(40.2) // => "40 s"
 * humanDuration(1080) // => "18 min"
 * humanDuration(4800) // => "1 h 20 min"
 * ```
 */
export const humanDuration = (seconds: number): string => {
  if (seconds < 90) return `${Math.max(1, Math.round(seconds))} s`
  const min = Math.round(seconds / 60)
  return min < 60 ? `${min} min` : `${Math.floor(min / 60)} h${min % 60 === 0 ? "" : ` ${min % 60} min`}`
}

/**
 * The line printed before a sweep starts, e.g. "600 cells (0 kept from an earlier run), 7,080,000
 * requests to replay: about 18 min on 2 threads (a rough estimate: 0.3 ms a request)".
 *
 * @example
 * ```ts
 * import { estimateLine } from "./estimate.js"
 * estimateLine({ cells: 600, kept: 0, requests: 7080000, seconds: 1062 }, 2)
 * // => "600 cells (0 kept from an earlier run), 7,080,000 requests to replay: about 18 min on 2 threads (a rough estimate: 0.3 ms a request)"
 * ```
 */
export const estimateLine = (e: SweepEstimate, threads: number): string =>
  `${e.cells} cells (${e.kept} kept from an earlier run), ${e.requests.toLocaleString("en-US")} requests to replay: about ${humanDuration(e.seconds)} on ${threads} thread${threads === 1 ? "" : "s"} (a rough estimate: ${SECONDS_PER_REQUEST * 1000} ms a request)`
