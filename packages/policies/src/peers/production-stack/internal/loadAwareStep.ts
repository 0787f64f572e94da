/**
 * One `production-stack/loadaware` placement inside `makePsPolicy`: the router-side block index
 * (a `hashTrie` over the trace's blocks, recorded for the engine each prompt went to) stands in
 * for the LMCache controller's `lookup`; `psLoadAwareSelect` decides.
 */
import type { PolicyError, RouteRequest } from "../../../Policy.js"
import { blocksAsChunks } from "../../internal/blocks.js"
import { psLoadAwareSelect } from "../LoadAware.js"
import { chunkHashes, heldDepth, insertTrie, type TrieNode } from "./hashTrie.js"

const urlOf = (rank: number) => `rank-${rank}`

export interface LoadAwareStep {
  readonly _tag: "LoadAwareStep"
  readonly url: string | undefined
  readonly core: { readonly trie: TrieNode }
  readonly details: Readonly<Record<string, unknown>>
  readonly tieBreak: string
}

export const loadAwareStep = (
  core: unknown,
  ranks: number,
  inflight: ReadonlyArray<number>,
  urls: ReadonlyArray<string>,
  qps: ReadonlyMap<string, number>,
  req: RouteRequest,
  headers: Readonly<Record<string, string>> | undefined,
  o: { readonly beta: number; readonly blockTokens: number; readonly sessionKey: string }
): LoadAwareStep | PolicyError => {
  const trie = (core as { readonly trie: TrieNode }).trie
  const hashes = chunkHashes(blocksAsChunks(req.prefixHashes))
  // the controller knows every engine, healthy or not: a down engine can hold the prefix (layout
  // non-empty) while only the healthy ones are scored
  const layout = new Map<string, number>()
  const bridge: Array<[string, string]> = []
  for (let i = 0; i < ranks; i++) {
    bridge.push([urlOf(i), urlOf(i)])
    const d = heldDepth(trie, hashes, urlOf(i))
    if (d > 0) layout.set(urlOf(i), d * o.blockTokens)
  }
  const loads = new Map(urls.map((u) => [u, inflight[Number(u.slice(5))]!]))
  const out = psLoadAwareSelect({
    urls,
    loads,
    qps,
    layout,
    instanceToUrl: bridge,
    promptTokens: req.inputLength,
    beta: o.beta,
    headers,
    sessionKey: o.sessionKey
  })
  if (out._tag === "PolicyError") return out
  return {
    _tag: "LoadAwareStep",
    url: out.url,
    core: out.url === undefined ? { trie } : { trie: insertTrie(trie, hashes, out.url) },
    details: {
      branch: out.branch,
      matchedTokens: Object.fromEntries(layout),
      scores: Object.fromEntries(out.scores),
      sessionId: out.sessionId
    },
    tieBreak:
      out.branch === "loadaware"
        ? "argmax of cached fraction - beta x relative load; a tie to the code-point-smallest url"
        : out.branch === "qps"
          ? "no engine holds the prefix: first engine missing from the stats, else first minimum QPS"
          : "no engine holds the prefix: uhashring MD5 ring"
  }
}
