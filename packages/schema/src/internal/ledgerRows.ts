/**
 * Shared steps of every ledger projection: building rows field by field, the unknown-rank audit
 * (S08), and scrubbing bad numbers out of a JSON entry before its strict Schema sees it.
 */
import type { LedgerNotice } from "../LedgerNotice.js"
import type { RankLoad, RankUnknownReason } from "../RankLoad.js"
import { badNumberMessage, firstBadNumber, numberProblem } from "./numbers.js"

export type Mutable = { -readonly [K in keyof RankLoad]: RankLoad[K] }
export type Field = Exclude<keyof RankLoad, "dpRank" | "worker" | "workerDpRank" | "unknown">

/** Copy the numeric `keys` of `src` (same names) onto `row`, when present. */
export const pickNumbers = (src: object, keys: ReadonlyArray<Field>, row: Mutable): void => {
  for (const k of keys) {
    const v = (src as Record<string, unknown>)[k]
    if (typeof v === "number") row[k] = v
  }
}

/** Set `row[field]` from the preferred value, else the fallback; note a disagreement. */
export const prefer = (
  row: Mutable,
  field: Field,
  used: { readonly name: string; readonly value: number | undefined },
  other: { readonly name: string; readonly value: number | undefined },
  notices: Array<LedgerNotice>
): void => {
  const v = used.value ?? other.value
  if (v !== undefined) row[field] = v
  if (used.value !== undefined && other.value !== undefined && used.value !== other.value)
    notices.push({
      _tag: "AmbiguousSeries",
      dpRank: row.dpRank,
      field,
      used: used.name,
      ignored: other.name,
      message: `rank ${row.dpRank}: ${used.name} = ${used.value} and ${other.name} = ${other.value} disagree; ${field} uses ${used.name}`
    })
}

export const unknownRow = (dpRank: number, reason: RankUnknownReason, message: string): RankLoad => ({
  dpRank,
  unknown: { reason, message }
})

/** Fields that are fractions, 0..1. */
const fractions: ReadonlySet<string> = new Set(["kvCacheUsage", "cpuKvCacheUsage", "preAllocatedUsage"])

/**
 * S08: a rank reported twice becomes one `duplicate-rank` row; a row with a negative number
 * `negative-count`; NaN, ±Inf, a number above 2^53 or a KV usage above 1 (a percentage where a
 * fraction belongs) `invalid-number`. Rows come out in ascending rank order; each unknown row gets
 * an `UnknownRank` notice.
 */

export const audit = (rows: ReadonlyArray<RankLoad>, notices: Array<LedgerNotice>): Array<RankLoad> => {
  // rows are keyed by (worker, dpRank): a fleet view's workers each have their own rank 0..n
  const byRank = new Map<string, Array<RankLoad>>()
  for (const r of rows) {
    const key = `${r.worker ?? ""}\u0000${r.dpRank}`
    const list = byRank.get(key)
    if (list === undefined) byRank.set(key, [r])
    else list.push(r)
  }
  const out = [...byRank.values()]
    .sort((a, b) => a[0]!.dpRank - b[0]!.dpRank || (a[0]!.worker ?? "").localeCompare(b[0]!.worker ?? ""))
    .map((rs): RankLoad => {
      const dpRank = rs[0]!.dpRank
      const worker = rs[0]!.worker
      // an unknown row keeps the worker it belongs to, so the (worker, rank) key survives
      const keep = (u: RankLoad): RankLoad => (worker === undefined ? u : { ...u, worker })
      if (rs.length > 1)
        return keep(
          unknownRow(
            dpRank,
            "duplicate-rank",
            `${worker === undefined ? "" : `worker ${worker} `}dp_rank ${dpRank} reported ${rs.length} times`
          )
        )
      const r = rs[0]!
      if (r.unknown !== undefined) return r
      for (const [k, v] of Object.entries(r)) {
        if (k === "dpRank" || typeof v !== "number") continue
        const p = numberProblem(v)
        if (p === "negative") return keep(unknownRow(dpRank, "negative-count", `${k} is ${String(v)}`))
        if (p === "invalid") return keep(unknownRow(dpRank, "invalid-number", `${k} is ${String(v)}`))
        // a share of the KV pool: above 1 it is a percentage or corrupt, either way not this field
        if (fractions.has(k) && v > 1)
          return keep(
            unknownRow(
              dpRank,
              "invalid-number",
              `${k} is ${String(v)}, above 1 (a fraction of the KV pool, 0..1)`
            )
          )
      }
      return r
    })
  for (const r of out)
    if (r.unknown !== undefined)
      notices.push({
        _tag: "UnknownRank",
        dpRank: r.dpRank,
        reason: r.unknown.reason,
        message: `rank ${r.dpRank} is unknown (${r.unknown.reason}): ${r.unknown.message}`
      })
  return out
}

/** Why an entry's numbers were scrubbed: the reason and the message naming the wire field. */
export interface Scrubbed {
  readonly reason: RankUnknownReason
  readonly message: string
}

const isObj = (u: unknown): u is Record<string, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * A copy of `entry` whose bad numbers under the `known` keys (all of `entry` when it is an array)
 * are replaced by 0, and why, so the strict Schema decodes the rest and the row becomes `unknown`.
 * `undefined` when nothing was bad (the entry is then used as is).
 */
export const scrub = (
  entry: unknown,
  known: ReadonlySet<string>,
  skip: ReadonlySet<string>,
  at: string
): { readonly copy: unknown; readonly why: Scrubbed } | undefined => {
  const view = Array.isArray(entry)
    ? entry
    : isObj(entry)
      ? Object.fromEntries(Object.entries(entry).filter(([k]) => known.has(k) && !skip.has(k)))
      : undefined
  if (view === undefined) return undefined
  const bad = firstBadNumber(view, skip)
  if (bad === undefined) return undefined
  const why: Scrubbed = {
    reason: bad.problem === "negative" ? "negative-count" : "invalid-number",
    message: `${at}${bad.path.map((p) => (typeof p === "number" ? `[${p}]` : `.${p}`)).join("")}: ${badNumberMessage(bad)}`
  }
  // entries are flat with flat sections: fix numbers two levels down, leave deeper values to the Schema
  const fix = (v: unknown): unknown => (typeof v === "number" && numberProblem(v) !== undefined ? 0 : v)
  const fixSection = (v: unknown): unknown =>
    isObj(v) ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, skip.has(k) ? x : fix(x)])) : fix(v)
  const copy = Array.isArray(entry)
    ? entry.map(fix)
    : Object.fromEntries(
        Object.entries(entry as object).map(([k, v]) => [k, known.has(k) && !skip.has(k) ? fixSection(v) : v])
      )
  return { copy, why }
}
