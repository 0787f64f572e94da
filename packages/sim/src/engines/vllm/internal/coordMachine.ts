/**
 * The vLLM coordinator's working copy and message handling, behind the pure functions of
 * `vllm/VllmCoordinator.ts`.
 *
 * @internal
 */
import { type PolicyError, policyError, type VllmEngineRow } from "@loadledger/policies"
import { vllmCoordNextPublishMs } from "../VllmCoordinator.js"
import type { VllmCoordMessage, VllmCoordOutput, VllmCoordState } from "../VllmCoordTypes.js"
import { vllmCoordFirstReq, vllmCoordStartWave, vllmCoordWaveComplete } from "../VllmCoordWave.js"

// The public functions are pure: each copies the state once into a private working copy, which the
// helpers below update in place. `counts` is copy-on-write: the input state's table, a captured step
// snapshot and a published table are never written to (`shared`).
export type Work = { -readonly [K in keyof VllmCoordState]: VllmCoordState[K] } & { shared: boolean }

export const work = (s: VllmCoordState): Work => ({
  engineCount: s.engineCount,
  waveCoordination: s.waveCoordination,
  statsUpdateIntervalMs: s.statsUpdateIntervalMs,
  heartbeatMs: s.heartbeatMs,
  minTimeoutMs: s.minTimeoutMs,
  nowMs: s.nowMs,
  horizonMs: s.horizonMs,
  counts: s.counts,
  statsChanged: s.statsChanged,
  stepCounts: s.stepCounts,
  lastStats: s.lastStats,
  coord: s.coord,
  lastPublishMs: s.lastPublishMs,
  shared: true
})

export const freeze = (w: Work): VllmCoordState => ({
  engineCount: w.engineCount,
  waveCoordination: w.waveCoordination,
  statsUpdateIntervalMs: w.statsUpdateIntervalMs,
  heartbeatMs: w.heartbeatMs,
  minTimeoutMs: w.minTimeoutMs,
  nowMs: w.nowMs,
  horizonMs: w.horizonMs,
  counts: w.counts,
  statsChanged: w.statsChanged,
  stepCounts: w.stepCounts,
  lastStats: w.lastStats,
  coord: w.coord,
  lastPublishMs: w.lastPublishMs
})

/** Publish at every deadline `d` with `d < beforeMs` (`strict`) or `d <= beforeMs`. */
export const publishDue = (w: Work, beforeMs: number, strict: boolean, out: Array<VllmCoordOutput>): void => {
  for (;;) {
    const d = vllmCoordNextPublishMs(w)
    if (strict ? !(d < beforeMs) : !(d <= beforeMs)) return
    if (w.stepCounts !== undefined) {
      out.push({ t: d, kind: "step_snapshot", msg: [w.stepCounts, w.coord.wave, w.coord.running] })
      w.stepCounts = undefined
    } else {
      out.push({ t: d, kind: "current", msg: [w.counts, w.coord.wave, w.coord.running] })
      w.shared = true
      w.statsChanged = false
    }
    w.nowMs = d
    if (d > w.horizonMs) w.horizonMs = d
    w.lastPublishMs = d
  }
}

/** Handle one message (publishes due strictly before it first); an error names the field. */
export const apply = (w: Work, m: VllmCoordMessage, out: Array<VllmCoordOutput>): PolicyError | undefined => {
  if (!(m.t >= w.horizonMs))
    return policyError("InvalidInput", `message at t=${m.t} ms is before ${w.horizonMs} ms`, "t")
  const e = m.type === "first_req" ? (m.rank ?? 0) : m.engine
  if (!Number.isInteger(e) || e < 0 || e >= w.engineCount)
    return policyError(
      "InvalidInput",
      `message names engine ${e}, outside 0..${w.engineCount - 1}`,
      m.type === "first_req" ? "rank" : "engine"
    )
  publishDue(w, m.t, true, out)
  const t = Math.max(w.nowMs, m.t)
  w.nowMs = t
  w.horizonMs = t
  if (m.type === "stats") {
    const last = w.lastStats
    if (
      w.waveCoordination &&
      (last === undefined || m.wave > last[0] || (m.wave === last[0] && m.step > last[1]))
    ) {
      if (w.statsChanged) {
        w.stepCounts = w.counts
        w.shared = true
      }
      w.lastStats = [m.wave, m.step]
    }
    if (w.shared) {
      w.counts = w.counts.slice()
      w.shared = false
    }
    ;(w.counts as Array<VllmEngineRow>)[m.engine] = [m.waiting, m.running, m.kv]
    w.statsChanged = true
    return undefined
  }
  if (!w.waveCoordination) return undefined
  const r =
    m.type === "first_req"
      ? vllmCoordFirstReq(w.coord, m.rank, m.wave)
      : m.type === "wave_complete"
        ? vllmCoordWaveComplete(w.coord, m.wave)
        : vllmCoordStartWave(w.coord, m.engine, m.wave)
  if (r.startDpWave !== undefined) out.push({ t, kind: "start_dp_wave", msg: r.startDpWave })
  if (r.publish !== undefined) out.push({ t, kind: "wave_state", msg: r.publish })
  w.coord = r.coord
  return undefined
}
