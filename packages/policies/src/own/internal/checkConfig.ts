/**
 * The check of a `PolicyConfig` read from untyped JSON.
 *
 * @internal
 */
import { kindOf, shownValue } from "../../internal/kindOf.js"

/** A refused field. */
export interface ConfigFault {
  readonly field: string
  readonly message: string
}

const kinds = ["scored", "power-of-choices", "step-time", "upstream", "cache-affinity"]
const keys = new Set([
  "kind",
  "name",
  "terms",
  "tieBreakers",
  "choices",
  "policy",
  "kvFeasible",
  "staleAfterSeconds",
  "inclusionMarginSeconds",
  "maxIndexedBlocks",
  "wrappers"
])
const termKeys = new Set(["term", "weight", "normalise", "kvFull", "kvRoom"])
const wrappers = ["staleness", "kv-admission", "speed"]

const fault = (field: string, message: string): ConfigFault => ({ field, message })
const isRecord = (u: unknown): u is Record<string, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u)
const quoted = (xs: ReadonlyArray<string>): string => xs.join(", ")

/** A limit that must be a finite number `>= min` (`> min` when `strict`), when present. */
const checkNumber = (
  c: Record<string, unknown>,
  key: string,
  min: number,
  strict: boolean,
  integer = false
): ConfigFault | undefined => {
  const x = c[key]
  if (x === undefined) return undefined
  const ok =
    typeof x === "number" &&
    Number.isFinite(x) &&
    (strict ? x > min : x >= min) &&
    (!integer || Number.isInteger(x))
  return ok
    ? undefined
    : fault(
        key,
        `${key} must be ${integer ? "an integer" : "a finite number"} ${strict ? ">" : ">="} ${min}, got ${shownValue(x)}`
      )
}

const checkTerm = (
  t: unknown,
  at: string,
  known: Readonly<Record<string, unknown>>,
  ledger: boolean
): ConfigFault | undefined => {
  if (!isRecord(t)) return fault(at, `a term must be an object { term, weight }, got ${kindOf(t)}`)
  for (const k of Object.keys(t)) if (!termKeys.has(k)) return fault(`${at}.${k}`, `unknown key "${k}"`)
  const name = t["term"]
  if (typeof name !== "string" || !Object.hasOwn(known, name))
    return fault(
      `${at}.term`,
      `unknown term ${typeof name === "string" ? `"${name}"` : shownValue(name)} (known: ${quoted(Object.keys(known))})`
    )
  const w = t["weight"]
  if (typeof w !== "number" || !Number.isFinite(w) || w < 0)
    return fault(`${at}.weight`, `weight must be a finite number >= 0, got ${shownValue(w)}`)
  if (!ledger && known[name] === undefined && w !== 1)
    return fault(`${at}.weight`, `the ${name} term's weight is 1 (the score is in its seconds), got ${w}`)
  const n = t["normalise"]
  if (n !== undefined && (!ledger || (n !== "min-max" && n !== "max" && n !== "none")))
    return fault(
      `${at}.normalise`,
      ledger
        ? `normalise must be "min-max", "max" or "none", got ${shownValue(n)}`
        : "step-time terms are seconds: no normalise"
    )
  for (const k of ["kvFull", "kvRoom"]) {
    const x = t[k]
    if (x === undefined) continue
    if (name !== "kvPressureGate") return fault(`${at}.${k}`, `${k} is an option of kvPressureGate only`)
    if (typeof x !== "number" || !(x >= 0 && x <= 1))
      return fault(`${at}.${k}`, `${k} must be a number in 0..1, got ${shownValue(x)}`)
  }
  return undefined
}

/** The first fault of `config` as a `PolicyConfig` (`undefined` when none). */
export const checkConfig = (
  config: unknown,
  ledgerTerms: Readonly<Record<string, unknown>>,
  stepTimeTerms: Readonly<Record<string, unknown>>
): ConfigFault | undefined => {
  if (!isRecord(config)) return fault("config", `a policy config must be an object, got ${kindOf(config)}`)
  for (const k of Object.keys(config)) if (!keys.has(k)) return fault(k, `unknown key "${k}"`)
  const kind = config["kind"]
  if (typeof kind !== "string" || !kinds.includes(kind))
    return fault("kind", `kind must be one of ${quoted(kinds)}, got ${shownValue(kind)}`)
  const name = config["name"]
  if (name !== undefined && typeof name !== "string")
    return fault("name", `name must be a string, got ${kindOf(name)}`)
  const ledger = kind === "scored" || kind === "power-of-choices"
  const terms = config["terms"]
  if (ledger || kind === "step-time") {
    if (!Array.isArray(terms) || (ledger && terms.length === 0))
      return fault("terms", `terms must be a non-empty array of { term, weight }, got ${kindOf(terms)}`)
    const known = ledger ? ledgerTerms : stepTimeTerms
    for (let i = 0; i < terms.length; i++) {
      const bad = checkTerm(terms[i], `terms[${i}]`, known, ledger)
      if (bad !== undefined) return bad
    }
  } else if (terms !== undefined) return fault("terms", `a ${kind} policy takes no terms`)
  const tb = config["tieBreakers"]
  if (tb !== undefined) {
    if (!ledger) return fault("tieBreakers", `a ${kind} policy takes no tieBreakers`)
    if (!Array.isArray(tb)) return fault("tieBreakers", `tieBreakers must be an array of term names`)
    for (let i = 0; i < tb.length; i++)
      if (typeof tb[i] !== "string" || !Object.hasOwn(ledgerTerms, tb[i]))
        return fault(
          `tieBreakers[${i}]`,
          `unknown term ${shownValue(tb[i])} (known: ${quoted(Object.keys(ledgerTerms))})`
        )
  }
  if (config["choices"] !== undefined && kind !== "power-of-choices")
    return fault("choices", "choices is an option of power-of-choices only")
  const policy = config["policy"]
  if (kind === "upstream" ? policy !== "vllm-kv-pressure" : policy !== undefined)
    return fault(
      "policy",
      `policy must be "vllm-kv-pressure" for kind upstream only, got ${shownValue(policy)}`
    )
  const kv = config["kvFeasible"]
  if (kv !== undefined && typeof kv !== "boolean")
    return fault("kvFeasible", `kvFeasible must be a boolean, got ${kindOf(kv)}`)
  const limits =
    checkNumber(config, "choices", 1, false, true) ??
    checkNumber(config, "staleAfterSeconds", 0, true) ??
    checkNumber(config, "inclusionMarginSeconds", 0, false) ??
    checkNumber(config, "maxIndexedBlocks", 1, false, true)
  if (limits !== undefined) return limits
  const ws = config["wrappers"]
  if (ws === undefined) return undefined
  if (!Array.isArray(ws)) return fault("wrappers", `wrappers must be an array, got ${kindOf(ws)}`)
  for (let i = 0; i < ws.length; i++)
    if (!wrappers.includes(ws[i] as string))
      return fault(`wrappers[${i}]`, `unknown wrapper ${shownValue(ws[i])} (known: ${quoted(wrappers)})`)
  return undefined
}
