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
 * A timing loop of its own for `step`: each call compiles a fresh function, so every candidate's
 * loop keeps its own type feedback (monomorphic, `step` inlinable) instead of sharing one call site
 * with the other candidates, as a router running a single policy would.
 */
const ownLoop = (step: (i: number) => void): ((from: number, to: number) => void) =>
  new Function("step", "return function loop(from, to) { for (let i = from; i < to; i++) step(i) }")(step)

/**
 * Nanoseconds per operation for each candidate, timed in interleaved passes (each pass times one
 * round of every candidate, each in its own loop) after a warm-up of 3 rounds each, keeping each
 * candidate's fastest round, so that load from other processes hits all candidates alike. The call
 * index keeps counting across rounds, so every round sees the same mix of inputs (index mod 1024).
 */
export const nsPerOpInterleaved = (cands: ReadonlyArray<Candidate>, passes = 15): Array<number> => {
  const best = cands.map(() => Number.POSITIVE_INFINITY)
  const loops = cands.map((c) => ownLoop(c.step))
  const at = cands.map(() => 0)
  for (let k = 0; k < cands.length; k++) {
    loops[k]!(0, 3 * cands[k]!.iterations)
    at[k] = 3 * cands[k]!.iterations
  }
  for (let p = 0; p < passes; p++) {
    for (let k = 0; k < cands.length; k++) {
      const n = cands[k]!.iterations
      const from = at[k]!
      const t0 = process.hrtime.bigint()
      loops[k]!(from, from + n)
      const ns = Number(process.hrtime.bigint() - t0) / n
      at[k] = from + n
      if (ns < best[k]!) best[k] = ns
    }
  }
  return best
}

/** The parts of a policy a route step drives (structural, so any `Policy<S>` fits). */
export interface Routable<S> {
  readonly route: (
    state: S,
    request: never,
    now: number
  ) => { readonly _tag: string; readonly rank?: number; readonly state?: unknown }
  readonly finish: (state: S, requestIds: ReadonlyArray<string>, now: number) => S
}

/**
 * One immutable `route` per step from `state0`, threading the returned state: request
 * `reqs[k & 1023]` at `now0 + (k + 1) us`, and when `finishLists` is given, `finish` of
 * `finishLists[(k + lag) & 1023]` after it (so about `1024 - lag` requests stay in flight). The
 * step is compiled fresh for each call (`new Function`), so each policy's step keeps its own type
 * feedback, as in a router running that one policy.
 */
export const routeStep = <S>(
  policy: Routable<S>,
  state0: S,
  reqs: ReadonlyArray<unknown>,
  now0: number,
  finishLists?: ReadonlyArray<ReadonlyArray<string>>,
  lag = 512
): ((k: number) => void) =>
  new Function(
    "policy",
    "state0",
    "reqs",
    "now0",
    "finishLists",
    "lag",
    "consume",
    `let s = state0
    return finishLists === undefined
      ? function step(k) {
          const out = policy.route(s, reqs[k & 1023], now0 + (k + 1) * 1e-6)
          if (out._tag === "Routed") {
            s = out.state
            consume(out.rank)
          }
        }
      : function stepFinish(k) {
          const now = now0 + (k + 1) * 1e-6
          const out = policy.route(s, reqs[k & 1023], now)
          if (out._tag === "Routed") {
            s = policy.finish(out.state, finishLists[(k + lag) & 1023], now)
            consume(out.rank)
          }
        }`
  )(policy, state0, reqs, now0, finishLists, lag, consume)

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
