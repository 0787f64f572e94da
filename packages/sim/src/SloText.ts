/**
 * The text form of an SLO: `parseSlo` reads a preset name (`SLO_PRESETS`), optionally followed by
 * overrides, or `ttft=2s,tpot=100ms[,attain=0.9][,itl=500ms][,criterion=joint|p99]`.
 *
 * @since 0.5.0
 */
import { checkSlo, SLO_PRESETS, type Slo, type SloError } from "./Slo.js"

const sloError = (field: string, message: string): SloError => ({ _tag: "SloError", field, message })

/** `2s`, `100ms`, `0.5` (seconds), `1500us` -> seconds; undefined when not a time. */
const parseSeconds = (text: string): number | undefined => {
  const m = /^([0-9]*\.?[0-9]+(?:e[+-]?[0-9]+)?)\s*(s|ms|us|µs)?$/i.exec(text.trim())
  if (!m) return undefined
  const v = Number(m[1])
  const unit = (m[2] ?? "s").toLowerCase()
  return unit === "s" ? v : unit === "ms" ? v / 1000 : v / 1e6
}

/**
 * Read an SLO from a preset name (`SLO_PRESETS`) or the text form
 * `ttft=2s,tpot=100ms[,attain=0.9][,itl=500ms][,criterion=joint|p99]` (times in `s`, `ms` or `us`,
 * bare numbers in seconds; `attain` a share, default 0.9, or a percentage such as `99%`; criterion
 * default `joint`). A preset name may be followed by overrides: `mlperf-llama2-70b,attain=0.95`.
 *
 * @example
 * ```ts
 * import { parseSlo } from "@loadledger/sim"
 * const s = parseSlo("ttft=2s,tpot=100ms,attain=0.9")
 * s._tag === "Slo" && s.slo.tpotSeconds // => 0.1
 * const p = parseSlo("mlperf-llama2-70b")
 * p._tag === "Slo" && p.slo.criterion // => "p99"
 * parseSlo("ttft=2s")._tag // => "SloError"
 * ```
 *
 * @category slo
 * @since 0.5.0
 */
export const parseSlo = (text: string): { readonly _tag: "Slo"; readonly slo: Slo } | SloError => {
  if (typeof text !== "string" || text.trim() === "")
    return sloError("slo", "an SLO is a preset name or ttft=…,tpot=…")
  const parts = text
    .split(",")
    .map((p) => p.trim())
    .filter((p) => p !== "")
  let base: Partial<{ -readonly [K in keyof Slo]: Slo[K] }> = {}
  if (parts[0] !== undefined && !parts[0].includes("=")) {
    const preset = SLO_PRESETS[parts[0]]
    if (preset === undefined)
      return sloError(
        "slo",
        `unknown SLO preset ${JSON.stringify(parts[0])} (known: ${Object.keys(SLO_PRESETS).join(", ")})`
      )
    base = { ...preset }
    parts.shift()
  }
  let overridden = false
  for (const part of parts) {
    const eq = part.indexOf("=")
    if (eq < 0) return sloError("slo", `expected key=value, got ${JSON.stringify(part)}`)
    const key = part.slice(0, eq).trim().toLowerCase()
    const value = part.slice(eq + 1).trim()
    overridden = true
    if (key === "ttft" || key === "tpot" || key === "itl") {
      const s = parseSeconds(value)
      if (s === undefined || !(s > 0))
        return sloError(
          key,
          `${key} must be a positive time such as 2s or 100ms, got ${JSON.stringify(value)}`
        )
      base[key === "ttft" ? "ttftSeconds" : key === "tpot" ? "tpotSeconds" : "itlSeconds"] = s
    } else if (key === "attain" || key === "attainment") {
      const pct = value.endsWith("%")
      const v = Number(pct ? value.slice(0, -1) : value) / (pct ? 100 : 1)
      if (!(v > 0 && v <= 1))
        return sloError(
          "attain",
          `attain must be a share in (0, 1] or a percentage, got ${JSON.stringify(value)}`
        )
      base.attainment = v
    } else if (key === "criterion") {
      if (value !== "joint" && value !== "p99")
        return sloError("criterion", `criterion must be joint or p99, got ${JSON.stringify(value)}`)
      base.criterion = value
    } else
      return sloError("slo", `unknown SLO key ${JSON.stringify(key)} (ttft, tpot, itl, attain, criterion)`)
  }
  if (base.ttftSeconds === undefined) return sloError("ttft", "the SLO needs a ttft bound, e.g. ttft=2s")
  if (base.tpotSeconds === undefined) return sloError("tpot", "the SLO needs a tpot bound, e.g. tpot=100ms")
  const slo: Slo = {
    ttftSeconds: base.ttftSeconds,
    tpotSeconds: base.tpotSeconds,
    itlSeconds: base.itlSeconds,
    attainment: base.attainment ?? 0.9,
    criterion: base.criterion ?? "joint",
    name: base.name === undefined ? undefined : overridden ? `${base.name} (overridden)` : base.name,
    source: base.source
  }
  const bad = checkSlo(slo)
  return bad ?? { _tag: "Slo", slo }
}
