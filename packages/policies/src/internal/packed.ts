/**
 * A packed array of `n` copies of `value`. `new Array(n).fill(value)` makes a holey array, and
 * every later `slice` of it stays holey: element loads then check for holes and `Math.max` over
 * them takes a slow generic path (several times slower per element in the routing loops).
 *
 * @internal
 */
export const packed = <A>(n: number, value: A): Array<A> => {
  const out: Array<A> = []
  for (let i = 0; i < n; i++) out.push(value)
  return out
}

/** Zeros stored as doubles (a 0.5 written first makes the storage hold doubles), grown on demand. */
let doubleZeros: Array<number> = []

/**
 * `n` zeros in a packed array that stores doubles, exactly `n` long: a slice of a shared array of
 * zeros (one allocation). `packed(n, 0)` stores small integers, grows its storage in steps (17
 * slots for 8, 12 reallocations for 1,024) and, when a fractional number is written into it,
 * allocates its storage again as doubles.
 *
 * @internal
 */
export const doubles = (n: number): Array<number> => {
  if (doubleZeros.length < n) {
    doubleZeros = [0.5]
    for (let i = 1; i < n; i++) doubleZeros.push(0)
    doubleZeros[0] = 0
  }
  return doubleZeros.slice(0, n)
}
