/**
 * SGLang's `DPBudget`: the per-rank request and token ledger the DataParallelController dispatches
 * against, as pure functions over an immutable value.
 *
 * Reproduces `python/sglang/srt/managers/data_parallel_controller.py` (sgl-project/sglang, the
 * file-index version 54513096567 named in `fixtures/reference/sglang/README.md`; the vectors in
 * `dp_lb_cases.json` are the normative behaviour).
 *
 * @since 0.1.0
 */
import type { RankLoad } from "../Policy.js"
import { argminRequests, argminTokens } from "./DpBudgetPick.js"
import type { Dispatched, DpBudget, LoadBalanceMethod } from "./DpBudgetTypes.js"

/**
 * How a rank is picked (`excludedRanks`, `argminRequests`, `argminTokens`), defined in
 * `DpBudgetPick.ts` and re-exported here, so they stay `DpBudget.argminRequests` and so on.
 *
 * @since 0.1.0
 */
export { argminRequests, argminTokens, excludedRanks } from "./DpBudgetPick.js"
/**
 * The budget's types, defined in the leaf module `DpBudgetTypes.ts` and re-exported here, so they
 * stay `DpBudget.DpBudget`, `DpBudget.LoadBalanceMethod` and `DpBudget.Dispatched`.
 *
 * @since 0.1.0
 */
export type { Dispatched, DpBudget, LoadBalanceMethod } from "./DpBudgetTypes.js"

/**
 * A fresh budget for `dpSize` ranks: every count 0 and every `lastTimestamp` 0.0, as upstream.
 *
 * **When to use**: the starting budget of a controller, or of a direct `update` / `dispatch` experiment.
 *
 * @example
 * ```ts
 * import { DpBudget } from "@loadledger/policies"
 * DpBudget.empty(2) // => { totalRequests: [0, 0], totalTokens: [0, 0], lastTimestamp: [0, 0] }
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const empty = (dpSize: number): DpBudget => ({
  totalRequests: filled(dpSize, 0),
  totalTokens: filled(dpSize, 0),
  lastTimestamp: filled(dpSize, 0)
})

/**
 * A packed array of `n` copies of `value` (`new Array(n).fill` makes a holey array, slower to scan
 * and copy in V8).
 *
 * **When to use**: building per-rank arrays that stay fast to scan and copy.
 *
 * @example
 * ```ts
 * import { DpBudget } from "@loadledger/policies"
 * DpBudget.filled(3, 0) // => [0, 0, 0]
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const filled = <A>(n: number, value: A): Array<A> => {
  const out: Array<A> = []
  for (let i = 0; i < n; i++) out.push(value)
  return out
}

const isCount = (x: number | undefined): x is number => x !== undefined && Number.isSafeInteger(x) && x >= 0

/** `flags` with `flags[r] = value`, copy-on-write; `undefined` when no rank is flagged. */
const flag = (
  flags: ReadonlyArray<boolean> | undefined,
  n: number,
  r: number,
  value: boolean
): ReadonlyArray<boolean> | undefined => {
  if ((flags?.[r] === true) === value) return flags
  const out = flags?.slice() ?? filled(n, false)
  out[r] = value
  return out.includes(true) ? out : undefined
}

/**
 * Fold snapshots into the budget in array order (upstream `DPBudget.update_budget`).
 *
 * **When to use**: what a refresh does with the snapshot store's contents; also callable directly.
 *
 * Rules: a snapshot whose `timestamp` equals the rank's `lastTimestamp` exactly is skipped; any other
 * timestamp, **older ones included**, overwrites: `totalRequests = numRunningReqs + numWaitingReqs`,
 * `totalTokens = numTotalTokens`. A list may repeat a rank or be unordered.
 *
 * **Gotchas** (loadledger extensions that never fire on SGLang's own snapshots, which carry every
 * field): a snapshot whose `dpRank` is not a rank of this budget is ignored. A snapshot without a
 * `timestamp` is always applied and leaves `lastTimestamp` as it was (the policies stamp `now` at
 * `observe`, so this happens only when called directly). An `unknown` row, or one whose request
 * counts are absent or not non-negative safe integers, marks the rank's requests (and tokens)
 * unknown and keeps its numbers; an absent or invalid `numTotalTokens` marks its tokens unknown
 * (see {@link DpBudget}). A later row with the counts clears the mark.
 *
 * @example
 * ```ts
 * import { DpBudget } from "@loadledger/policies"
 * const load = { dpRank: 1, timestamp: 1, numRunningReqs: 2, numWaitingReqs: 3, numTotalTokens: 80 }
 * DpBudget.update(DpBudget.empty(2), [load]).totalRequests // => [0, 5]
 * DpBudget.update(DpBudget.empty(2), [{ dpRank: 0, timestamp: 1, numRunningReqs: 2 }]).requestsUnknown // => [true, false]
 * ```
 *
 * @category combinators
 * @since 0.1.0
 */
export const update = (budget: DpBudget, loads: ReadonlyArray<RankLoad>): DpBudget => {
  const n = budget.totalRequests.length
  let requests: Array<number> | undefined
  let tokens: Array<number> | undefined
  let stamps: Array<number> | undefined
  let requestsUnknown = budget.requestsUnknown
  let tokensUnknown = budget.tokensUnknown
  for (const ld of loads) {
    const r = ld.dpRank
    if (!Number.isInteger(r) || r < 0 || r >= n) continue
    const t = ld.timestamp
    const last = stamps === undefined ? budget.lastTimestamp[r] : stamps[r]
    if (t !== undefined && t === last) continue
    if (stamps === undefined) {
      stamps = budget.lastTimestamp.slice()
      requests = budget.totalRequests.slice()
      tokens = budget.totalTokens.slice()
    }
    if (t !== undefined) stamps[r] = t
    const running = ld.unknown === undefined ? ld.numRunningReqs : undefined
    const waiting = ld.unknown === undefined ? ld.numWaitingReqs : undefined
    const requestsKnown = isCount(running) && isCount(waiting)
    if (requestsKnown) requests![r] = running + waiting
    requestsUnknown = flag(requestsUnknown, n, r, !requestsKnown)
    const total = requestsKnown ? ld.numTotalTokens : undefined
    const tokensKnown = isCount(total)
    if (tokensKnown) tokens![r] = total
    tokensUnknown = flag(tokensUnknown, n, r, !tokensKnown)
  }
  if (stamps === undefined) return budget
  return withFlags(
    { totalRequests: requests!, totalTokens: tokens!, lastTimestamp: stamps },
    requestsUnknown,
    tokensUnknown
  )
}

/** `b` with the unknown marks set (each key present only when some rank is marked). */
const withFlags = (
  b: {
    totalRequests: ReadonlyArray<number>
    totalTokens: ReadonlyArray<number>
    lastTimestamp: ReadonlyArray<number>
  },
  requestsUnknown: ReadonlyArray<boolean> | undefined,
  tokensUnknown: ReadonlyArray<boolean> | undefined
): DpBudget => {
  if (requestsUnknown === undefined && tokensUnknown === undefined) return b
  if (requestsUnknown === undefined)
    return {
      totalRequests: b.totalRequests,
      totalTokens: b.totalTokens,
      lastTimestamp: b.lastTimestamp,
      tokensUnknown
    }
  if (tokensUnknown === undefined)
    return {
      totalRequests: b.totalRequests,
      totalTokens: b.totalTokens,
      lastTimestamp: b.lastTimestamp,
      requestsUnknown
    }
  return {
    totalRequests: b.totalRequests,
    totalTokens: b.totalTokens,
    lastTimestamp: b.lastTimestamp,
    requestsUnknown,
    tokensUnknown
  }
}

/**
 * Pick a rank and charge it speculatively (upstream `DPBudget.dispatch`): `totalRequests[rank] += 1`
 * and `totalTokens[rank] += estimatedTokens`. `TOTAL_REQUESTS` uses {@link argminRequests},
 * `TOTAL_TOKENS` {@link argminTokens}; any other method returns `rank: undefined` and the same budget.
 *
 * **When to use**: upstream's `DPBudget.dispatch` on its own; the controller's `schedule` calls it for you.
 *
 * **Gotchas**: the controller calls this with `estimatedTokens = 0` under `TOTAL_REQUESTS`, so tokens
 * are not charged there; called directly, a non-zero value is charged under either method.
 * An empty budget (0 ranks) returns `rank: undefined`.
 *
 * @example
 * ```ts
 * import { DpBudget } from "@loadledger/policies"
 * const d = DpBudget.dispatch(DpBudget.empty(2), "TOTAL_TOKENS", 100)
 * d.rank // => 0
 * d.budget.totalTokens // => [100, 0]
 * d.budget.totalRequests // => [1, 0]
 * ```
 *
 * @category combinators
 * @since 0.1.0
 */
export const dispatch = (
  budget: DpBudget,
  method: LoadBalanceMethod,
  estimatedTokens: number
): Dispatched => {
  if (budget.totalRequests.length === 0) return { rank: undefined, budget }
  let rank: number
  if (method === "TOTAL_REQUESTS") rank = argminRequests(budget)
  else if (method === "TOTAL_TOKENS") rank = argminTokens(budget)
  else return { rank: undefined, budget }
  return { rank, budget: charge(budget, rank, estimatedTokens) }
}

/**
 * Charge one dispatch to `rank`: `+1` request and `+estimatedTokens` tokens, copy-on-write (the
 * tokens array is shared when `estimatedTokens` is 0). The second half of {@link dispatch}.
 *
 * **When to use**: to charge a rank chosen elsewhere (e.g. a fused argmin) exactly as `dispatch` would.
 *
 * @example
 * ```ts
 * import { DpBudget } from "@loadledger/policies"
 * DpBudget.charge(DpBudget.empty(2), 1, 7).totalTokens // => [0, 7]
 * ```
 *
 * @category combinators
 * @since 0.1.0
 */
export const charge = (budget: DpBudget, rank: number, estimatedTokens: number): DpBudget => {
  const totalRequests = budget.totalRequests.slice()
  totalRequests[rank]! += 1
  let totalTokens = budget.totalTokens
  if (estimatedTokens !== 0) {
    const t = totalTokens.slice()
    t[rank]! += estimatedTokens
    totalTokens = t
  }
  return withFlags(
    { totalRequests, totalTokens, lastTimestamp: budget.lastTimestamp },
    budget.requestsUnknown,
    budget.tokensUnknown
  )
}
