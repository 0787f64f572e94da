/**
 * How SGLang's `DPBudget` picks a rank (`DpBudget.ts`): the ranks a pick passes over
 * (`excludedRanks`, a loadledger extension) and the two argmins, `TOTAL_REQUESTS`'
 * (`argminRequests`) and `TOTAL_TOKENS`' (`argminTokens`). Re-exported by `DpBudget.ts`, so they
 * are called as `DpBudget.argminRequests` and so on.
 *
 * Reproduces `DPBudget.dispatch`'s argmins in `python/sglang/srt/managers/data_parallel_controller.py`
 * (sgl-project/sglang, the version named in `fixtures/reference/sglang/README.md`).
 *
 * @since 0.1.0
 */
import type { DpBudget, LoadBalanceMethod } from "./DpBudgetTypes.js"

/**
 * Which ranks a pick must pass over while another rank is usable (loadledger extension): ranks whose
 * requests are unknown, and under `TOTAL_TOKENS` also ranks whose tokens are unknown. `undefined`
 * when none (every SGLang snapshot carries every field, so upstream never gets here).
 *
 * **When to use**: to see which ranks the budget will not pick while a known rank exists.
 *
 * @example
 * ```ts
 * import { DpBudget } from "@loadledger/policies"
 * const b = { ...DpBudget.empty(2), tokensUnknown: [false, true] }
 * DpBudget.excludedRanks(b, "TOTAL_TOKENS") // => [false, true]
 * DpBudget.excludedRanks(b, "TOTAL_REQUESTS") // => undefined
 * ```
 *
 * @category getters
 * @since 0.2.0
 */
export const excludedRanks = (
  budget: DpBudget,
  method: LoadBalanceMethod
): ReadonlyArray<boolean> | undefined => {
  const req = budget.requestsUnknown
  const tok = method === "TOTAL_TOKENS" ? budget.tokensUnknown : undefined
  if (tok === undefined) return req
  if (req === undefined) return tok
  return req.map((u, r) => u || tok[r] === true)
}

/** True when rank `b` beats rank `a` (a < b) on exclusion alone; `undefined` when that does not decide. */
const byExclusion = (
  excluded: ReadonlyArray<boolean> | undefined,
  a: number,
  b: number
): boolean | undefined => {
  if (excluded === undefined) return undefined
  const ea = excluded[a] === true
  const eb = excluded[b] === true
  return ea === eb ? undefined : ea
}

/**
 * The rank `TOTAL_REQUESTS` picks: the lowest index with the minimal `totalRequests`. Ranks whose
 * requests are unknown (`requestsUnknown`) are passed over while any other rank exists
 * (loadledger extension; exact upstream otherwise).
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
export const argminRequests = (budget: DpBudget): number => argminRequestsOver(budget, budget.requestsUnknown)

const argminRequestsOver = (budget: DpBudget, excluded: ReadonlyArray<boolean> | undefined): number => {
  const req = budget.totalRequests
  let best = 0
  let bestReq = req[0]!
  for (let i = 1; i < req.length; i++) {
    const v = req[i]!
    if (byExclusion(excluded, best, i) ?? v < bestReq) {
      bestReq = v
      best = i
    }
  }
  return best
}

/**
 * The rank `TOTAL_TOKENS` picks: the lowest index with the lexicographically minimal
 * `(totalTokens, totalRequests)`; while any rank's tokens are unknown, the minimal `totalRequests`.
 * Either way ranks whose requests or tokens are unknown are passed over while another rank exists.
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
  const excluded = excludedRanks(budget, "TOTAL_TOKENS")
  if (budget.tokensUnknown !== undefined) return argminRequestsOver(budget, excluded)
  const tok = budget.totalTokens
  const req = budget.totalRequests
  let best = 0
  let bestTok = tok[0]!
  let bestReq = req[0]!
  for (let i = 1; i < tok.length; i++) {
    const t = tok[i]!
    if (byExclusion(excluded, best, i) ?? (t < bestTok || (t === bestTok && req[i]! < bestReq))) {
      bestTok = t
      bestReq = req[i]!
      best = i
    }
  }
  return best
}
