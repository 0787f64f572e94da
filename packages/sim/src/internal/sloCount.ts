/**
 * Per-request SLO judgement during a run (`SimConfig.slo`): each request is judged once, when it
 * finishes or is rejected; what is left unjudged at the end (unfinished) misses. Exact counts.
 */
import type { Slo, SloAttainment } from "../Slo.js"
import { allowedMisses } from "../Slo.js"
import type { Req } from "./req.js"

export class SloCount {
  ttftMet = 0
  tpotMet = 0
  itlMet = 0
  met = 0
  judged = 0
  private readonly allowed: number

  constructor(
    readonly slo: Slo,
    readonly total: number
  ) {
    this.allowed = allowedMisses(slo, total)
  }

  /** `r` finished (its times are final) or was rejected (it meets nothing). */
  judge(r: Req): void {
    this.judged++
    if (r.rejected !== undefined || Number.isNaN(r.finishSeconds)) return
    const s = this.slo
    const ttft = r.firstTokenSeconds - r.t.arrivalSeconds <= s.ttftSeconds
    const n = r.outputTarget
    // TPOT = (E2E - TTFT) / (output tokens - 1); a one-token output has none
    const tpot = n <= 1 || (r.finishSeconds - r.firstTokenSeconds) / (n - 1) <= s.tpotSeconds
    const itl = s.itlSeconds === undefined || r.worstGapSeconds <= s.itlSeconds
    if (ttft) this.ttftMet++
    if (tpot) this.tpotMet++
    if (itl) this.itlMet++
    if (ttft && tpot && itl) this.met++
  }

  /** The requests that count as met: all bounds per request (`joint`), else the least-met bound (`p99`). */
  private get counted(): number {
    return this.slo.criterion === "joint" ? this.met : Math.min(this.ttftMet, this.tpotMet, this.itlMet)
  }

  /** More requests have missed than the target allows: the run can no longer pass. */
  get hopeless(): boolean {
    return this.judged - this.counted > this.allowed
  }

  result(stoppedEarly: boolean): SloAttainment {
    const counted = this.counted
    return {
      slo: this.slo,
      total: this.total,
      met: this.met,
      ttftMet: this.ttftMet,
      tpotMet: this.tpotMet,
      itlMet: this.itlMet,
      attainment: this.total > 0 ? counted / this.total : 1,
      passed: !stoppedEarly && this.total - counted <= this.allowed,
      stoppedEarly
    }
  }
}
