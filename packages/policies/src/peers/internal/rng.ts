/**
 * The seeded draws of the peer-policy adapters: SplitMix32 over a uint32 state held in the policy
 * state (pure: the next state is returned). The cores take explicit draws; only the adapters draw.
 */

/** One draw in `[0, n)` (n >= 1) from `seed`; returns the draw and the next seed. */
export const drawBelow = (seed: number, n: number): readonly [number, number] => {
  const next = (seed + 0x9e3779b9) >>> 0
  let z = next
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0
  z = (z ^ (z >>> 16)) >>> 0
  return [Math.floor((z / 4294967296) * n), next]
}

/** `k` draws, the i-th in `[0, bounds[i])`. */
export const drawMany = (seed: number, bounds: ReadonlyArray<number>): readonly [Array<number>, number] => {
  const out: Array<number> = []
  let s = seed
  for (const n of bounds) {
    const [d, s2] = drawBelow(s, n)
    out.push(d)
    s = s2
  }
  return [out, s]
}
