/**
 * The cost terms of `step-time-aware`, one small function each, every one a per-rank cost in
 * seconds of lockstep step time (the weights are the policy's options, named in `stepTimeTerms`):
 *
 * - {@link queuedPrefill} (`queuedPrefill`): the wait before this prompt's prefill can start;
 * - {@link ownPrefill} (`ownPrefill`): this prompt's prefill after the prefix the rank caches;
 * - {@link decodeLoad} (`decodeLoad`, x `decodeWeight`): the rank's decode step cost after admission;
 * - {@link slotWait} (`slotWait`, x `slotWaitSeconds` per request): the wait for a running slot;
 * - `homeCredit` (x `homeWeight`): a share of `ownPrefill` taken off the request's home rank;
 *
 * and {@link heldRequests} / {@link snapshotQueue}, the two loads they read. The policy's route sums
 * them in the order `queuedPrefill + ownPrefill - homeCredit + decodeLoad + slotWait`.
 *
 * @internal
 */

import { prefillSeconds, type StepCostModel } from "../StepCost.js"
import { fnv1a } from "./HashTrie.js"
import type { LedgerState } from "./InflightCharges.js"
import { type FreshMax, unknownBase } from "./LoadView.js"

/**
 * The seconds of prefill the snapshot shows queued on a rank, as this front end counts it: with one
 * front end, a fresh rank's snapshot queue in full (`queuedSeconds`, priced at observe); with
 * several, a fresh rank's queue in whole `sharedQuantum` steps (0: not at all: every front end reads
 * the same stale snapshot, and a term read from it herds); a stale or unknown rank's queue (at least
 * the busiest fresh one, `maxQueued` tokens) plus what the other front ends are taken to have sent
 * since (`clientCount - 1` times this one's `pendingTokens`). @internal
 */
export const snapshotQueue = (
  cost: StepCostModel,
  clientCount: number,
  sharedQuantum: number,
  fresh: boolean,
  queuedSeconds: number,
  queuedTokens: number,
  maxQueued: number,
  pendingTokens: number
): number => {
  if (clientCount === 1 && fresh) return queuedSeconds
  if (clientCount === 1 || !fresh) {
    const q = fresh ? queuedTokens : Math.max(queuedTokens, maxQueued)
    return prefillSeconds(cost, q + (clientCount - 1) * pendingTokens, 0)
  }
  return sharedQuantum > 0 ? Math.floor(queuedSeconds / sharedQuantum) * sharedQuantum : 0
}

/**
 * `queuedPrefill`, seconds: the wait before this prompt's prefill starts on the rank, the later of
 * this front end's prefill horizon there (`horizonLeft` = horizon - now), the snapshot's queue
 * ({@link snapshotQueue}) and, for a stale or unknown rank, the busiest fresh rank's wait
 * (`floorWait`). @internal
 */
export const queuedPrefill = (
  horizonLeft: number,
  queue: number,
  fresh: boolean,
  floorWait: number
): number => Math.max(horizonLeft, queue, fresh ? 0 : floorWait)

/**
 * `ownPrefill`, seconds: this prompt's prefill of `input - cached` tokens after `cached` cached
 * ones, chunked as the engines do (`prefillSeconds`). @internal
 */
export const ownPrefill = (cost: StepCostModel, input: number, cached: number): number =>
  prefillSeconds(cost, input - cached, cached)

/**
 * The requests the rank holds, as the decode and slot terms count them: its snapshot's running and
 * waiting (an unknown rank's {@link unknownBase}; a stale one at least the busiest fresh `fm`)
 * plus this front end's routes since, `clientCount` times; a stale or unknown rank at least the
 * busiest fresh rank's (`floorRequests`). @internal
 */
export const heldRequests = (
  ledger: LedgerState,
  r: number,
  fm: FreshMax,
  now: number,
  staleAfter: number,
  fresh: boolean,
  pendingRequests: number,
  clientCount: number,
  floorRequests: number
): number => {
  const snap = ledger.snapRequests[r]!
  const held =
    (Number.isNaN(ledger.snapTimestamp[r]!)
      ? unknownBase(ledger.snapshots[r], fm, now, staleAfter)[0]
      : fresh || fm.requests < 0
        ? snap
        : Math.max(snap, fm.requests)) +
    clientCount * pendingRequests
  return fresh ? held : Math.max(held, floorRequests)
}

/**
 * `decodeLoad`, seconds of one decode step, times `decodeWeight`: the rank's decode batch after
 * admission, `(decoding + 1)` requests and `context + input` context tokens. @internal
 */
export const decodeLoad = (
  decodeWeight: number,
  cost: StepCostModel,
  decoding: number,
  context: number,
  input: number
): number =>
  decodeWeight *
  ((decoding + 1) * cost.decodeSecondsPerRequest + (context + input) * cost.decodeSecondsPerContextToken)

/**
 * `slotWait`, seconds: `perRequest` seconds for each request the rank would hold beyond its
 * running-request cap with this one (`requests + 1 - cap`); call it only at the cap or above. @internal
 */
export const slotWait = (perRequest: number, requests: number, cap: number): number =>
  perRequest * (requests + 1 - cap)

/** The request's home rank (the `homeCredit` term's): the hash of its first block held by at most one rank, mod `n`. @internal */
export const homeOf = (hashes: ReadonlyArray<string>, matched: ArrayLike<number>, n: number): number => {
  // the second-largest match: the leading blocks two or more ranks hold
  let first = 0
  let second = 0
  for (let r = 0; r < n; r++) {
    const m = matched[r]!
    if (m > first) {
      second = first
      first = m
    } else if (m > second) second = m
  }
  return fnv1a(hashes[Math.min(hashes.length - 1, second)]!) % n
}
