/**
 * The per-rank charge lists of the in-flight charges (see `InflightCharges.ts`).
 *
 * @internal
 */

import { getTrie, type HashTrie, setTrie } from "./HashTrie.js"
import type { Charge, ChargeList, ChargeNode, IdEntry } from "./LedgerState.js"

export const isExact = (c: Charge): boolean =>
  Number.isSafeInteger(c.requests) && c.requests >= 0 && Number.isSafeInteger(c.tokens) && c.tokens >= 0

export const isLive = (byId: HashTrie<IdEntry>, node: ChargeNode): boolean => {
  const xs = getTrie(byId, node.held.charge.requestId)?.live
  if (xs === undefined) return false
  for (let i = 0; i < xs.length; i++) if (xs[i] === node.held) return true
  return false
}

/** Remove `node` from its request's live charges (it is known to be live). */
export const unlive = (byId: HashTrie<IdEntry>, node: ChargeNode): HashTrie<IdEntry> => {
  const id = node.held.charge.requestId
  const e = getTrie(byId, id)!
  const live = e.live.length === 1 ? [] : e.live.filter((x) => x !== node.held)
  return setTrie(
    byId,
    id,
    live.length === 0 && e.rank === undefined ? undefined : { rank: e.rank, live, routed: e.routed }
  )
}

/** Rebuild a list from nodes given newest first (fresh nodes, same charges). */
export const relink = (nodes: ReadonlyArray<ChargeNode>): ChargeNode | undefined => {
  let head: ChargeNode | undefined
  for (let i = nodes.length - 1; i >= 0; i--) head = { held: nodes[i]!.held, next: head }
  return head
}

export const recount = (nodes: ReadonlyArray<ChargeNode>): readonly [number, number] => {
  let q = 0
  let t = 0
  for (let i = nodes.length - 1; i >= 0; i--) {
    q += nodes[i]!.held.charge.requests
    t += nodes[i]!.held.charge.tokens
  }
  return [q, t]
}

/** The live nodes of a list, newest first. */
export const liveNodes = (byId: HashTrie<IdEntry>, head: ChargeNode | undefined): Array<ChargeNode> => {
  const out: Array<ChargeNode> = []
  for (let x = head; x !== undefined; x = x.next) if (isLive(byId, x)) out.push(x)
  return out
}

export const countInexact = (nodes: ReadonlyArray<ChargeNode>): number => {
  let k = 0
  for (const x of nodes) if (!isExact(x.held.charge)) k++
  return k
}

/** Mutable working copies of the charge columns, made on first change. */
export interface ChargeEdit {
  charges: Array<ChargeList>
  chargedRequests: Array<number>
  chargedTokens: Array<number>
  byId: HashTrie<IdEntry>
}

export const dropIncluded = (e: ChargeEdit, r: number, timestamp: number, margin: number): void => {
  const list = e.charges[r]!
  if (list.live === 0 && list.head === undefined) return
  const kept: Array<ChargeNode> = []
  let removed = false
  let q = e.chargedRequests[r]!
  let t = e.chargedTokens[r]!
  let inexact = list.inexact
  let x = list.head
  // walk newest first; in an ordered list, the first charge to drop means every older one drops too
  for (; x !== undefined; x = x.next) {
    const live = isLive(e.byId, x)
    if (!(x.held.charge.routedAtSeconds + margin < timestamp)) {
      if (live) kept.push(x)
      continue
    }
    if (live) {
      removed = true
      e.byId = unlive(e.byId, x)
      q -= x.held.charge.requests
      t -= x.held.charge.tokens
      if (!isExact(x.held.charge)) inexact--
    }
    if (list.ordered) {
      for (let y = x.next; y !== undefined; y = y.next) {
        if (!isLive(e.byId, y)) continue
        removed = true
        e.byId = unlive(e.byId, y)
        q -= y.held.charge.requests
        t -= y.held.charge.tokens
        if (!isExact(y.held.charge)) inexact--
      }
      break
    }
  }
  if (!removed) return
  if (list.inexact > 0) [q, t] = recount(kept)
  e.charges[r] = {
    head: relink(kept),
    live: kept.length,
    dead: 0,
    inexact,
    ordered: list.ordered || isOrdered(kept)
  }
  e.chargedRequests[r] = kept.length === 0 ? 0 : q
  e.chargedTokens[r] = kept.length === 0 ? 0 : t
}

export const isOrdered = (newestFirst: ReadonlyArray<ChargeNode>): boolean => {
  for (let i = 1; i < newestFirst.length; i++)
    if (!(newestFirst[i]!.held.charge.routedAtSeconds <= newestFirst[i - 1]!.held.charge.routedAtSeconds))
      return false
  return true
}
