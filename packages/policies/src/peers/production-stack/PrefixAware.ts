/**
 * production-stack `PrefixAwareRouter`. Upstream: vllm-project/production-stack
 * `src/vllm_router/routers/routing_logic.py` and `src/vllm_router/prefix/hashtrie.py`, commit
 * a6c01db05f65f556235413ba8dbcfb0c01132fff (xxhash 3.5.0).
 *
 * @since 0.2.0
 */
import { type PolicyError, policyError } from "../../Policy.js"
import { chunkHashes, emptyTrie, insertTrie, longestPrefixMatch, type TrieNode } from "./internal/hashTrie.js"
import { psQpsRouting } from "./Qps.js"

/**
 * State of production-stack `prefixaware`: the hash trie (opaque; grows without eviction, as upstream).
 *
 * @category production-stack
 * @since 0.2.0
 */
export interface PsPrefixAwareState {
  readonly trie: unknown
}

/**
 * A fresh, empty `prefixaware` state.
 *
 * **When to use**: before the first {@link psPrefixAwareSelect}.
 *
 * @example
 * ```ts
 * import { ProductionStack } from "@loadledger/policies"
 * ProductionStack.psPrefixAwareInit().trie !== undefined // => true
 * ```
 *
 * @category production-stack
 * @since 0.2.0
 */
export const psPrefixAwareInit = (): PsPrefixAwareState => ({ trie: emptyTrie })

/**
 * The prompt `prefixaware` matches: with `messages`, their contents joined by `"\n"` (a string
 * content as is, absent -> `""`, `null` skipped, a list -> the `text` of its `type: "text"` parts
 * joined by `" "`); otherwise `body.prompt` (`""` when absent).
 *
 * **When to use**: to see what text the trie is keyed on.
 *
 * @example
 * ```ts
 * import { ProductionStack } from "@loadledger/policies"
 * ProductionStack.psPrompt({ messages: [{ content: "a" }, { content: [{ type: "text", text: "b" }, { type: "text", text: "c" }] }] })
 * // => "a\nb c"
 * ```
 *
 * @category production-stack
 * @since 0.2.0
 */
export const psPrompt = (body: Readonly<Record<string, unknown>> | undefined): string => {
  const b = body ?? {}
  if (Object.hasOwn(b, "messages") && Array.isArray(b.messages)) {
    const parts: Array<string> = []
    for (const m of b.messages as ReadonlyArray<Record<string, unknown>>) {
      const c = m?.content
      if (c === null) continue
      if (c === undefined) parts.push("")
      else if (typeof c === "string") parts.push(c)
      else if (Array.isArray(c))
        parts.push(
          (c as ReadonlyArray<Record<string, unknown>>)
            .filter((p) => p?.type === "text")
            .map((p) => String(p.text ?? ""))
            .join(" ")
        )
      else parts.push(String(c))
    }
    return parts.join("\n")
  }
  return typeof b.prompt === "string" ? b.prompt : b.prompt === undefined ? "" : String(b.prompt)
}

/**
 * What {@link psPrefixAwareSelect} decided: the url (`undefined` when upstream raises: `error` names
 * the exception), the next state, `branch` (`prefix_match` | `qps_fallback`), `matchLength`
 * (characters, 128 per matched chunk), `candidates` (the surviving endpoints, in `urls` order).
 *
 * @category production-stack
 * @since 0.2.0
 */
export interface PsPrefixAwareSelected {
  readonly _tag: "PsPrefixAwareSelected"
  readonly url: string | undefined
  readonly state: PsPrefixAwareState
  readonly branch: "prefix_match" | "qps_fallback"
  readonly matchLength: number
  readonly candidates: ReadonlyArray<string>
  readonly error?: "IndexError" | undefined
}

/**
 * `PrefixAwareRouter.route_request`: longest prefix match of the prompt's 128-character chunks over
 * the endpoints still holding every matched chunk; below `prefixMinMatchLength` (default 0) the
 * request goes to {@link psQpsRouting}, otherwise `draws[0]` picks among the candidates
 * (upstream `random.choice(list(set))`, whose order is hash-seeded; here candidates follow `urls`).
 * The prompt is then inserted for the pick. An empty candidate set: `error: "IndexError"`; a
 * missing or out-of-range draw: a `PolicyError` naming `draws[0]`.
 * `mock` replaces the trie lookup (the upstream tests mock `HashTrie`).
 *
 * **When to use**: replaying production-stack's prefix-aware routing; `production-stack/prefixaware`
 * wraps it.
 *
 * @example
 * ```ts
 * import { ProductionStack } from "@loadledger/policies"
 * const urls = ["a", "b"]
 * const first = ProductionStack.psPrefixAwareSelect(ProductionStack.psPrefixAwareInit(), urls, new Map(), "hello", [1])
 * first._tag === "PsPrefixAwareSelected" && first.url // => "b"
 * if (first._tag !== "PsPrefixAwareSelected") throw new Error(first.message)
 * const again = ProductionStack.psPrefixAwareSelect(first.state, urls, new Map(), "hello", [0])
 * again._tag === "PsPrefixAwareSelected" && again.candidates // => ["b"]
 * again._tag === "PsPrefixAwareSelected" && again.matchLength // => 128
 * ```
 *
 * @category production-stack
 * @since 0.2.0
 */
export const psPrefixAwareSelect = (
  state: PsPrefixAwareState,
  urls: ReadonlyArray<string>,
  qps: ReadonlyMap<string, number>,
  prompt: string,
  draws: ReadonlyArray<number>,
  config: { readonly prefixMinMatchLength?: number | undefined } = {},
  mock?: { readonly matchLength: number; readonly endpoints: ReadonlyArray<string> }
): PsPrefixAwareSelected | PolicyError => {
  const trie = state.trie as TrieNode
  const hashes = chunkHashes(prompt)
  const m =
    mock === undefined
      ? longestPrefixMatch(trie, hashes, new Set(urls))
      : { matchLength: mock.matchLength, endpoints: new Set(mock.endpoints) }
  const candidates = [
    ...urls.filter((u) => m.endpoints.has(u)),
    ...[...m.endpoints].filter((u) => !urls.includes(u))
  ]
  const base = { _tag: "PsPrefixAwareSelected" as const, matchLength: m.matchLength, candidates }
  if (m.matchLength < (config.prefixMinMatchLength ?? 0)) {
    const url = psQpsRouting(urls, qps)
    const next = url === undefined ? state : { trie: insertTrie(trie, hashes, url) }
    return { ...base, url, state: next, branch: "qps_fallback" }
  }
  if (candidates.length === 0)
    return { ...base, url: undefined, state, branch: "prefix_match", error: "IndexError" }
  const d = draws[0]
  if (d === undefined || !Number.isInteger(d) || d < 0 || d >= candidates.length)
    return policyError("InvalidInput", `draw 0 must be an integer in [0, ${candidates.length})`, "draws[0]")
  const url = candidates[d]!
  return { ...base, url, state: { trie: insertTrie(trie, hashes, url) }, branch: "prefix_match" }
}
