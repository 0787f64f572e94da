/**
 * The one seeded generator of the tests, fuzzers and benchmarks: mulberry32 (a public-domain 32-bit
 * generator), so a seed replays the same draws everywhere. Not published; library code that needs
 * randomness takes a seed in its state (the simulator ships its own copy, `sim/src/internal/rng.ts`).
 *
 * @since 0.1.0
 */

/**
 * Uniform draws in [0, 1) from `seed` (mulberry32): each call advances the generator.
 *
 * @example
 * ```ts
 * const rnd = mulberry32(1)
 * rnd() // => 0.6270739405881613
 * ```
 */
export const mulberry32 = (seed: number): (() => number) => {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** A seeded generator with the draws the fuzzers use. */
export interface Rng {
  /** Uniform in [0, 1). */
  next(): number
  /** Uniform integer in [0, n). */
  int(n: number): number
  /** A uniform element of a non-empty `xs`. */
  pick<A>(xs: ReadonlyArray<A>): A
}

/** An {@link Rng} over {@link mulberry32} from `seed`. */
export const makeRng = (seed: number): Rng => {
  const next = mulberry32(seed)
  const int = (n: number) => Math.floor(next() * n)
  return { next, int, pick: (xs) => xs[int(xs.length)]! }
}
