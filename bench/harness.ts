/**
 * Shared timing helpers for `pnpm bench` (figures only; nothing here is a timed test).
 *
 * @since 0.1.0
 */

/** A benchmark module: `run` prints its own table to stdout. */
export interface Benchmark {
  readonly name: string
  readonly run: () => void
}

/** Keeps results observable so the JIT cannot drop the measured work. */
export let sink = 0
export const consume = (x: number): void => {
  sink = (sink + x) | 0
}

/**
 * Nanoseconds per call of `step`: the fastest of `rounds` timed rounds of `iterations` calls each,
 * after one untimed warm-up round (the minimum is the figure least disturbed by other processes on
 * a shared machine). `step(i)` receives the call index.
 */
export const nsPerOp = (step: (i: number) => void, iterations: number, rounds = 9): number => {
  for (let i = 0; i < iterations; i++) step(i)
  const samples: Array<number> = []
  for (let r = 0; r < rounds; r++) {
    const t0 = process.hrtime.bigint()
    for (let i = 0; i < iterations; i++) step(i)
    samples.push(Number(process.hrtime.bigint() - t0) / iterations)
  }
  return Math.min(...samples)
}

/** One thing to time: `step(i)` is one operation; `iterations` calls make a round. */
export interface Candidate {
  readonly step: (i: number) => void
  readonly iterations: number
}

/**
 * Nanoseconds per operation for each candidate, timed in interleaved passes (each pass times one
 * round of every candidate) and keeping each candidate's fastest round, so that load from other
 * processes hits all candidates alike.
 */
export const nsPerOpInterleaved = (cands: ReadonlyArray<Candidate>, passes = 25): Array<number> => {
  const best = cands.map(() => Number.POSITIVE_INFINITY)
  for (const c of cands) for (let i = 0; i < c.iterations; i++) c.step(i)
  for (let p = 0; p < passes; p++) {
    cands.forEach((c, k) => {
      const t0 = process.hrtime.bigint()
      for (let i = 0; i < c.iterations; i++) c.step(i)
      best[k] = Math.min(best[k]!, Number(process.hrtime.bigint() - t0) / c.iterations)
    })
  }
  return best
}

/** Iterations for a round of roughly `targetMs` given a rough cost per op in ns. */
export const iterationsFor = (roughNs: number, targetMs = 5): number =>
  Math.max(1000, Math.round((targetMs * 1e6) / Math.max(roughNs, 1)))

/** A fixed-seed PRNG (mulberry32) so every run benches the same inputs. */
export const prng = (seed: number): (() => number) => {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
