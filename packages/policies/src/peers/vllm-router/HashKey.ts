/**
 * The routing key vllm-project/router's `consistent_hash` and `rendezvous_hash` hash
 * (`extract_hash_key`): a session header, else a session or user field of the body, else the body
 * itself. Written from vllm-project/router `src/policies/hash_key.rs` (commit
 * `335c57e2ee621d7984ed645c9d23e871cd34331a`).
 *
 * @since 0.7.0
 */
import { fbiHash } from "./FbiHash.js"

/**
 * The headers upstream reads a session key from, in priority order (`SESSION_HEADER_NAMES`;
 * lower-case names, as the router lower-cases request headers).
 *
 * @example
 * ```ts
 * import { VllmRouter } from "@loadledger/policies"
 * VllmRouter.VLLM_ROUTER_SESSION_HEADERS[0] // => "x-session-id"
 * ```
 *
 * @category vllm-router
 * @since 0.7.0
 */
export const VLLM_ROUTER_SESSION_HEADERS: ReadonlyArray<string> = [
  "x-session-id",
  "x-user-id",
  "x-tenant-id",
  "x-correlation-id",
  "x-request-id",
  "x-trace-id"
]

const isWhitespace = (c: string): boolean => /\s/u.test(c)

/** Upstream `extract_field_value`: the first occurrence of `"f"`, `'f'` or `f` followed by `:`. */
const fieldValue = (text: string, field: string): string | undefined => {
  for (const pattern of [`"${field}"`, `'${field}'`, field]) {
    const at = text.indexOf(pattern)
    if (at < 0) continue
    const after = text.slice(at + pattern.length)
    let colon = -1
    for (let i = 0; i < after.length; i++) {
      if (after[i] === ":") {
        colon = i
        break
      }
      if (!isWhitespace(after[i]!)) break
    }
    if (colon < 0) continue
    const v = after.slice(colon + 1).replace(/^\s+/u, "")
    if (v.startsWith('"') || v.startsWith("'")) {
      const end = v.indexOf(v[0]!, 1)
      if (end >= 0) return v.slice(1, end)
      continue
    }
    const stop = v.search(/[, }\]\n\r\t]/u)
    const end = stop < 0 ? v.length : stop
    if (end > 0) return v.slice(0, end)
  }
  return undefined
}

/** Upstream `extract_nested_field_value(text, parent, child)` with its brace matching. */
const nestedValue = (text: string, parent: string, child: string): string | undefined => {
  let start: number | undefined
  for (const pattern of [`"${parent}"`, `'${parent}'`]) {
    const at = text.indexOf(pattern)
    if (at < 0) continue
    const after = text.slice(at + pattern.length)
    for (let i = 0; i < after.length; i++) {
      if (after[i] === ":") {
        start = at + pattern.length + i + 1
        break
      }
      if (!isWhitespace(after[i]!)) break
    }
    if (start !== undefined) break
  }
  if (start === undefined) return undefined
  const open = text.indexOf("{", start)
  if (open < 0) return undefined
  let depth = 0
  for (let i = open; i < text.length; i++) {
    if (text[i] === "{") depth++
    else if (text[i] === "}" && --depth === 0) return fieldValue(text.slice(open, i + 1), child)
  }
  return undefined
}

/**
 * Upstream `extract_hash_key(request_text, headers)`: the first non-empty header of
 * {@link VLLM_ROUTER_SESSION_HEADERS} as `header:<name>:<value>`; else from the body text
 * `session_params.session_id` (`session:`), `user` (`user:`), `session_id` (`session:`),
 * `user_id` (`user:`), found by upstream's substring scan (quoted, single-quoted or bare values);
 * else the body itself: longer than 100 bytes as `request_hash:` and its `fbiHash` in 16 hex
 * digits, otherwise `request:` and the text (`request:` for no body).
 *
 * **Gotchas**: the body scan is upstream's, not a JSON parser: the first occurrence of the field
 * name anywhere (inside a prompt too) wins.
 *
 * @example
 * ```ts
 * import { VllmRouter } from "@loadledger/policies"
 * VllmRouter.vllmRouterHashKey({ "x-request-id": "req-1", "x-session-id": "sess-1" }, undefined) // => "header:x-session-id:sess-1"
 * VllmRouter.vllmRouterHashKey({}, '{"session_params": {"session_id": "nested"}, "session_id": "direct"}') // => "session:nested"
 * VllmRouter.vllmRouterHashKey({}, '{"user": "alice", "prompt": "hi"}') // => "user:alice"
 * VllmRouter.vllmRouterHashKey({}, "short") // => "request:short"
 * ```
 *
 * @category vllm-router
 * @since 0.7.0
 */
export const vllmRouterHashKey = (
  headers: Readonly<Record<string, string>>,
  requestText: string | undefined
): string => {
  for (const name of VLLM_ROUTER_SESSION_HEADERS) {
    const v = headers[name]
    if (v !== undefined && v !== "") return `header:${name}:${v}`
  }
  const text = requestText ?? ""
  if (text !== "") {
    const nested = nestedValue(text, "session_params", "session_id")
    if (nested !== undefined) return `session:${nested}`
    const user = fieldValue(text, "user")
    if (user !== undefined) return `user:${user}`
    const session = fieldValue(text, "session_id")
    if (session !== undefined) return `session:${session}`
    const userId = fieldValue(text, "user_id")
    if (userId !== undefined) return `user:${userId}`
  }
  if (new TextEncoder().encode(text).length > 100)
    return `request_hash:${fbiHash(text).toString(16).padStart(16, "0")}`
  return `request:${text}`
}
