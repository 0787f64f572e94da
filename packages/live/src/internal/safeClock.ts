/**
 * The live router's clock guard: an injected `clock` that throws, or answers something other than
 * a finite number, never reaches the router's state or crashes a poll, a route or a finish.
 *
 * @internal
 */

/** What a guarded clock reports about one bad reading (the router keeps the last good one). @internal */
export interface ClockFault {
  readonly _tag: "ClockFault"
  readonly field: "clock"
  readonly message: string
}

/**
 * `clock` wrapped so a reading never throws: a throw or a non-finite / non-number answer yields the
 * last good reading (the default clock, `performance.now() / 1000`, before any good one), and is
 * handed to `onFault` as a `ClockFault` naming `clock`. Readings never go backwards past the last
 * good one, so a fallback cannot make charges look newer than they are. O(1).
 *
 * @internal
 */
export const safeClock = (
  clock: (() => number) | undefined,
  onFault: (fault: ClockFault) => void = () => {}
): (() => number) => {
  const fallback = (): number => performance.now() / 1000
  if (clock === undefined) return fallback
  let last = Number.NaN
  return () => {
    let t: unknown
    try {
      t = clock()
    } catch (e) {
      onFault({ _tag: "ClockFault", field: "clock", message: `clock threw: ${String(e)}` })
      return Number.isNaN(last) ? fallback() : last
    }
    if (typeof t !== "number" || !Number.isFinite(t)) {
      onFault({
        _tag: "ClockFault",
        field: "clock",
        message: `clock must answer a finite number, got ${String(t)}`
      })
      return Number.isNaN(last) ? fallback() : last
    }
    last = t
    return t
  }
}
