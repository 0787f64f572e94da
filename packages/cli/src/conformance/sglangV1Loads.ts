/**
 * Conformance format `sglang-v1-loads-golden` (`fixtures/reference/sglang/v1_loads_snapshots.json`):
 * for every vector, reproduces `include_set` (`parseInclude`), `to_dict_error` (`validateInclude`),
 * the `response.loads` objects (`toDict` over `server_side_snapshots`), `decoded` (strict decode of
 * `response` with the vector's schema, defaults filled) or `decode_error`, and `budget_inputs`,
 * all with `@loadledger/schema`.
 *
 * @since 0.1.0
 */
import {
  budgetInputs,
  decodeLoadSnapshot,
  decodeV1Loads,
  type LoadSnapshotEra,
  loadSnapshotSchema,
  parseInclude,
  toDict,
  type V1LoadsEra,
  v1LoadsSnapshots,
  validateInclude
} from "@loadledger/schema"
import * as Schema from "effect/Schema"
import type { CaseResult, VectorFormat } from "./types.js"

type Json = Record<string, unknown>
const isObj = (x: unknown): x is Json => typeof x === "object" && x !== null && !Array.isArray(x)
const eras: ReadonlyArray<string> = ["pre-shm", "shm-v1", "shm-v2", "shm-v3"]

/** The first place where `got` differs from `want`, as `path: expected X, got Y`; undefined if equal. */
const diff = (want: unknown, got: unknown, path: string): string | undefined => {
  if (Array.isArray(want)) {
    if (!Array.isArray(got)) return `${path}: expected an array, got ${JSON.stringify(got)}`
    if (want.length !== got.length) return `${path}: expected length ${want.length}, got ${got.length}`
    for (let i = 0; i < want.length; i++) {
      const d = diff(want[i], got[i], `${path}[${i}]`)
      if (d !== undefined) return d
    }
    return undefined
  }
  if (isObj(want)) {
    if (!isObj(got)) return `${path}: expected an object, got ${JSON.stringify(got)}`
    for (const k of new Set([...Object.keys(want), ...Object.keys(got)])) {
      if (!(k in got)) return `${path}.${k}: missing`
      if (!(k in want)) return `${path}.${k}: unexpected key`
      const d = diff(want[k], got[k], `${path}.${k}`)
      if (d !== undefined) return d
    }
    return undefined
  }
  return Object.is(want, got) || want === got
    ? undefined
    : `${path}: expected ${JSON.stringify(want)}, got ${JSON.stringify(got)}`
}

const runVector = (v: Json, i: number): CaseResult => {
  const id = typeof v["id"] === "string" ? v["id"] : `vector ${i}`
  const fail = (firstDiff: string): CaseResult => ({ id, ok: false, firstDiff })
  const schema = v["schema"]
  if (typeof schema !== "string" || !eras.includes(schema)) return fail(`unknown schema ${String(schema)}`)
  const era = schema as V1LoadsEra
  const snapEra: LoadSnapshotEra = era === "pre-shm" ? "shm-v1" : era

  // include_set and to_dict_error
  const query = isObj(v["query"]) ? v["query"] : undefined
  const include = parseInclude(typeof query?.["include"] === "string" ? query["include"] : null)
  const d1 = diff(v["include_set"] ?? null, include, "include_set")
  if (d1 !== undefined) return fail(d1)
  const valid = validateInclude(include)
  const wantErr = v["to_dict_error"]
  if (typeof wantErr === "string") {
    if (valid._tag === "Success") return fail(`to_dict_error: expected "${wantErr}", got no error`)
    if (valid.failure.message !== wantErr)
      return fail(`to_dict_error: expected "${wantErr}", got "${valid.failure.message}"`)
  } else if (valid._tag === "Failure") return fail(`to_dict_error: unexpected "${valid.failure.message}"`)

  // response.loads reproduced from the server-side snapshots
  const response = v["response"]
  const server = v["server_side_snapshots"]
  if (Array.isArray(server) && isObj(response) && Array.isArray(response["loads"])) {
    const dicts: Array<unknown> = []
    for (let k = 0; k < server.length; k++) {
      const s = decodeLoadSnapshot(snapEra)(server[k])
      if (s._tag === "Failure")
        return fail(`server_side_snapshots[${k}]: ${s.failure.path}: ${s.failure.message}`)
      const d = toDict(s.success, include, snapEra)
      if (d._tag === "Failure") return fail(`to_dict: ${d.failure.message}`)
      dicts.push(d.success)
    }
    const d2 = diff(response["loads"], dicts, "response.loads")
    if (d2 !== undefined) return fail(d2)
  }

  // decoded / decode_error / budget_inputs
  if (response === null || response === undefined) {
    return v["decoded"] === null || v["decoded"] === undefined
      ? { id, ok: true }
      : fail("decoded without a response")
  }
  const decoded = decodeV1Loads(response, era)
  const wantDecodeError = v["decode_error"]
  if (typeof wantDecodeError === "string") {
    if (decoded._tag === "Success") return fail(`decode_error: expected "${wantDecodeError}", got a value`)
    // upstream (msgspec): "Object missing required field `grammar` - at `$.queues`"
    const m = /field `([^`]+)` - at `\$\.?([^`]*)`/.exec(wantDecodeError)
    const wantPath = m === null ? undefined : `$.loads[0]${m[2] ? `.${m[2]}` : ""}.${m[1]}`
    if (wantPath !== undefined && decoded.failure.path !== wantPath)
      return fail(`decode_error: expected path ${wantPath}, got ${decoded.failure.path}`)
    return { id, ok: true }
  }
  if (decoded._tag === "Failure") return fail(`decode: ${decoded.failure.path}: ${decoded.failure.message}`)
  const encode = Schema.encodeUnknownSync(loadSnapshotSchema(snapEra))
  const got = v1LoadsSnapshots(decoded.success).map((s) => encode(s))
  const d3 = diff(v["decoded"], got, "decoded")
  if (d3 !== undefined) return fail(d3)
  if (v["budget_inputs"] !== undefined) {
    const b = budgetInputs(decoded.success).map((x) => ({
      dp_rank: x.dpRank,
      timestamp_present: x.timestampPresent,
      total_requests: x.totalRequests,
      total_tokens: x.totalTokens
    }))
    const d4 = diff(v["budget_inputs"], b, "budget_inputs")
    if (d4 !== undefined) return fail(d4)
  }
  return { id, ok: true }
}

/**
 * The `sglang-v1-loads-golden` vector format.
 *
 * @example
 * ```ts
 * import { readFileSync } from "node:fs"
 * import { sglangV1Loads } from "./sglangV1Loads.js"
 * const doc = JSON.parse(readFileSync("fixtures/reference/sglang/v1_loads_snapshots.json", "utf8"))
 * sglangV1Loads.name // => "sglang-v1-loads-golden"
 * sglangV1Loads.detect(doc) // => true
 * const results = sglangV1Loads.run(doc)
 * results.length // => 18
 * results.filter((r) => !r.ok) // => []
 * ```
 *
 * @since 0.1.0
 */
export const sglangV1Loads: VectorFormat = {
  name: "sglang-v1-loads-golden",
  detect: (doc) => isObj(doc) && doc["format"] === "sglang-v1-loads-golden",
  run: (doc) => {
    const vectors = isObj(doc) && Array.isArray(doc["vectors"]) ? doc["vectors"] : []
    return vectors.map((v, i) =>
      isObj(v) ? runVector(v, i) : { id: `vector ${i}`, ok: false, firstDiff: "not an object" }
    )
  }
}
