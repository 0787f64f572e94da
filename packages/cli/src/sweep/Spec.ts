/**
 * A sweep's grid spec (YAML or JSON) and its expansion into cells: traces x rates x DP sizes x front
 * ends x policies, every cell one `simulate` run with a stable id.
 *
 * The parser; the shapes are in `SpecTypes.ts`, the expansion into cells and shards in `Cells.ts`
 * (both re-exported here, so callers import one module).
 *
 * @since 0.2.0
 */

import { dirname, isAbsolute, resolve } from "node:path"
import { findPolicy, policyEntries } from "@loadledger/policies"
import type { EngineName } from "@loadledger/sim"
import { parseSlo } from "@loadledger/sim"
import { gpus, models } from "@loadledger/step-time/core"
import { parse as parseYaml } from "yaml"
import { noKvPoolMessage } from "../internal/simSetup.js"

import { frontEndLabel } from "./Cells.js"
import { type GoodputCells, SpecError, type SweepSpec } from "./SpecTypes.js"

const isObj = (u: unknown): u is Record<string, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u)
const list = (u: unknown): ReadonlyArray<unknown> => (u === undefined ? [] : Array.isArray(u) ? u : [u])
const num = (u: unknown, path: string, test: (n: number) => boolean, what: string): number => {
  if (typeof u !== "number" || !test(u))
    throw new SpecError(path, `must be ${what}, got ${JSON.stringify(u)}`)
  return u
}
const posInt = (u: unknown, path: string) =>
  num(u, path, (n) => Number.isInteger(n) && n > 0, "a positive integer")
const posNum = (u: unknown, path: string) =>
  num(u, path, (n) => Number.isFinite(n) && n > 0, "a positive number")
const str = (u: unknown, path: string): string => {
  if (typeof u !== "string" || u === "")
    throw new SpecError(path, `must be a non-empty string, got ${JSON.stringify(u)}`)
  return u
}
const known = new Set([
  "name",
  "model",
  "gpu",
  "seed",
  "limit",
  "traces",
  "rates",
  "dp",
  "frontEnds",
  "policies",
  "goodput"
])

const parseGoodput = (u: unknown): GoodputCells | undefined => {
  if (u === undefined) return undefined
  const o = typeof u === "string" ? { slo: u } : isObj(u) ? u : undefined
  if (o === undefined)
    throw new SpecError("goodput", "must be an SLO or {slo, windows?, confidence?, precision?}")
  for (const k of Object.keys(o))
    if (!["slo", "windows", "confidence", "precision"].includes(k))
      throw new SpecError(`goodput.${k}`, "unknown key (known: slo, windows, confidence, precision)")
  const sloText = str(o.slo, "goodput.slo")
  const slo = parseSlo(sloText)
  if (slo._tag === "SloError") throw new SpecError("goodput.slo", slo.message)
  const windows =
    o.windows === undefined
      ? 10
      : num(o.windows, "goodput.windows", (n) => Number.isInteger(n) && n >= 2, "an integer >= 2")
  const confidence =
    o.confidence === undefined
      ? 0.95
      : num(o.confidence, "goodput.confidence", (n) => n > 0 && n < 1, "in (0, 1), e.g. 0.95")
  const precision = o.precision === undefined ? 0.01 : posNum(o.precision, "goodput.precision")
  return { slo: slo.slo, sloText, windows, confidence, precision }
}

const baseName = (p: string) =>
  p
    .split(/[\\/]/)
    .pop()!
    .replace(/\.(jsonl|json|csv)$/i, "")

/**
 * Parse a spec's text (YAML, of which JSON is a subset) and check every field; `specFile` anchors
 * relative trace paths. Throws a {@link SpecError} naming the field; unknown keys, unknown policies,
 * models and GPUs, duplicate policies and duplicate trace names are refused.
 *
 * `policies: all` takes every registered policy.
 *
 * @example
 * ```ts
 * import { parseSpec } from "./Spec.js"
 * const spec = parseSpec("traces: [{path: /t/a.jsonl, rates: [0.1, 0.2]}]\npolicies: [total-tokens, round-robin]\n", "/s/x.yaml")
 * spec.traces[0]?.name // => "a"
 * spec.frontEnds // => [{ engine: "sglang", clients: 1 }]
 * ```
 *
 * @category sweep
 * @since 0.2.0
 */
export const parseSpec = (text: string, specFile: string): SweepSpec => {
  let doc: unknown
  try {
    doc = parseYaml(text)
  } catch (e) {
    throw new SpecError("$", `not YAML or JSON: ${e instanceof Error ? e.message.split("\n")[0] : String(e)}`)
  }
  if (!isObj(doc)) throw new SpecError("$", "the spec must be a mapping")
  for (const k of Object.keys(doc))
    if (!known.has(k)) throw new SpecError(k, `unknown key (known: ${[...known].join(", ")})`)
  const model = doc.model === undefined ? "glm-5.3" : str(doc.model, "model")
  if (models[model] === undefined)
    throw new SpecError("model", `unknown model "${model}" (known: ${Object.keys(models).join(", ")})`)
  const gpu = doc.gpu === undefined ? "h200" : str(doc.gpu, "gpu")
  if (gpus[gpu] === undefined)
    throw new SpecError("gpu", `unknown GPU "${gpu}" (known: ${Object.keys(gpus).join(", ")})`)
  // a pair with no room for a KV pool is refused before any cell runs or the output folder exists
  const noPool = noKvPoolMessage(model, gpu)
  if (noPool !== undefined) throw new SpecError("gpu", noPool)
  const seed =
    doc.seed === undefined
      ? 0
      : num(doc.seed, "seed", (n) => Number.isInteger(n) && n >= 0, "a non-negative integer")
  const limit = doc.limit === undefined ? undefined : posInt(doc.limit, "limit")
  const goodput = parseGoodput(doc.goodput)
  if (goodput !== undefined && doc.rates !== undefined)
    throw new SpecError("rates", "goodput cells find their own rate: drop `rates`")
  const topRates = list(doc.rates).map((r, i) => posNum(r, `rates[${i}]`))
  const base = dirname(resolve(specFile))
  const traces = list(doc.traces).map((t, i) => {
    const p = `traces[${i}]`
    const o = typeof t === "string" ? { path: t } : isObj(t) ? t : undefined
    if (o === undefined) throw new SpecError(p, "must be a path or {path, rates?, name?}")
    for (const k of Object.keys(o))
      if (!["path", "rates", "name"].includes(k))
        throw new SpecError(`${p}.${k}`, "unknown key (known: path, rates, name)")
    const raw = str(o.path, `${p}.path`)
    const path = isAbsolute(raw) ? raw : resolve(base, raw)
    if (goodput !== undefined && o.rates !== undefined)
      throw new SpecError(`${p}.rates`, "goodput cells find their own rate: drop `rates`")
    const rates =
      goodput !== undefined
        ? [1]
        : o.rates === undefined
          ? topRates
          : list(o.rates).map((r, j) => posNum(r, `${p}.rates[${j}]`))
    if (rates.length === 0)
      throw new SpecError(`${p}.rates`, "no rates: give `rates` here or at the top level")
    return { path, name: o.name === undefined ? baseName(raw) : str(o.name, `${p}.name`), rates }
  })
  if (traces.length === 0) throw new SpecError("traces", "at least one trace is needed")
  const names = traces.map((t) => t.name)
  names.forEach((n, i) => {
    if (names.indexOf(n) !== i)
      throw new SpecError(`traces[${i}].name`, `trace name "${n}" is used twice: give one a \`name\``)
  })
  const dp = (doc.dp === undefined ? [8] : list(doc.dp)).map((d, i) =>
    num(
      d,
      `dp[${i}]`,
      (n) => Number.isInteger(n) && n >= 1 && n <= 4096,
      "an integer from 1 to 4096 (the simulator's rank bound)"
    )
  )
  const frontEnds = (doc.frontEnds === undefined ? [{ engine: "sglang" }] : list(doc.frontEnds)).map(
    (f, i) => {
      const p = `frontEnds[${i}]`
      const o = typeof f === "string" ? { engine: f } : isObj(f) ? f : undefined
      if (o === undefined)
        throw new SpecError(p, "must be an engine name or {engine, clients?, coordinatorRows?}")
      for (const k of Object.keys(o))
        if (!["engine", "clients", "coordinatorRows"].includes(k))
          throw new SpecError(`${p}.${k}`, "unknown key (known: engine, clients, coordinatorRows)")
      if (o.engine !== "sglang" && o.engine !== "vllm")
        throw new SpecError(`${p}.engine`, `must be "sglang" or "vllm", got ${JSON.stringify(o.engine)}`)
      const engine = o.engine as EngineName
      const clients = o.clients === undefined ? 1 : posInt(o.clients, `${p}.clients`)
      const rows = o.coordinatorRows
      if (rows === undefined || rows === "extended") return { engine, clients }
      if (rows !== "vllm" && rows !== "vllm-counts")
        throw new SpecError(
          `${p}.coordinatorRows`,
          `must be "extended", "vllm" or "vllm-counts", got ${JSON.stringify(rows)}`
        )
      if (engine !== "vllm")
        throw new SpecError(
          `${p}.coordinatorRows`,
          `applies to vllm front ends only (SGLang's rows carry every field)`
        )
      return { engine, clients, coordinatorRows: rows as "vllm" | "vllm-counts" }
    }
  )
  frontEnds.forEach((f, i) => {
    if (frontEnds.findIndex((g) => frontEndLabel(g) === frontEndLabel(f)) !== i)
      throw new SpecError(`frontEnds[${i}]`, `front end "${frontEndLabel(f)}" is listed twice`)
  })
  const rawPolicies =
    doc.policies === "all"
      ? policyEntries().map((e) => e.name)
      : list(doc.policies).map((n, i) => str(n, `policies[${i}]`))
  if (rawPolicies.length === 0) throw new SpecError("policies", "at least one policy is needed (or `all`)")
  rawPolicies.forEach((n, i) => {
    if (findPolicy(n) === undefined) throw new SpecError(`policies[${i}]`, `unknown policy "${n}"`)
    if (rawPolicies.indexOf(n) !== i) throw new SpecError(`policies[${i}]`, `policy "${n}" is listed twice`)
  })
  return {
    name: doc.name === undefined ? baseName(specFile) : str(doc.name, "name"),
    model,
    gpu,
    seed,
    limit,
    traces,
    dp,
    frontEnds,
    policies: rawPolicies,
    ...(goodput === undefined ? {} : { goodput })
  }
}
