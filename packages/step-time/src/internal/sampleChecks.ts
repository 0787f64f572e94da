/**
 * The input check every fit runs first (`fit`, `fitShape`): at least one sample, each with a
 * positive, finite measured step time.
 *
 * @internal
 */
import type { CalibrationError, CalibrationSample } from "../CalibrationTypes.js"

/** The first problem with `samples`, or `undefined` when there is none. */
export const checkSamples = (samples: ReadonlyArray<CalibrationSample>): CalibrationError | undefined => {
  if (samples.length === 0) return { _tag: "CalibrationError", field: "samples", message: "no samples" }
  const bad = samples.findIndex((s) => !(s.measuredSeconds > 0) || !Number.isFinite(s.measuredSeconds))
  return bad >= 0
    ? {
        _tag: "CalibrationError",
        field: "measuredSeconds",
        row: bad,
        message: "measured step time must be a positive number of seconds"
      }
    : undefined
}
