/**
 * A seeded uniform stream on (0, 1) (mulberry32, public domain): deterministic for a seed, never
 * 0 or 1, so `-Math.log(u)` and Box-Muller stay finite. For the `reproduce` scenarios' synthetic
 * workloads. @internal
 */
export const seededUniform = (seed: number): (() => number) => {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return (((t ^ (t >>> 14)) >>> 0) + 0.5) / 4294967296
  }
}
