/**
 * ISO-8601 timestamps as SGLang writes them (`datetime.now(timezone.utc).isoformat()` in the
 * `/v1/loads` envelope), to float epoch seconds, with the calendar checked.
 *
 * @since 0.3.0
 */

/**
 * Parse the envelope's ISO-8601 timestamp to float epoch seconds (microseconds kept).
 * `undefined` when absent, not ISO-8601 (`YYYY-MM-DDTHH:MM:SS[.frac][Z|±HH:MM]`), or not a real
 * calendar date and time (February 30th, hour 24, minute 60 are rejected, never rolled over).
 *
 * @example
 * ```ts
 * import { isoToEpochSeconds } from "@loadledger/schema"
 * isoToEpochSeconds("2024-01-15T10:30:00+00:00") // => 1705314600
 * isoToEpochSeconds("2024-01-15T12:30:00.5+02:00") // => 1705314600.5
 * isoToEpochSeconds("2024-02-30T00:00:00Z") // => undefined
 * ```
 *
 * **When to use**: ageing a response that has no per-rank timestamp.
 *
 * @category V1Loads
 * @since 0.1.0
 */
export const isoToEpochSeconds = (iso: string | undefined): number | undefined => {
  if (iso === undefined) return undefined
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(Z|([+-])(\d{2}):(\d{2}))?$/.exec(
    iso
  )
  if (m === null) return undefined
  const [y, mo, d, h, mi, sec] = [m[1], m[2], m[3], m[4], m[5], m[6]].map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number
  ]
  const oh = m[10] === undefined ? 0 : Number(m[10])
  const om = m[11] === undefined ? 0 : Number(m[11])
  if (h > 23 || mi > 59 || sec > 59 || oh > 23 || om > 59) return undefined
  const ms = Date.UTC(y, mo - 1, d, h, mi, sec)
  const back = new Date(ms)
  // a calendar date that does not exist (February 30th) rolls over: reject it
  if (back.getUTCFullYear() !== y || back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d)
    return undefined
  const offset = (m[9] === "-" ? -1 : 1) * (oh * 3600 + om * 60)
  return ms / 1000 - offset + (m[7] === undefined ? 0 : Number(`0${m[7]}`))
}
