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

/**
 * SGLang's `--load-balance-method` values the DataParallelController understands.
 *
 * @category models
 * @since 0.1.0
 */
export type LoadBalanceMethod = "ROUND_ROBIN" | "FOLLOW_BOOTSTRAP_ROOM" | "TOTAL_REQUESTS" | "TOTAL_TOKENS"

/**
 * The budget: per-rank `totalRequests` (running + waiting, plus speculative +1 per dispatch),
 * `totalTokens` (`numTotalTokens`, plus the estimated prompt tokens per dispatch) and the
 * `lastTimestamp` (seconds, publisher's clock) of the snapshot last applied.
 *
 * `tokensUnknown` is a loadledger extension (absent upstream, absent here until needed): `true` for
 * a rank whose last snapshot carried an invalid token count (negative, fractional or non-finite,
 * e.g. a `-1` parse-error sentinel). While any rank's tokens are unknown, `TOTAL_TOKENS` compares
 * request counts only, so no rank is ever chosen because of an unknown load (fault case S08).
 *
 * @category models
 * @since 0.1.0
 */
export interface DpBudget {
  readonly totalRequests: ReadonlyArray<number>
  readonly totalTokens: ReadonlyArray<number>
  readonly lastTimestamp: ReadonlyArray<number>
  readonly tokensUnknown?: ReadonlyArray<boolean> | undefined
}

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

const isCount = (x: number): boolean => Number.isSafeInteger(x) && x >= 0

/**
 * Fold snapshots into the budget in array order (upstream `DPBudget.update_budget`).
 *
 * **When to use**: what a refresh does with the snapshot store's contents; also callable directly.
 *
 * Rules: a snapshot whose `timestamp` equals the rank's `lastTimestamp` exactly is skipped; any other
 * timestamp, **older ones included**, overwrites: `totalRequests = numRunningReqs + numWaitingReqs`,
 * `totalTokens = numTotalTokens`. A list may repeat a rank or be unordered.
 *
 * **Gotchas** (loadledger additions that never fire on SGLang's own snapshots): a snapshot whose
 * `dpRank` is not a rank of this budget, or whose request counts are not non-negative safe integers,
 * is ignored; an invalid `numTotalTokens` marks the rank's tokens unknown (see {@link DpBudget}).
 *
 * @example
 * ```ts
 * import { DpBudget } from "@loadledger/policies"
 * const load = { dpRank: 1, timestamp: 1, numRunningReqs: 2, numWaitingReqs: 3, numTotalTokens: 80 }
 * DpBudget.update(DpBudget.empty(2), [load]).totalRequests // => [0, 5]
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
  let unknown: Array<boolean> | undefined
  for (const ld of loads) {
    const r = ld.dpRank
    if (!Number.isInteger(r) || r < 0 || r >= n) continue
    const last = stamps === undefined ? budget.lastTimestamp[r] : stamps[r]
    if (ld.timestamp === last) continue
    if (!isCount(ld.numRunningReqs) || !isCount(ld.numWaitingReqs)) continue
    if (stamps === undefined) {
      stamps = budget.lastTimestamp.slice()
      requests = budget.totalRequests.slice()
      tokens = budget.totalTokens.slice()
    }
    stamps[r] = ld.timestamp
    requests![r] = ld.numRunningReqs + ld.numWaitingReqs
    const tokensKnown = isCount(ld.numTotalTokens)
    if (tokensKnown) tokens![r] = ld.numTotalTokens
    const wasUnknown = unknown === undefined ? budget.tokensUnknown?.[r] === true : unknown[r] === true
    if (wasUnknown === tokensKnown) {
      unknown ??= budget.tokensUnknown?.slice() ?? filled(n, false)
      unknown[r] = !tokensKnown
    }
  }
  if (stamps === undefined) return budget
  const tokensUnknown = unknown ?? budget.tokensUnknown
  return tokensUnknown?.includes(true)
    ? { totalRequests: requests!, totalTokens: tokens!, lastTimestamp: stamps, tokensUnknown }
    : { totalRequests: requests!, totalTokens: tokens!, lastTimestamp: stamps }
}

/**
 * The rank `TOTAL_REQUESTS` picks: the lowest index with the minimal `totalRequests`.
 *
 * **When to use**: to see which rank `TOTAL_REQUESTS` would pick without charging it.
 *
 * @example
 * ```ts
 * import { DpBudget } from "@loadledger/policies"
 * DpBudget.argminRequests({ totalRequests: [3, 1, 1], totalTokens: [0, 0, 0], lastTimestamp: [0, 0, 0] }) // => 1
 * ```
 *
 * @category getters
 * @since 0.1.0
 */
export const argminRequests = (budget: DpBudget): number => {
  const req = budget.totalRequests
  let best = 0
  let bestReq = req[0]!
  for (let i = 1; i < req.length; i++) {
    const v = req[i]!
    if (v < bestReq) {
      bestReq = v
      best = i
    }
  }
  return best
}

/**
 * The rank `TOTAL_TOKENS` picks: the lowest index with the lexicographically minimal
 * `(totalTokens, totalRequests)`; while any rank's tokens are unknown, {@link argminRequests}.
 *
 * **When to use**: to see which rank `TOTAL_TOKENS` would pick without charging it.
 *
 * @example
 * ```ts
 * import { DpBudget } from "@loadledger/policies"
 * DpBudget.argminTokens({ totalRequests: [3, 2, 1], totalTokens: [5, 5, 9], lastTimestamp: [0, 0, 0] }) // => 1
 * ```
 *
 * @category getters
 * @since 0.1.0
 */
export const argminTokens = (budget: DpBudget): number => {
  if (budget.tokensUnknown !== undefined) return argminRequests(budget)
  const tok = budget.totalTokens
  const req = budget.totalRequests
  let best = 0
  let bestTok = tok[0]!
  let bestReq = req[0]!
  for (let i = 1; i < tok.length; i++) {
    const t = tok[i]!
    if (t < bestTok || (t === bestTok && req[i]! < bestReq)) {
      bestTok = t
      bestReq = req[i]!
      best = i
    }
  }
  return best
}

/**
 * The result of {@link dispatch}: the rank (absent for a method without a budget) and the budget.
 *
 * @category models
 * @since 0.1.0
 */
export interface Dispatched {
  readonly rank: number | undefined
  readonly budget: DpBudget
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
  return budget.tokensUnknown === undefined
    ? { totalRequests, totalTokens, lastTimestamp: budget.lastTimestamp }
    : { totalRequests, totalTokens, lastTimestamp: budget.lastTimestamp, tokensUnknown: budget.tokensUnknown }
}
