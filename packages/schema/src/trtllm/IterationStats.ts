/**
 * TensorRT-LLM `trtllm-serve` iteration stats (`GET /metrics`, a JSON list) as ledger rows.
 *
 * Upstream (NVIDIA/TensorRT-LLM, read to learn the wire form; no code copied):
 * - `cpp/tensorrt_llm/executor/jsonSerialization.cpp` at 086f6921cf23611d51fdb5b06b0acc4ae97aceb8:
 *   the JSON keys of `IterationStats`, `KvCacheStats`, `InflightBatchingStats`,
 *   `StaticBatchingStats`, `SpecDecodingStats` (camelCase, absent structs serialised as `null`);
 * - `tensorrt_llm/serve/openai_server.py` at e7f7345e31e574b5d0918b756b871882c7346b3c:
 *   `GET /metrics` is `get_iteration_stats`, the list of every iteration queued since the last
 *   poll (`llm.get_stats_async`), oldest first; an empty list when none ran;
 * - `tensorrt_llm/_torch/pyexecutor/py_executor.py` (`_update_iter_stats`): the PyTorch executor
 *   fills `inflightBatchingStats` and, in newer releases, its queued-work fields
 *   (`numQueuedContextRequests`, `numQueuedCtxTokens`, ...).
 *
 * @since 0.6.0
 */
import * as Result from "effect/Result"
import { type DecodeError, decodeError } from "../DecodeError.js"
import { iterationStatsKeys, sectionKeys } from "../internal/trtllmIterationStatsKeys.js"
import type { LedgerNotice } from "../LedgerNotice.js"
import type { RankLoad } from "../RankLoad.js"

type Row = { -readonly [K in keyof RankLoad]: RankLoad[K] }

const isObj = (u: unknown): u is Record<string, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

/** A number problem, or undefined: counts are integers in 0..2^53-1, rates finite and >= 0. */
const problem = (v: number, integer: boolean): "negative-count" | "invalid-number" | undefined =>
  !Number.isFinite(v) || Math.abs(v) > Number.MAX_SAFE_INTEGER || (integer && !Number.isInteger(v))
    ? "invalid-number"
    : v < 0
      ? "negative-count"
      : undefined

/** The modelled numbers of one entry, by wire path below the entry. */
interface Read {
  readonly values: Map<string, number>
  readonly bad?: { readonly reason: "negative-count" | "invalid-number"; readonly message: string }
}

// (wire path below an entry, is a count)
const modelled: ReadonlyArray<readonly [string, boolean]> = [
  ["iter", true],
  ["numActiveRequests", true],
  ["numQueuedRequests", true],
  ["maxNumActiveRequests", true],
  ["kvCacheStats.maxNumBlocks", true],
  ["kvCacheStats.freeNumBlocks", true],
  ["kvCacheStats.usedNumBlocks", true],
  ["kvCacheStats.tokensPerBlock", true],
  ["kvCacheStats.cacheHitRate", false],
  ["inflightBatchingStats.numPausedRequests", true]
]

const readEntry = (e: Record<string, unknown>, at: string): Result.Result<Read, DecodeError> => {
  const values = new Map<string, number>()
  let bad: Read["bad"]
  for (const section of [
    "kvCacheStats",
    "inflightBatchingStats",
    "staticBatchingStats",
    "specDecodingStats"
  ]) {
    const s = e[section]
    if (s !== undefined && s !== null && !isObj(s))
      return Result.fail(
        decodeError("InvalidField", "Expected an object or null", { path: `${at}.${section}` })
      )
  }
  for (const [path, integer] of modelled) {
    const [a, b] = path.split(".") as [string, string | undefined]
    const v = b === undefined ? e[a] : (e[a] as Record<string, unknown> | null | undefined)?.[b]
    if (v === undefined || v === null) continue
    if (typeof v !== "number")
      return Result.fail(decodeError("InvalidField", "Expected number", { path: `${at}.${path}` }))
    const p = problem(v, integer)
    if (p === undefined) values.set(path, v)
    else if (path === "iter")
      return Result.fail(
        decodeError("InvalidField", `Expected an iteration number, got ${v}`, { path: `${at}.iter` })
      )
    else if (bad === undefined) bad = { reason: p, message: `${at}.${path} is ${String(v)}` }
  }
  return Result.succeed(bad === undefined ? { values } : { values, bad })
}

const rowOf = (v: ReadonlyMap<string, number>): RankLoad => {
  const row: Row = { dpRank: 0 }
  const set = (field: keyof Row, key: string) => {
    const x = v.get(key)
    if (x !== undefined) (row as Record<string, unknown>)[field] = x
  }
  set("numRunningReqs", "numActiveRequests")
  set("numWaitingReqs", "numQueuedRequests")
  set("maxRunningRequests", "maxNumActiveRequests")
  set("numPausedReqs", "inflightBatchingStats.numPausedRequests")
  set("prefixCacheHitRate", "kvCacheStats.cacheHitRate")
  const tpb = v.get("kvCacheStats.tokensPerBlock")
  const max = v.get("kvCacheStats.maxNumBlocks")
  const used = v.get("kvCacheStats.usedNumBlocks")
  const free = v.get("kvCacheStats.freeNumBlocks")
  if (tpb !== undefined) {
    if (used !== undefined) row.numUsedTokens = used * tpb
    if (max !== undefined) row.maxTotalNumTokens = max * tpb
    if (free !== undefined) row.kvAvailableTokens = free * tpb
  }
  if (used !== undefined && max !== undefined && max > 0) row.kvCacheUsage = used / max
  return row
}

const noteUnknownKeys = (list: ReadonlyArray<Record<string, unknown>>, notices: Array<LedgerNotice>) => {
  const counts = new Map<string, number>()
  const bump = (k: string) => counts.set(k, (counts.get(k) ?? 0) + 1)
  for (const e of list)
    for (const [k, v] of Object.entries(e)) {
      if (!iterationStatsKeys.has(k)) bump(k)
      const known = sectionKeys.get(k)
      if (known !== undefined && isObj(v))
        for (const s of Object.keys(v)) if (!known.has(s)) bump(`${k}.${s}`)
    }
  for (const [field, entries] of counts)
    notices.push({
      _tag: "UnknownField",
      field,
      entries,
      message: `TensorRT-LLM iteration stats key ${field} (in ${entries} entries) is not read`
    })
}

/**
 * Decode a parsed `trtllm-serve` `GET /metrics` body (a JSON list of per-iteration
 * `IterationStats`, oldest first; a lone `IterationStats` object is read as a list of one) to
 * ledger rows, pushing notices onto `notices`.
 *
 * **Rows**: the latest iteration (greatest `iter`, else the last entry) gives **one** row: the
 * stats carry no rank (no rank key in the serialiser at the pinned commit, attention DP or not),
 * so it is rank 0 with a `DefaultedIdentity` notice. Fields: `numActiveRequests` ->
 * `numRunningReqs`, `numQueuedRequests` -> `numWaitingReqs`, `maxNumActiveRequests` ->
 * `maxRunningRequests`, `inflightBatchingStats.numPausedRequests` -> `numPausedReqs`,
 * `kvCacheStats.cacheHitRate` -> `prefixCacheHitRate`; with `kvCacheStats.tokensPerBlock`,
 * `usedNumBlocks` / `maxNumBlocks` / `freeNumBlocks` times it -> `numUsedTokens` /
 * `maxTotalNumTokens` / `kvAvailableTokens` (tokens); `usedNumBlocks / maxNumBlocks` ->
 * `kvCacheUsage` (when `maxNumBlocks` > 0). Absent or `null` is absent, never 0. `timestamp` is
 * not read (upstream's is local wall-clock text without a zone). An empty list gives no rows.
 *
 * **Bad input**: an entry that is no object, a modelled key that is no number (or `null`), a
 * section that is no object, or a bad `iter` is an `InvalidField` error naming its path
 * (`$[2].kvCacheStats.usedNumBlocks`); a negative or non-integer count makes the row `unknown`
 * (`negative-count` / `invalid-number`, the message naming the path); two entries with the latest
 * `iter` make it `unknown` (`duplicate-rank`). Keys upstream does not define give an `UnknownField`
 * notice each (`kvCacheStats.foo` for a section's); upstream keys not modelled are read silently.
 *
 * **When to use**: through `decodeLedger(text, "trtllm-iteration-stats")` (or `auto`); directly
 * when the body is already parsed.
 *
 * @example
 * ```ts
 * import { decodeTrtllmIterationStats } from "@loadledger/schema"
 * const notices: Array<unknown> = []
 * const r = decodeTrtllmIterationStats([{ iter: 7, numActiveRequests: 3, numQueuedRequests: 1, kvCacheStats: { maxNumBlocks: 100, usedNumBlocks: 25, freeNumBlocks: 75, tokensPerBlock: 32 } }], notices as never)
 * r._tag === "Success" && r.success // => [{ dpRank: 0, numRunningReqs: 3, numWaitingReqs: 1, numUsedTokens: 800, maxTotalNumTokens: 3200, kvAvailableTokens: 2400, kvCacheUsage: 0.25 }]
 * ```
 *
 * @category TensorRT-LLM
 * @since 0.6.0
 */
export const decodeTrtllmIterationStats = (
  doc: unknown,
  notices: Array<LedgerNotice>
): Result.Result<Array<RankLoad>, DecodeError> => {
  const single = isObj(doc)
  if (!single && !Array.isArray(doc))
    return Result.fail(decodeError("InvalidField", "Expected a list of iteration stats", { path: "$" }))
  const list: ReadonlyArray<unknown> = single ? [doc] : (doc as ReadonlyArray<unknown>)
  const at = (i: number) => (single ? "$" : `$[${i}]`)
  const entries: Array<Record<string, unknown>> = []
  const reads: Array<Read> = []
  for (let i = 0; i < list.length; i++) {
    const e = list[i]
    if (!isObj(e))
      return Result.fail(decodeError("InvalidField", "Expected an IterationStats object", { path: at(i) }))
    const r = readEntry(e, at(i))
    if (Result.isFailure(r)) return Result.fail(r.failure)
    entries.push(e)
    reads.push(r.success)
  }
  noteUnknownKeys(entries, notices)
  if (reads.length === 0) return Result.succeed([])
  // the latest iteration: the greatest `iter`, else the last entry (the list is oldest first)
  let latest = reads.length - 1
  let iter = -1
  for (let i = 0; i < reads.length; i++) {
    const n = reads[i]!.values.get("iter")
    if (n !== undefined && n >= iter) {
      iter = n
      latest = i
    }
  }
  const twice = iter < 0 ? [] : reads.flatMap((r, i) => (r.values.get("iter") === iter ? [i] : []))
  notices.push({
    _tag: "DefaultedIdentity",
    dpRank: 0,
    path: at(latest),
    message: `${at(latest)}: TensorRT-LLM iteration stats carry no rank: the latest iteration is read as rank 0`
  })
  if (twice.length > 1)
    return Result.succeed([
      {
        dpRank: 0,
        unknown: {
          reason: "duplicate-rank",
          message: `${twice.map(at).join(", ")} all report iter ${iter}`
        }
      }
    ])
  const r = reads[latest]!
  if (r.bad !== undefined) return Result.succeed([{ dpRank: 0, unknown: { ...r.bad } }])
  return Result.succeed([rowOf(r.values)])
}

/**
 * Whether a parsed JSON value has the shape of a `trtllm-serve` `/metrics` body: a list whose
 * first entry (or a lone object that) carries `numActiveRequests`, `numQueuedRequests`,
 * `iterLatencyMS` or `kvCacheStats`, keys no SGLang `/get_load` entry has. An empty list is not claimed.
 *
 * **When to use**: `decodeLedger`'s `auto` detection; a caller sniffing a body.
 *
 * @example
 * ```ts
 * import { looksLikeTrtllmIterationStats } from "@loadledger/schema"
 * looksLikeTrtllmIterationStats([{ iter: 1, numActiveRequests: 0 }]) // => true
 * looksLikeTrtllmIterationStats([{ dp_rank: 0, num_reqs: 1 }]) // => false
 * ```
 *
 * @category TensorRT-LLM
 * @since 0.6.0
 */
export const looksLikeTrtllmIterationStats = (doc: unknown): boolean => {
  const first = Array.isArray(doc) ? doc[0] : doc
  return (
    isObj(first) &&
    ["numActiveRequests", "numQueuedRequests", "iterLatencyMS", "kvCacheStats"].some((k) => k in first)
  )
}
