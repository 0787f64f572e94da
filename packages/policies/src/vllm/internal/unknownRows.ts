/**
 * loadledger's rule for the vLLM balancer's rows that miss what it scores: a rank whose counts are
 * unknown takes the busiest known values, and a missing KV gauge is scored as the busiest KV usage
 * reported (upstream's coordinator always sends every field, so upstream has no such row).
 *
 * @internal
 */
import { malformedRow } from "../../internal/counts.js"
import type { RankLoad } from "../../Policy.js"
import type { VllmEngineRow } from "../VllmLb.js"

/**
 * Give every rank with a row in `unknown` what it reported and, for each field it did not, the
 * busiest known value (the maximum over the other ranks; `rows` is written in place). Returns the
 * flagged rows, or `undefined` when none. With no known rank the flagged rows stay as they are.
 */
export const busiestKnown = (
  rows: Array<VllmEngineRow>,
  unknown: ReadonlyArray<RankLoad | undefined>
): ReadonlyArray<RankLoad> | undefined => {
  let waiting = -1
  let running = -1
  let kv: number | undefined
  const flagged: Array<RankLoad> = []
  for (let i = 0; i < rows.length; i++) {
    const u = unknown[i]
    if (u !== undefined) {
      flagged.push(u)
      continue
    }
    const row = rows[i]!
    waiting = Math.max(waiting, row[0])
    running = Math.max(running, row[1])
    if (row[2] !== undefined) kv = kv === undefined ? row[2] : Math.max(kv, row[2])
  }
  if (flagged.length === 0) return undefined
  if (waiting >= 0)
    for (const u of flagged) {
      // a partial row keeps what it reported; a malformed one (a count that is no count) nothing
      const own = u.unknown === undefined && !malformedRow(u) ? u : undefined
      rows[u.dpRank] = [
        own?.numWaitingReqs ?? waiting,
        own?.numRunningReqs ?? running,
        own?.kvCacheUsage ?? kv
      ]
    }
  return flagged
}

/** The highest `kvCacheUsage` any row reports, or `undefined` when none does. */
export const busiestKv = (rows: ReadonlyArray<VllmEngineRow>): number | undefined => {
  let kv: number | undefined
  for (const row of rows) if (row[2] !== undefined) kv = kv === undefined ? row[2] : Math.max(kv, row[2])
  return kv
}

/** `rows` with the KV usage of the `ranks` replaced by `kv`. */
export const withKv = (
  rows: ReadonlyArray<VllmEngineRow>,
  ranks: ReadonlyArray<number>,
  kv: number | undefined
): Array<VllmEngineRow> => {
  const out = rows.slice()
  for (const i of ranks) {
    const row = out[i]!
    out[i] = [row[0], row[1], kv]
  }
  return out
}
