/**
 * A sweep's grid spec (YAML or JSON) and its expansion into cells: traces x rates x DP sizes x front
 * ends x policies, every cell one `simulate` run with a stable id.
 *
 * Over 300 lines: one concept, the grid (its spec's validation, one message per bad key, makes up
 * half; the cell ids and shards the other half); splitting the parser from the expansion would leave
 * two files that change together.
 *
 * @since 0.2.0
 */

import { dirname, isAbsolute, resolve } from "node:path"
import { findPolicy, policyEntries } from "@loadledger/policies"
import type { EngineName } from "@loadledger/sim"
import { type CoordinatorRows, parseSlo, type Slo } from "@loadledger/sim"
import { gpus, models } from "@loadledger/step-time/core"
import { parse as parseYaml } from "yaml"
import { noKvPoolMessage } from "../internal/simSetup.js"

/**
 * One cell of a sweep: everything `simulate` needs, as plain data (it crosses worker threads and is
 * written next to its result). `trace` is an absolute path; `rate` scales the arrival rate (in a
 * goodput cell: 1, the first multiplier the search probes);
 * `coordinatorRows` (since 0.4.0, vLLM only) is the simulator's `coordinatorRows`, absent for its
 * default `"extended"`.
 *
 * @category sweep
 * @since 0.2.0
 */
export interface Cell {
  readonly id: string
  readonly trace: string
  readonly traceName: string
  readonly rate: number
  readonly limit?: number | undefined
  readonly dp: number
  readonly engine: EngineName
  readonly frontEnds: number
  readonly coordinatorRows?: Exclude<CoordinatorRows, "extended"> | undefined
  readonly policy: string
  readonly model: string
  readonly gpu: string
  readonly seed: number
  /** Goodput cells only (since 0.5.0): the search, see {@link GoodputCells}. */
  readonly goodput?: GoodputCells | undefined
}

/**
 * A sweep of goodput cells (since 0.5.0): instead of one replay at each rate, each cell finds its
 * policy's goodput under `slo` (the largest rate multiplier at which the SLO is met) on each of
 * `windows` disjoint windows of the trace, by bisection to within `1 + precision`, as `loadledger
 * goodput` does; every (trace, DP, front end) block also gets the clairvoyant reference and the
 * balance bound, and the summary ranks each block with `confidence` intervals and paired verdicts.
 * `sloText` is the spec's own `slo` (a preset name or `ttft=…,tpot=…`).
 *
 * @category sweep
 * @since 0.5.0
 */
export interface GoodputCells {
  readonly slo: Slo
  readonly sloText: string
  readonly windows: number
  readonly confidence: number
  readonly precision: number
}

/**
 * The reference subjects a goodput sweep adds to every block, as cell policy names.
 *
 * @example
 * ```ts
 * import { GOODPUT_REFERENCES } from "./Spec.js"
 * GOODPUT_REFERENCES // => ["clairvoyant", "balance-bound"]
 * ```
 *
 * @category sweep
 * @since 0.5.0
 */
export const GOODPUT_REFERENCES: ReadonlyArray<string> = ["clairvoyant", "balance-bound"]

/**
 * A parsed and checked grid spec. Trace paths are absolute (relative ones are resolved against the
 * spec file's folder, as in docker-compose). A vLLM front-end entry may name the rows its front ends
 * are handed (`coordinatorRows`, since 0.4.0: `vllm` or `vllm-counts`, see the simulator's
 * `CoordinatorRows`; absent = the simulator's default, `extended`).
 *
 * @category sweep
 * @since 0.2.0
 */
export interface SweepSpec {
  readonly name: string
  readonly model: string
  readonly gpu: string
  readonly seed: number
  readonly limit?: number | undefined
  readonly traces: ReadonlyArray<{
    readonly path: string
    readonly name: string
    readonly rates: ReadonlyArray<number>
  }>
  readonly dp: ReadonlyArray<number>
  readonly frontEnds: ReadonlyArray<{
    readonly engine: EngineName
    readonly clients: number
    readonly coordinatorRows?: Exclude<CoordinatorRows, "extended"> | undefined
  }>
  readonly policies: ReadonlyArray<string>
  /** Present when the cells are goodput cells (since 0.5.0); then no trace has `rates`. */
  readonly goodput?: GoodputCells | undefined
}

/**
 * Why a spec was refused: `path` names the field (`traces[1].rates[0]`).
 *
 * @example
 * ```ts
 * import { parseSpec, SpecError } from "./Spec.js"
 * const error = (() => {
 *   try {
 *     return parseSpec("traces: [{path: a.jsonl, rates: [0.1]}]\npolicies: [no-such-policy]\n", "/s/x.yaml")
 *   } catch (e) {
 *     return e
 *   }
 * })()
 * error instanceof SpecError // => true
 * ;(error as SpecError).path // => "policies[0]"
 * ;(error as SpecError).message // => 'policies[0]: unknown policy "no-such-policy"'
 * ```
 *
 * @category sweep
 * @since 0.2.0
 */
export class SpecError extends Error {
  readonly _tag = "SpecError"
  constructor(
    readonly path: string,
    message: string
  ) {
    super(`${path}: ${message}`)
  }
}

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

const slug = (s: string) => s.replace(/[^A-Za-z0-9._-]+/g, "~")

/**
 * How tables name a front-end entry: `"vllm x4"`, and for rows other than the simulator's default
 * `"vllm x4, vllm rows"` / `"vllm x4, vllm-counts rows"` (each its own block).
 *
 * @example
 * ```ts
 * import { frontEndLabel } from "./Spec.js"
 * frontEndLabel({ engine: "sglang", clients: 1 }) // => "sglang x1"
 * frontEndLabel({ engine: "vllm", clients: 4, coordinatorRows: "vllm" }) // => "vllm x4, vllm rows"
 * ```
 *
 * @category sweep
 * @since 0.4.0
 */
export const frontEndLabel = (f: {
  readonly engine: string
  readonly clients?: number | undefined
  readonly frontEnds?: number | undefined
  readonly coordinatorRows?: string | undefined
}): string =>
  `${f.engine} x${f.clients ?? f.frontEnds}${f.coordinatorRows === undefined ? "" : `, ${f.coordinatorRows} rows`}`

/**
 * Every cell of the grid, in a fixed order (trace, rate, DP, front end, policy) with ids that are
 * stable across runs and machines (they name the cell's JSON file).
 *
 * @example
 * ```ts
 * import { expandCells, parseSpec } from "./Spec.js"
 * const spec = parseSpec("traces: [{path: /t/a.jsonl}]\nrates: [0.1]\npolicies: [total-tokens, vllm-kv-pressure]\nfrontEnds: [sglang, {engine: vllm, clients: 4}]\n", "/s/x.yaml")
 * expandCells(spec).map((c) => c.id)
 * // => ["a_r0.1_dp8_sglang1_total-tokens", "a_r0.1_dp8_sglang1_vllm-kv-pressure", "a_r0.1_dp8_vllm4_total-tokens", "a_r0.1_dp8_vllm4_vllm-kv-pressure"]
 * const honest = parseSpec("traces: [{path: /t/a.jsonl}]\nrates: [0.1]\npolicies: [total-tokens]\nfrontEnds: [{engine: vllm, clients: 4, coordinatorRows: vllm}]\n", "/s/x.yaml")
 * expandCells(honest)[0]?.id // => "a_r0.1_dp8_vllm4-vllmrows_total-tokens"
 * expandCells(honest)[0]?.coordinatorRows // => "vllm"
 * ```
 *
 * @category sweep
 * @since 0.2.0
 */
export const expandCells = (spec: SweepSpec): ReadonlyArray<Cell> => {
  const cells: Array<Cell> = []
  for (const t of spec.traces)
    for (const rate of t.rates)
      for (const dp of spec.dp)
        for (const fe of spec.frontEnds)
          for (const policy of spec.goodput === undefined
            ? spec.policies
            : [...spec.policies, ...GOODPUT_REFERENCES])
            cells.push({
              id: `${slug(t.name)}_${spec.goodput === undefined ? `r${rate}` : "goodput"}_dp${dp}_${fe.engine}${fe.clients}${fe.coordinatorRows === undefined ? "" : `-${fe.coordinatorRows}rows`}_${slug(policy)}`,
              trace: t.path,
              traceName: t.name,
              rate,
              limit: spec.limit,
              dp,
              engine: fe.engine,
              frontEnds: fe.clients,
              ...(fe.coordinatorRows === undefined ? {} : { coordinatorRows: fe.coordinatorRows }),
              policy,
              model: spec.model,
              gpu: spec.gpu,
              seed: spec.seed,
              ...(spec.goodput === undefined ? {} : { goodput: spec.goodput })
            })
  return cells
}

/**
 * Parse `i/n` (1-based shard `i` of `n`); the shard holds cells `k` (0-based, grid order) with
 * `k % n === i - 1`, so the shards partition the grid whatever its size.
 *
 * @example
 * ```ts
 * import { parseShard, inShard } from "./Spec.js"
 * const s = parseShard("2/3") // => { index: 2, count: 3 }
 * const mine = [0, 1, 2, 3, 4].filter((k) => inShard(s, k)) // => [1, 4]
 * ```
 *
 * @category sweep
 * @since 0.2.0
 */
export const parseShard = (text: string): { readonly index: number; readonly count: number } => {
  const m = /^(\d+)\/(\d+)$/.exec(text.trim())
  const index = Number(m?.[1])
  const count = Number(m?.[2])
  if (m === null || count < 1 || index < 1 || index > count)
    throw new SpecError("--shard", `must be i/n with 1 <= i <= n, got "${text}"`)
  return { index, count }
}

/**
 * Whether grid cell number `k` (0-based) belongs to `shard`.
 *
 * @example
 * ```ts
 * import { inShard } from "./Spec.js"
 * const first = { index: 1, count: 2 }
 * ;[0, 1, 2, 3, 4].filter((k) => inShard(first, k)) // => [0, 2, 4]
 * ```
 *
 * @category sweep
 * @since 0.2.0
 */
export const inShard = (shard: { readonly index: number; readonly count: number }, k: number): boolean =>
  k % shard.count === shard.index - 1
