/**
 * The conformance vector format of vLLM's DP wave state machine, replayed against the simulator's wave step.
 *
 * @since 0.1.0
 */
import {
  type VllmWaveEvent,
  type VllmWaveState,
  type VllmWaveStepResult,
  vllmWaveInit,
  vllmWaveStep
} from "@loadledger/sim"
import { firstDiff } from "./diff.js"
import type { CaseResult, VectorFormat } from "./types.js"

interface WaveCase {
  readonly id: string
  readonly profile: {
    readonly name: string
    readonly sync_interval: number
    readonly sync_first_step: boolean
  }
  readonly dp_size: number
  readonly steps: ReadonlyArray<{
    readonly local_unfinished: string
    readonly executed?: string
    readonly events?: ReadonlyArray<VllmWaveEvent>
  }>
  readonly expected: ReadonlyArray<unknown>
}

const isObj = (x: unknown): x is Record<string, unknown> => x !== null && typeof x === "object"
const bits = (s: string): Array<boolean> => [...s].map((c) => c === "1")
const toBits = (xs: ReadonlyArray<boolean>): string => xs.map((x) => (x ? "1" : "0")).join("")

/** The expected-object shape of the vectors; empty lists are omitted, as in the file. */
const toExpected = (r: VllmWaveStepResult): Record<string, unknown> => {
  const s = r.state
  const o: Record<string, unknown> = {
    action: r.action.join(""),
    dummy_ranks: r.dummyRanks,
    step_used: r.stepUsed,
    sync: r.sync,
    sync_result: r.syncResult,
    global_running: r.globalRunning,
    coord: [s.coord.wave, s.coord.running],
    client: [s.client.wave, s.client.running],
    running: toBits(s.ranks.map((x) => x.running)),
    wave: s.ranks.map((x) => x.wave),
    step: s.ranks[0]?.step ?? 0,
    pending_pause: toBits(s.ranks.map((x) => x.pendingPause)),
    ignore_start: toBits(s.ranks.map((x) => x.ignoreStart))
  }
  if (r.emitted.length > 0) o["emitted"] = r.emitted.map((m) => ({ rank: m.rank, [m.kind]: m.wave }))
  if (r.eventLog.length > 0)
    o["event_log"] = r.eventLog.map((m) => ({ rank: m.rank, emit: m.kind, wave: m.wave }))
  if (r.startDpWave.length > 0) o["start_dp_wave"] = r.startDpWave
  if (r.coordPublishes.length > 0) o["coord_publishes"] = r.coordPublishes
  if (r.pauseResolved.length > 0) o["pause_resolved"] = r.pauseResolved
  return o
}

const runCase = (c: WaveCase): CaseResult => {
  let s: VllmWaveState = vllmWaveInit(c.dp_size, {
    name: c.profile.name,
    syncInterval: c.profile.sync_interval,
    syncFirstStep: c.profile.sync_first_step
  })
  for (let k = 0; k < c.steps.length; k++) {
    const st = c.steps[k]!
    const r = vllmWaveStep(s, {
      localUnfinished: bits(st.local_unfinished),
      executed: st.executed === undefined ? undefined : bits(st.executed),
      events: st.events
    })
    if (r._tag === "VllmWaveError") return { id: c.id, ok: false, firstDiff: `step ${k}: ${r.message}` }
    s = r.state
    const d = firstDiff(c.expected[k], toExpected(r), `step ${k}`)
    if (d !== undefined) return { id: c.id, ok: false, firstDiff: d }
  }
  return c.expected.length === c.steps.length
    ? { id: c.id, ok: true }
    : { id: c.id, ok: false, firstDiff: `expected has ${c.expected.length} entries, steps ${c.steps.length}` }
}

/**
 * `wave_cases.json` from `fixtures/reference/vllm/`: vLLM's lockstep wave / finish-sync model,
 * stepped through `vllmWaveStep` under the case's profile, comparing every expected field per step.
 *
 * @example
 * ```ts
 * import { readFileSync } from "node:fs"
 * import { vllmWave } from "./vllmWave.js"
 * const doc = JSON.parse(readFileSync("fixtures/reference/vllm/wave_cases.json", "utf8"))
 * vllmWave.name // => "vllm-wave"
 * vllmWave.detect(doc) // => true
 * const results = vllmWave.run(doc)
 * results.length // => 82
 * results.filter((r) => !r.ok) // => []
 * ```
 *
 * @since 0.1.0
 */
export const vllmWave: VectorFormat = {
  name: "vllm-wave",
  detect: (doc) =>
    Array.isArray(doc) &&
    doc.length > 0 &&
    isObj(doc[0]) &&
    "dp_size" in doc[0] &&
    "steps" in doc[0] &&
    "profile" in doc[0],
  run: (doc) => (doc as ReadonlyArray<WaveCase>).map(runCase)
}
