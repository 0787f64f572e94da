/**
 * loadledger's rule for the vLLM balancer's rows that miss what it scores: a rank whose counts are
 * unknown takes the busiest known values, and a missing KV gauge is scored as the busiest KV usage
 * reported (upstream's coordinator always sends every field, so upstream has no such row).
 *
 * @internal
 */
import { isCount, malformedRow } from "../../internal/counts.js"
import type { RankLoad } from "../../Policy.js"
import type { VllmEngineRow } from "../VllmLbTypes.js"

/**
 * Give every rank with a row in `unknown` what it reported and, for each field it did not, the
 * busiest known value (the maximum over the other ranks; `rows` is written in place). Returns the
 * flagged rows, or `undefined` when none. With no rank whose counts are both known (every rank's
 * row partial or unknown, e.g. a `/metrics` page cut before its waiting family), the busiest value
 * the partial rows reported stands in, per field (a field none reported is absent on every rank
 * alike: it counts 0 everywhere, which ranks no one ahead); with nothing reported at all the
 * flagged rows stay as they are.
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
  if (waiting < 0) {
    // no rank's counts are known, so every rank is flagged: the partial rows' busiest reports stand in
    let reported = false
    for (const u of flagged) {
      const own = partial(u)
      if (own === undefined) continue
      if (isCount(own.numWaitingReqs)) waiting = Math.max(waiting, own.numWaitingReqs)
      if (isCount(own.numRunningReqs)) running = Math.max(running, own.numRunningReqs)
      const k = own.kvCacheUsage
      if (k !== undefined) kv = kv === undefined ? k : Math.max(kv, k)
      reported ||= isCount(own.numWaitingReqs) || isCount(own.numRunningReqs)
    }
    if (!reported) return flagged
    waiting = Math.max(waiting, 0)
    running = Math.max(running, 0)
  }
  for (const u of flagged) {
    // a partial row keeps what it reported; a malformed one (a count that is no count) nothing
    const own = partial(u)
    rows[u.dpRank] = [own?.numWaitingReqs ?? waiting, own?.numRunningReqs ?? running, own?.kvCacheUsage ?? kv]
  }
  return flagged
}

/** The row when its fields may be taken at their word (not `unknown`, not malformed), else `undefined`. */
const partial = (u: RankLoad): RankLoad | undefined =>
  u.unknown === undefined && !malformedRow(u) ? u : undefined

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
