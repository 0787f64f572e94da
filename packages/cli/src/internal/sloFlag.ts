/**
 * `--slo` as the commands read it: `parseSlo` of @loadledger/sim, with two checks a user needs
 * first: a time bound without a unit is refused (`tpot=100` would be read as 100 seconds: the
 * message suggests `100ms`), and a misspelled preset gets a did-you-mean.
 *
 * @internal
 */
import { parseSlo, SLO_PRESETS, type Slo } from "@loadledger/sim"
import { unknownName } from "./names.js"

/**
 * The SLO of `text`, or a one-line `Error` naming `flag`.
 *
 * @example
 * ```ts
 * import { readSloFlag } from "./sloFlag.js"
 * readSloFlag("ttft=2s,tpot=100ms", "--slo").tpotSeconds // => 0.1
 * (() => { try { readSloFlag("ttft=2s,tpot=100", "--slo") } catch (e) { return (e as Error).message } })()
 * // => '--slo: tpot=100 has no unit (it would be read as 100 seconds): write tpot=100ms or tpot=100s'
 * ```
 */
export const readSloFlag = (text: string, flag: string): Slo => {
  const parts = text
    .split(",")
    .map((p) => p.trim())
    .filter((p) => p !== "")
  const first = parts[0]
  if (first !== undefined && !first.includes("=") && SLO_PRESETS[first] === undefined)
    throw new Error(`${flag}: ${unknownName("SLO preset", first, Object.keys(SLO_PRESETS), "slo")}`)
  for (const part of parts) {
    const m = /^(ttft|tpot|itl)\s*=\s*([0-9.eE+-]+)$/i.exec(part)
    if (m !== null)
      throw new Error(
        `${flag}: ${part} has no unit (it would be read as ${m[2]} seconds): write ${m[1]}=${m[2]}ms or ${m[1]}=${m[2]}s`
      )
  }
  const r = parseSlo(text)
  if (r._tag === "SloError") throw new Error(`${flag}: ${r.message}`)
  return r.slo
}
