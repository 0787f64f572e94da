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
