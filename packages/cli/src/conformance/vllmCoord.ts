/**
 * The conformance vector format of vLLM's DP coordinator (publication timeline), replayed against the simulator's `vllmCoordinatorTimeline`.
 *
 * @since 0.1.0
 */
import { type VllmCoordMessage, vllmCoordinatorTimeline } from "@loadledger/sim"
import { firstDiff } from "./diff.js"
import type { CaseResult, VectorFormat } from "./types.js"

interface CoordCase {
  readonly id: string
  readonly engine_count: number
  readonly wave_coordination: boolean
  readonly stats_update_interval_ms: number
  readonly heartbeat_ms: number
  readonly min_timeout_ms: number
  readonly until_ms: number
  readonly messages: ReadonlyArray<VllmCoordMessage>
  readonly expected_outputs: ReadonlyArray<unknown>
}

const isObj = (x: unknown): x is Record<string, unknown> => x !== null && typeof x === "object"

const runCase = (c: CoordCase): CaseResult => {
  const out = vllmCoordinatorTimeline(
    {
      engineCount: c.engine_count,
      waveCoordination: c.wave_coordination,
      untilMs: c.until_ms,
      statsUpdateIntervalMs: c.stats_update_interval_ms,
      heartbeatMs: c.heartbeat_ms,
      minTimeoutMs: c.min_timeout_ms
    },
    c.messages
  )
  if ("_tag" in out) return { id: c.id, ok: false, firstDiff: out.message }
  const d = firstDiff(c.expected_outputs, out, "expected_outputs")
  return d === undefined ? { id: c.id, ok: true } : { id: c.id, ok: false, firstDiff: d }
}

/**
 * `coord_cases.json` from `fixtures/reference/vllm/`: the DP coordinator's publish cadence, replayed
 * through `vllmCoordinatorTimeline`, comparing every output (time, kind, message) in order.
 *
 * @example
 * ```ts
 * import { readFileSync } from "node:fs"
 * import { vllmCoord } from "./vllmCoord.js"
 * const doc = JSON.parse(readFileSync("fixtures/reference/vllm/coord_cases.json", "utf8"))
 * vllmCoord.name // => "vllm-coord"
 * vllmCoord.detect(doc) // => true
 * const results = vllmCoord.run(doc)
 * results.length // => 15
 * results.filter((r) => !r.ok) // => []
 * ```
 *
 * @since 0.1.0
 */
export const vllmCoord: VectorFormat = {
  name: "vllm-coord",
  detect: (doc) =>
    Array.isArray(doc) &&
    doc.length > 0 &&
    isObj(doc[0]) &&
    "engine_count" in doc[0] &&
    "messages" in doc[0] &&
    "expected_outputs" in doc[0],
  run: (doc) => (doc as ReadonlyArray<CoordCase>).map(runCase)
}
