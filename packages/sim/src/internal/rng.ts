/** mulberry32: a small seeded 32-bit generator (public domain). Deterministic for a given seed. */
export const mulberry32 = (seed: number): (() => number) => {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return (t ^ (t >>> 14)) >>> 0
  }
}

/**
 * Random unsigned 64-bit bootstrap rooms (decimal strings) from `seed`, one per call: the i-th call
 * gives request i's room (drawn as requests arrive, in trace order, so none is held before its
 * request exists).
 */
export const roomStream = (seed: number): (() => string) => {
  const next = mulberry32(seed ^ 0x9e3779b9)
  return () => ((BigInt(next()) << 32n) | BigInt(next())).toString()
}

/** The first `count` rooms of `roomStream(seed)`. */
export const randomRooms = (seed: number, count: number): Array<string> => {
  const next = roomStream(seed)
  return Array.from({ length: count }, next)
}
