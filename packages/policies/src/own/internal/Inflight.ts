/**
 * What one front end has in flight per rank.
 *
 * @internal
 */
import { packed } from "../../internal/packed.js"
import { emptyTrie, getTrie, type HashTrie, setTrie } from "./HashTrie.js"

/** Per-rank in-flight requests and prompt tokens, and `requestId -> [rank, tokens]`. */
export interface Inflight {
  readonly requests: ReadonlyArray<number>
  readonly tokens: ReadonlyArray<number>
  readonly byId: HashTrie<readonly [number, number]>
}

/** Nothing in flight on `dpSize` ranks (at most `maxTracked` request ids remembered). */
export const emptyInflight = (dpSize: number, maxTracked = 1_000_000): Inflight => ({
  requests: packed<number>(dpSize, 0),
  tokens: packed<number>(dpSize, 0),
  byId: emptyTrie(maxTracked)
})

/** `requestId` routed to `rank` with a prompt of `tokens`. */
export const addInflight = (s: Inflight, requestId: string, rank: number, tokens: number): Inflight => {
  const requests = s.requests.slice()
  requests[rank] = requests[rank]! + 1
  const tok = s.tokens.slice()
  tok[rank] = tok[rank]! + tokens
  return { requests, tokens: tok, byId: setTrie(s.byId, requestId, [rank, tokens] as const) }
}

/** The requests of `ids` finished (unknown ids and ids already finished are ignored). */
export const finishInflight = (s: Inflight, ids: ReadonlyArray<string>, ranks?: Array<number>): Inflight => {
  let requests: Array<number> | undefined
  let tokens: Array<number> | undefined
  let byId = s.byId
  for (const id of ids) {
    const x = getTrie(byId, id)
    if (x === undefined) continue
    requests ??= s.requests.slice()
    tokens ??= s.tokens.slice()
    requests[x[0]] = Math.max(0, requests[x[0]]! - 1)
    tokens[x[0]] = Math.max(0, tokens[x[0]]! - x[1])
    byId = setTrie(byId, id, undefined)
    ranks?.push(x[0])
  }
  return requests === undefined ? s : { requests, tokens: tokens!, byId }
}
