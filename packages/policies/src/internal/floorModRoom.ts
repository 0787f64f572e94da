/**
 * Python's `room % n` for SGLang's FOLLOW_BOOTSTRAP_ROOM, shared by `DpController.schedule` and the
 * policy's fast path.
 *
 * @internal
 */

const isSpace = (c: number): boolean => c === 32 || (c >= 9 && c <= 13)

/**
 * Python's `room % n` (result in `[0, n)`) for a room given as a bigint or a decimal string (optional
 * sign, surrounding ASCII whitespace), exact at any length: a string is reduced digit by digit
 * (`r = (10 r + d) mod n` stays below 2^53 for n < 2^49), a bigint with BigInt arithmetic.
 * `undefined` when the string is not an integer.
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
  for (; i < end; i++) {
    const d = room.charCodeAt(i) - 48
    if (d < 0 || d > 9) return undefined
    r = (r * 10 + d) % n
  }
  return negative && r !== 0 ? n - r : r
}
