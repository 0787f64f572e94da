/**
 * The per-rank request and token totals the SGLang `TOTAL_*` fast path charges, with the pick at
 * hand: a tournament tree over the ranks, so a charge replays one leaf-to-root path (O(log n))
 * instead of rescanning every rank. Few ranks have no tree (a scan of so few is faster).
 *
 * @internal
 */
import { argminRequests, argminTokens } from "../DpBudget.js"

/**
 * Per-rank totals and their tournament. `tree`, with `size` the least power of two >= the rank
 * count: `tree[size + r]` is rank `r` (`n`, no rank, past the last one) and every inner node
 * `tree[i]` is the winner of `tree[2i]` and `tree[2i + 1]`, the lower index on a tie, so `tree[1]`
 * is the lowest index among the minimal keys: `totalRequests`, or `(totalTokens, totalRequests)`
 * when `byTokens`, after `excluded` (ranks with unknown counts lose to every other rank;
 * `undefined` when none, always so on SGLang's own snapshots). Up to `scanRanks` ranks there is no
 * tree (`undefined`).
 *
 * @internal
 */
export interface RankTournament {
  requests: Array<number>
  tokens: Array<number>
  tree: Int32Array | undefined
  readonly byTokens: boolean
  readonly excluded: ReadonlyArray<boolean> | undefined
}

/**
 * The winner of ranks `a` (the lower indices) and `b`: `b` only when its key is strictly less;
 * `n` (no rank) always loses.
 */
const winner = (
  requests: ReadonlyArray<number>,
  tokens: ReadonlyArray<number>,
  byTokens: boolean,
  excluded: ReadonlyArray<boolean> | undefined,
  a: number,
  b: number
): number => {
  const n = requests.length
  if (b >= n) return a
  if (a >= n) return b
  if (excluded !== undefined && excluded[a] !== excluded[b]) return excluded[a] === true ? b : a
  if (byTokens) {
    const ta = tokens[a]!
    const tb = tokens[b]!
    return tb < ta || (tb === ta && requests[b]! < requests[a]!) ? b : a
  }
  return requests[b]! < requests[a]! ? b : a
}

/** Rank counts up to which the pick is a scan, not a tournament (measured with `pnpm bench`). */
const scanRanks = 16

/** A tournament over the ranks of `requests` / `tokens` (see {@link RankTournament}); none for few ranks. */
export const treeOf = (
  requests: ReadonlyArray<number>,
  tokens: ReadonlyArray<number>,
  byTokens: boolean,
  excluded: ReadonlyArray<boolean> | undefined
): Int32Array | undefined => {
  const n = requests.length
  if (n <= scanRanks) return undefined
  let size = 1
  while (size < n) size *= 2
  const tree = new Int32Array(2 * size)
  for (let r = 0; r < size; r++) tree[size + r] = Math.min(r, n)
  for (let i = size - 1; i >= 1; i--)
    tree[i] = winner(requests, tokens, byTokens, excluded, tree[2 * i]!, tree[2 * i + 1]!)
  return tree
}

/**
 * Charge rank `rank` `times` times in `t` (`times` is 1, or -1 to take a charge back): `+times`
 * requests and `+times * tokens` tokens, then its tournament path.
 */
export const chargeTotals = (t: RankTournament, rank: number, tokens: number, times = 1): void => {
  const requests = t.requests
  const tok = t.tokens
  requests[rank]! += times
  tok[rank]! += times * tokens
  const tree = t.tree
  if (tree === undefined) return
  const byTokens = t.byTokens
  const excluded = t.excluded
  for (let i = (tree.length / 2 + rank) >> 1; i >= 1; i >>= 1)
    tree[i] = winner(requests, tok, byTokens, excluded, tree[2 * i]!, tree[2 * i + 1]!)
}

/**
 * The pick of `t` (at least one rank): the lowest index among the minimal keys (see {@link RankTournament}),
 * the tournament's root, or for few ranks `DpBudget`'s scan.
 *
 * @internal
 */
export const pickOf = (t: RankTournament): number => {
  if (t.tree !== undefined) return t.tree[1]!
  const view = {
    totalRequests: t.requests,
    totalTokens: t.tokens,
    lastTimestamp: [],
    requestsUnknown: t.excluded
  }
  return t.byTokens ? argminTokens(view) : argminRequests(view)
}
