/**
 * Explicit randomness for the peer routers' cores.
 *
 * @since 0.2.0
 */
import { uniformFloat64 } from "pure-rand/distribution/uniformFloat64"
import { uniformInt } from "pure-rand/distribution/uniformInt"
import { xoroshiro128plus, xoroshiro128plusFromState } from "pure-rand/generator/xoroshiro128plus"

/**
 * The random draws a core consumes, in order. Either a list (the golden vectors give every draw:
 * an integer `0 <= r < bound` where upstream calls `rand.Intn(bound)`, a float in [0, 1) where it
 * draws a uniform float) or a function `(bound) => value` (`bound` 0 asks for a float) that a
 * `Policy` adapter backs with its seeded generator.
 *
 * @category peers
 * @since 0.2.0
 */
export type DrawSource = ReadonlyArray<number> | ((bound: number) => number)

/**
 * The `k`-th draw of a source for a given bound (0 = a float). A list entry outside `[0, bound)`
 * is reduced modulo `bound` (a malformed vector never crashes a core); a missing entry is 0.
 *
 * @example
 * ```ts
 * import { drawAt } from "@loadledger/policies"
 * drawAt([3, 0.25], 0, 4) // => 3
 * drawAt([3, 0.25], 1, 0) // => 0.25
 * drawAt([], 0, 4) // => 0
 * ```
 *
 * @category peers
 * @since 0.2.0
 */
export const drawAt = (d: DrawSource, k: number, bound: number): number => {
  if (typeof d === "function") return d(bound)
  const v = d[k] ?? 0
  return bound > 0 ? ((v % bound) + bound) % bound : v
}

/**
 * A seeded generator's state (xoroshiro128+ from `pure-rand`), as plain numbers kept in a policy's
 * state.
 *
 * @category peers
 * @since 0.2.0
 */
export type RngState = ReadonlyArray<number>

/**
 * The generator state for a seed.
 *
 * @example
 * ```ts
 * import { rngFromSeed } from "@loadledger/policies"
 * rngFromSeed(1).length // => 4
 * ```
 *
 * @category peers
 * @since 0.2.0
 */
export const rngFromSeed = (seed: number): RngState => xoroshiro128plus(seed | 0).getState()

/**
 * Run `f` with a {@link DrawSource} backed by the generator state `rng`; returns `f`'s result and
 * the generator state after the draws it took (the input state is not changed).
 *
 * **When to use**: inside a `Policy.route` that calls a core taking explicit draws.
 *
 * @example
 * ```ts
 * import { rngFromSeed, withDraws } from "@loadledger/policies"
 * const rng = rngFromSeed(7)
 * const a = withDraws(rng, (d) => [d(10), d(0)])
 * const b = withDraws(rng, (d) => [d(10), d(0)])
 * a.value[0] === b.value[0] && a.value[1] === b.value[1] // => true
 * a.value[0]! >= 0 && a.value[0]! < 10 // => true
 * ```
 *
 * @category peers
 * @since 0.2.0
 */
export const withDraws = <A>(
  rng: RngState,
  f: (draw: (bound: number) => number) => A
): { readonly value: A; readonly rng: RngState } => {
  const g = xoroshiro128plusFromState(rng)
  const value = f((bound) => (bound > 0 ? uniformInt(g, 0, bound - 1) : uniformFloat64(g)))
  return { value, rng: g.getState() }
}
