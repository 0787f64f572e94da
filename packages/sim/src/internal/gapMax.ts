/**
 * The largest gap over a suffix of a rank's decode steps, for per-request worst inter-token gaps
 * (the SLO's `itl` bound) without a per-member loop: every decode step appends its gap; a member
 * that shared the steps from `from` on asks for the largest gap since. Kept as a stack of suffix
 * maxima (strictly decreasing gaps, increasing step numbers): O(1) amortised per step, O(log n)
 * per query.
 */
export class GapMax {
  private steps = new Float64Array(64)
  private gaps = new Float64Array(64)
  private size = 0

  /** Decode step `step` (increasing) had gap `gap` seconds. */
  push(step: number, gap: number): void {
    while (this.size > 0 && this.gaps[this.size - 1]! <= gap) this.size--
    if (this.size === this.steps.length) {
      const s = new Float64Array(this.size * 2)
      const g = new Float64Array(this.size * 2)
      s.set(this.steps)
      g.set(this.gaps)
      this.steps = s
      this.gaps = g
    }
    this.steps[this.size] = step
    this.gaps[this.size] = gap
    this.size++
  }

  /** The largest gap of the steps numbered >= `from` (0 when there is none). */
  maxFrom(from: number): number {
    let lo = 0
    let hi = this.size
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (this.steps[mid]! >= from) hi = mid
      else lo = mid + 1
    }
    return lo < this.size ? this.gaps[lo]! : 0
  }
}
