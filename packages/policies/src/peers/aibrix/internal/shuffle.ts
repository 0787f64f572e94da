/**
 * Go's `rand.Shuffle` (Fisher-Yates from the end, `draw(i + 1)` picks the swap partner of `i`), as
 * the AIBrix gateway shuffles the ready pods before routing (`rand.Shuffle` for the load routers,
 * `CryptoShuffle` for the SLO queue: the same loop over another source of draws). Returns a copy.
 *
 * @internal
 */
export const shuffle = <A>(xs: ReadonlyArray<A>, draw: (bound: number) => number): Array<A> => {
  const out = [...xs]
  for (let i = out.length - 1; i >= 1; i--) {
    const j = draw(i + 1)
    const t = out[i]!
    out[i] = out[j]!
    out[j] = t
  }
  return out
}
