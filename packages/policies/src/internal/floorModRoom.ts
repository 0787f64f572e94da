/**
 * Python's `room % n` for SGLang's FOLLOW_BOOTSTRAP_ROOM, shared by `DpController.schedule` and the
 * policy's fast path.
 *
 * @internal
 */

const isSpace = (c: number): boolean => c === 32 || (c >= 9 && c <= 13)

const pow10 = [1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15]

let chunkFor = 0
let chunkDigits = 1

/**
 * Digits per step for `n`: the most (up to 15) with `n * 10^k <= 2^52`, so every step (and the
 * quotient times `n` in {@link mod}) stays exact.
 */
const digitsPerStep = (n: number): number => {
  if (n === chunkFor) return chunkDigits
  let k = 1
  while (k < 15 && n * pow10[k + 1]! <= 2 ** 52) k++
  chunkFor = n
  chunkDigits = k
  return k
}

/** `x mod n` for integers `0 <= x < 2^52`, `n < 2^52`: a division instead of `fmod` (exact: the
 * quotient is off by at most one and corrected). */
const mod = (x: number, n: number): number => {
  const r = x - Math.floor(x / n) * n
  return r < 0 ? r + n : r >= n ? r - n : r
}

/**
 * Python's `room % n` (result in `[0, n)`) for a room given as a bigint or a decimal string (optional
 * sign, surrounding ASCII whitespace), exact at any length: a string is reduced `k` digits at a time
 * (`r = (10^k r + chunk) mod n` stays below 2^52 by the choice of `k`; `k = 1` for n >= 2^48
 * is the digit-by-digit reduction with `%`), a bigint with BigInt arithmetic. `undefined` when the string is
 * not an integer.
 *
 * @internal
 */
export const floorModRoom = (room: string | bigint, n: number): number | undefined => {
  if (typeof room === "bigint") {
    const m = BigInt(n)
    return Number(((room % m) + m) % m)
  }
  let i = 0
  let end = room.length
  while (i < end && isSpace(room.charCodeAt(i))) i++
  while (end > i && isSpace(room.charCodeAt(end - 1))) end--
  const sign = room.charCodeAt(i)
  const negative = sign === 45 // "-"
  if (negative || sign === 43) i++ // "+"
  if (i >= end) return undefined
  let r = 0
  const k = digitsPerStep(n)
  if (k === 1) {
    for (; i < end; i++) {
      const d = room.charCodeAt(i) - 48
      if (d < 0 || d > 9) return undefined
      r = (r * 10 + d) % n
    }
  } else {
    let chunk = 0
    let m = 0
    for (; i < end; i++) {
      const d = room.charCodeAt(i) - 48
      if (d < 0 || d > 9) return undefined
      chunk = chunk * 10 + d
      if (++m === k) {
        r = mod(r * pow10[k]! + chunk, n)
        chunk = 0
        m = 0
      }
    }
    if (m > 0) r = mod(r * pow10[m]! + chunk, n)
  }
  return negative && r !== 0 ? n - r : r
}
