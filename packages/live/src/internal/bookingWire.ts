/**
 * The wire of the Redis bookings: the events on the channel (`p` placed, `r` released, `g` gone,
 * `s` hash rewritten) and a booking's hash value (`[rankId, inputLength]`), each read back checked.
 *
 * @internal
 */
import type { Booking } from "../Bookings.js"

/** One event on the channel, `r` the replica that sent it. @internal */
export type Event =
  | { readonly r: string; readonly o: "p"; readonly i: string; readonly k: string; readonly n: number }
  | { readonly r: string; readonly o: "r"; readonly i: string }
  | { readonly r: string; readonly o: "g" }
  /** `s`: the replica has (re)written its hash after a (re)connection: read it again. */
  | { readonly r: string; readonly o: "s" }

/** The event, checked. @internal */
export const isEvent = (x: unknown): x is Event => {
  const e = x as Record<string, unknown>
  if (typeof e !== "object" || e === null || typeof e.r !== "string") return false
  if (e.o === "g" || e.o === "s") return true
  if (typeof e.i !== "string") return false
  return (
    e.o === "r" ||
    (e.o === "p" && typeof e.k === "string" && Number.isSafeInteger(e.n) && (e.n as number) >= 0)
  )
}

/** A booking from its hash field and value, or undefined when the value is not one. @internal */
export const booking = (replica: string, requestId: string, value: string): Booking | undefined => {
  try {
    const [rankId, inputLength] = JSON.parse(value) as [unknown, unknown]
    return typeof rankId === "string" && Number.isSafeInteger(inputLength) && (inputLength as number) >= 0
      ? { replica, requestId, rankId, inputLength: inputLength as number }
      : undefined
  } catch {
    return undefined
  }
}
