/**
 * An immutable model of production-stack's `HashTrie` (`src/vllm_router/prefix/hashtrie.py`,
 * vllm-project/production-stack a6c01db0): 128-code-point chunks, each keyed by XXH64 (seed 0) of
 * its UTF-8 bytes; every node on an inserted path (root included) holds the endpoint. No eviction.
 */
import { xxh64Of } from "../../internal/hashes.js"

export interface TrieNode {
  readonly children: ReadonlyMap<bigint, TrieNode>
  readonly endpoints: ReadonlySet<string>
}

export const emptyTrie: TrieNode = { children: new Map(), endpoints: new Set() }

export const CHUNK = 128

/** Chunk hashes of `prompt`, 128 code points each (the last one may be shorter). */
export const chunkHashes = (prompt: string): Array<bigint> => {
  const cps = Array.from(prompt)
  const out: Array<bigint> = []
  for (let i = 0; i < cps.length; i += CHUNK) out.push(xxh64Of(cps.slice(i, i + CHUNK).join("")))
  return out
}

/** `longest_prefix_match(prompt, available)`: matched length (128 per chunk) and the surviving set. */
export const longestPrefixMatch = (
  root: TrieNode,
  hashes: ReadonlyArray<bigint>,
  available: ReadonlySet<string>
): { readonly matchLength: number; readonly endpoints: ReadonlySet<string> } => {
  let node = root
  let sel: ReadonlySet<string> = available
  let matchLength = 0
  for (const h of hashes) {
    const child = node.children.get(h)
    if (child === undefined) break
    const inter = new Set([...sel].filter((e) => child.endpoints.has(e)))
    if (inter.size === 0) break
    matchLength += CHUNK
    sel = inter
    node = child
  }
  return { matchLength, endpoints: sel }
}

const add = (n: TrieNode, e: string): TrieNode =>
  n.endpoints.has(e) ? n : { ...n, endpoints: new Set([...n.endpoints, e]) }

/** `insert(prompt, endpoint)`: the endpoint joins the root and every chunk node on the path. */
export const insertTrie = (root: TrieNode, hashes: ReadonlyArray<bigint>, endpoint: string): TrieNode => {
  const go = (node: TrieNode, i: number): TrieNode => {
    const here = add(node, endpoint)
    if (i >= hashes.length) return here
    const h = hashes[i]!
    const children = new Map(here.children)
    children.set(h, go(here.children.get(h) ?? emptyTrie, i + 1))
    return { ...here, children }
  }
  return go(root, 0)
}

/** Leading chunks of `hashes` on the path that `endpoint` holds (production-stack/loadaware's index). */
export const heldDepth = (root: TrieNode, hashes: ReadonlyArray<bigint>, endpoint: string): number => {
  let node = root
  let n = 0
  for (const h of hashes) {
    const child = node.children.get(h)
    if (child === undefined || !child.endpoints.has(endpoint)) break
    n++
    node = child
  }
  return n
}
