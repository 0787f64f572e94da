/**
 * One reader for the gateways' Prometheus pages (SMG, Dynamo's frontend, llm-d's endpoint picker):
 * each names its modelled gauges, the ledger field each feeds, and how a sample's labels give its
 * (worker, dpRank). Rows are keyed by (worker, dpRank), never merged across workers; a sample
 * without a rank is rank-less beside ranked ones, or rank 0 (with a `DefaultedIdentity` notice) on
 * a page where no sample carries a rank.
 */
import * as Result from "effect/Result"
import { type DecodeError, decodeError } from "../DecodeError.js"
import type { LedgerNotice } from "../LedgerNotice.js"
import type { RankLoad, RanklessLoad } from "../RankLoad.js"
import type { Field, Mutable } from "./ledgerRows.js"
import { unknownFamilyNotices } from "./metricNames.js"
import { parseLastScrape } from "./scrapes.js"

/** Where a sample belongs: its worker (when the page names it) and its rank (when it has one). */
export type Identity = { readonly worker?: string | undefined; readonly dpRank?: number | undefined }

export interface GatewaySpec {
  /** The source's name in messages ("SGLang model gateway (SMG)"). */
  readonly source: string
  /** Every series of the source starts with one of these (others on the page are ignored). */
  readonly prefixes: ReadonlyArray<string>
  /** Modelled metric name -> the ledger fields it sets. */
  readonly fields: ReadonlyMap<string, ReadonlyArray<Field>>
  /** The identity of a sample, or an error message naming the bad label. */
  readonly identity: (labels: Readonly<Record<string, string>>) => Identity | string
  /** A value the exporter writes for a removed worker's series (SMG: -1): skipped, with a notice. */
  readonly removedSentinel?: number | undefined
}

const keyOf = (id: Identity): string => `${id.worker ?? ""}\u0000${id.dpRank ?? ""}`

/** Rows (and rank-less loads) of a gateway page; notices for what is not modelled. */
export const rowsOfGatewayPage = (
  text: string,
  spec: GatewaySpec,
  notices: Array<LedgerNotice>,
  rankless: Array<RanklessLoad>
): Result.Result<Array<RankLoad>, DecodeError> => {
  const parsed = parseLastScrape(text, notices, { keep: (n) => spec.fields.has(n), rankLabels: [] })
  if (Result.isFailure(parsed)) return Result.fail(parsed.failure)
  const e = parsed.success
  const byKey = new Map<string, { id: Identity; row: Mutable; lines: Map<string, number> }>()
  let removed = 0
  let removedLine = 0
  for (const s of e.samples) {
    const id = spec.identity(s.labels)
    if (typeof id === "string")
      return Result.fail(decodeError("InvalidField", `${s.name}: ${id}`, { line: s.line }))
    if (spec.removedSentinel !== undefined && s.value === spec.removedSentinel) {
      if (removed++ === 0) removedLine = s.line
      continue
    }
    const k = keyOf(id)
    let entry = byKey.get(k)
    if (entry === undefined) {
      entry = { id, row: { dpRank: id.dpRank ?? 0 }, lines: new Map() }
      if (id.worker !== undefined) entry.row.worker = id.worker
      byKey.set(k, entry)
    }
    for (const f of spec.fields.get(s.name)!) {
      const seen = entry.row[f]
      if (seen !== undefined && seen !== s.value)
        return Result.fail(
          decodeError(
            "AmbiguousSeries",
            `${s.name}${id.worker === undefined ? "" : ` of worker ${id.worker}`}${id.dpRank === undefined ? "" : ` rank ${id.dpRank}`} has two values (lines ${entry.lines.get(f)} and ${s.line}): ${seen} and ${s.value}`,
            { line: s.line }
          )
        )
      entry.row[f] = s.value
      entry.lines.set(f, s.line)
    }
  }
  if (removed > 0)
    notices.push({
      _tag: "UnknownSeries",
      series: `${spec.source} removed-worker series`,
      samples: removed,
      line: removedLine,
      message: `${removed} sample(s) from line ${removedLine} hold ${spec.removedSentinel}, the exporter's mark of a removed worker: not read`
    })
  notices.push(
    ...unknownFamilyNotices(e.others.values(), e.declared, (n) => spec.prefixes.some((p) => n.startsWith(p)))
  )
  for (const name of e.declared.keys())
    if (spec.fields.has(name) && !e.samples.some((s) => s.name === name))
      notices.push({
        _tag: "DeclaredWithoutSamples",
        series: name,
        message: `${name} is declared without samples: its field is absent (not 0)`
      })
  if (byKey.size === 0 && removed === 0)
    return Result.fail(
      decodeError(
        "UnknownSeries",
        `no ${spec.source} load gauge (${[...spec.fields.keys()].slice(0, 3).join(", ")}, ...) on the page`,
        { line: 1 }
      )
    )
  const entries = [...byKey.values()]
  const anyRank = entries.some((x) => x.id.dpRank !== undefined)
  const rows: Array<RankLoad> = []
  for (const { id, row, lines } of entries) {
    if (id.dpRank !== undefined) rows.push(row)
    else if (anyRank) {
      const { dpRank: _r, ...rest } = row
      rankless.push(rest)
    } else {
      rows.push(row)
      notices.push({
        _tag: "DefaultedIdentity",
        dpRank: 0,
        line: Math.min(...lines.values()),
        message: `${spec.source}: ${id.worker === undefined ? "the page" : `worker ${id.worker}`} carries no rank: read as rank 0`
      })
    }
  }
  return Result.succeed(rows)
}

/** A `dp_rank`-style label as a rank: absent -> undefined; not a non-negative integer -> an error message. */
export const rankLabel = (
  labels: Readonly<Record<string, string>>,
  name: string
): number | undefined | string => {
  const v = labels[name]
  if (v === undefined) return undefined
  return /^\d{1,15}$/.test(v) ? Number(v) : `label ${name}="${v}" is not a non-negative integer rank`
}

/** Whether a text's metric names start with `prefix` at a line start (a sample or a HELP/TYPE). */
export const pageHasPrefix = (text: string, prefix: string): boolean =>
  new RegExp(`^(?:#\\s*(?:HELP|TYPE)\\s+)?${prefix}`, "m").test(text)
