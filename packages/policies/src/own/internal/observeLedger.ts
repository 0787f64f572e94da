/**
 * Folding snapshots into the in-flight charge ledger (`observeLedger`).
 *
 * @internal
 */
import { isCount, malformedRow } from "../../internal/counts.js"
import type { RankLoad } from "../../Policy.js"
import { freeKvTokens } from "./FreeKv.js"
import { dropIncluded, type LedgerState } from "./LedgerState.js"

/** What a snapshot row means to the ledger. */
export const classifyLoad = (l: RankLoad, dpSize: number): "invalid" | "unknown" | "known" => {
  if (!Number.isInteger(l.dpRank) || l.dpRank < 0 || l.dpRank >= dpSize) return "invalid"
  if (l.timestamp !== undefined && !Number.isFinite(l.timestamp)) return "invalid"
  if (l.unknown !== undefined) return "unknown"
  if (!isCount(l.numRunningReqs) || !isCount(l.numWaitingReqs) || !isCount(l.numTotalTokens)) return "unknown"
  const kv = l.kvCacheUsage
  return kv === undefined || (Number.isFinite(kv) && kv >= 0 && kv <= 1) ? "known" : "invalid"
}

/** Fold snapshots in. */
export const observeLedger = (
  state: LedgerState,
  loads: ReadonlyArray<RankLoad>,
  inclusionMarginSeconds: number,
  now: number
): LedgerState => {
  let snaps:
    | {
        snapshots: Array<RankLoad | undefined>
        snapTimestamp: Array<number>
        rowTimestamp: Array<number>
        snapRequests: Array<number>
        snapWaiting: Array<number>
        snapTokens: Array<number>
        snapKv: Array<number>
        snapFree: Array<number>
      }
    | undefined
  let charges = state.charges
  for (const row of loads) {
    const kind = classifyLoad(row, state.dpSize)
    if (kind === "invalid") continue
    const l = row.timestamp === undefined ? { ...row, timestamp: now } : row
    const timestamp = l.timestamp!
    const r = l.dpRank
    // the newest row that reported counts is held; NaN (none) compares false: applied
    const held = (snaps ?? state).rowTimestamp[r]!
    if (timestamp < held) continue
    snaps ??= {
      snapshots: state.snapshots.slice(),
      snapTimestamp: state.snapTimestamp.slice(),
      rowTimestamp: state.rowTimestamp.slice(),
      snapRequests: state.snapRequests.slice(),
      snapWaiting: state.snapWaiting.slice(),
      snapTokens: state.snapTokens.slice(),
      snapKv: state.snapKv.slice(),
      snapFree: state.snapFree.slice()
    }
    snaps.snapshots[r] = l
    snaps.snapFree[r] = freeKvTokens(l) ?? Number.NaN
    if (kind === "unknown") {
      // a partial row keeps the KV usage it did report
      const kv = l.unknown === undefined ? l.kvCacheUsage : undefined
      snaps.snapTimestamp[r] = Number.NaN
      snaps.snapKv[r] = kv !== undefined && kv >= 0 && kv <= 1 ? kv : Number.NaN
      // a partial row that counts requests (vLLM's coordinator publishes no tokens) is dated: the
      // time of its counts. Its charges stay until their requests finish: every front end reads
      // the same counts, and dropping each front end's charges at every publish herded them onto
      // the least-counted rank (simulator, four vLLM front ends on vLLM's rows: ledger-balanced's
      // TTFT p99 5x on the Azure conversation trace at 70%)
      const counted =
        l.unknown === undefined &&
        !malformedRow(l) &&
        (isCount(l.numRunningReqs) || isCount(l.numWaitingReqs))
      snaps.rowTimestamp[r] = counted ? timestamp : Number.NaN
      continue
    }
    snaps.snapTimestamp[r] = timestamp
    snaps.rowTimestamp[r] = timestamp
    snaps.snapRequests[r] = l.numRunningReqs! + l.numWaitingReqs!
    snaps.snapWaiting[r] = l.numWaitingReqs!
    snaps.snapTokens[r] = l.numTotalTokens!
    snaps.snapKv[r] = l.kvCacheUsage === undefined ? Number.NaN : l.kvCacheUsage
    charges = dropIncluded(charges, r, timestamp, inclusionMarginSeconds)
  }
  if (snaps === undefined) return state
  return {
    dpSize: state.dpSize,
    snapshots: snaps.snapshots,
    snapTimestamp: snaps.snapTimestamp,
    rowTimestamp: snaps.rowTimestamp,
    snapRequests: snaps.snapRequests,
    snapWaiting: snaps.snapWaiting,
    snapTokens: snaps.snapTokens,
    snapKv: snaps.snapKv,
    snapFree: snaps.snapFree,
    healthy: state.healthy,
    charges
  }
}
