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

/** `count` random unsigned 64-bit bootstrap rooms (decimal strings) from `seed`. */
export const randomRooms = (seed: number, count: number): Array<string> => {
  const next = mulberry32(seed ^ 0x9e3779b9)
  const out = new Array<string>(count)
  for (let i = 0; i < count; i++) out[i] = ((BigInt(next()) << 32n) | BigInt(next())).toString()
  return out
}
