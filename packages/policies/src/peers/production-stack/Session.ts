/**
 * production-stack `SessionRouter`. Upstream: vllm-project/production-stack
 * `src/vllm_router/routers/routing_logic.py` (uhashring 2.3 `HashRing`), commit
 * a6c01db05f65f556235413ba8dbcfb0c01132fff.
 *
 * @since 0.2.0
 */
import { ringNode } from "./internal/uhashring.js"
import { psQpsRouting } from "./Qps.js"

const pyFloat = (x: number): string => {
  if (Number.isNaN(x)) return "nan"
  if (!Number.isFinite(x)) return x > 0 ? "inf" : "-inf"
  // a JSON integer is a Python int: all its digits
  if (Number.isInteger(x)) return BigInt(x).toString()
  // Python float repr: shortest round-trip digits, scientific when the exponent is < -4 or >= 16
  const [mant, exp] = x.toExponential().split("e") as [string, string]
  const e = Number(exp)
  if (e < -4 || e >= 16) return `${mant}e${e < 0 ? "-" : "+"}${String(Math.abs(e)).padStart(2, "0")}`
  return String(x)
}

/**
 * Python `str(value)` of a JSON value, as upstream hashes a body session id: strings as is,
 * `true`/`false` -> `True`/`False`, numbers as Python prints them (a JSON `1.0` arrives here as the
 * number 1 and prints `1`, where Python prints `1.0`: the one case JSON parsing cannot keep),
 * lists and objects in Python's repr.
 *
 * **When to use**: to see which key a body session id hashes as.
 *
 * @example
 * ```ts
 * import { ProductionStack } from "@loadledger/policies"
 * ProductionStack.psPythonStr(true) // => "True"
 * ProductionStack.psPythonStr(123) // => "123"
 * ProductionStack.psPythonStr(["a", 1]) // => "['a', 1]"
 * ```
 *
 * @category production-stack
 * @since 0.2.0
 */
export const psPythonStr = (v: unknown): string => {
  const repr = (x: unknown): string =>
    typeof x === "string" ? `'${x.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'` : psPythonStr(x)
  if (typeof v === "string") return v
  if (typeof v === "boolean") return v ? "True" : "False"
  if (typeof v === "number") return pyFloat(v)
  if (v === null || v === undefined) return "None"
  if (Array.isArray(v)) return `[${v.map(repr).join(", ")}]`
  if (typeof v === "object")
    return `{${Object.entries(v as Record<string, unknown>)
      .map(([k, x]) => `${repr(k)}: ${repr(x)}`)
      .join(", ")}}`
  return String(v)
}

/**
 * `SessionRouter.route_request`. The session id is the header `sessionKey` (case-insensitive;
 * present even when empty), else `body[sessionKey]` (any JSON value except `null`, hashed as Python
 * `str()`); with one the uhashring ring over the current `urls` picks (`hash_ring`); without one,
 * {@link psQpsRouting} (`qps`). `qps` maps url -> `request_stats[url].qps` (absent = not in stats).
 *
 * **When to use**: replaying production-stack's session affinity; `production-stack/session` wraps it.
 *
 * @example
 * ```ts
 * import { ProductionStack } from "@loadledger/policies"
 * const urls = ["http://engine1.com", "http://engine2.com"]
 * const out = ProductionStack.psSessionSelect(urls, new Map(), { session_id: "abc123" }, undefined, "session_id")
 * out.url // => "http://engine1.com"
 * out.branch // => "hash_ring"
 * ```
 *
 * @category production-stack
 * @since 0.2.0
 */
export const psSessionSelect = (
  urls: ReadonlyArray<string>,
  qps: ReadonlyMap<string, number>,
  headers: Readonly<Record<string, string>> | undefined,
  body: Readonly<Record<string, unknown>> | undefined,
  sessionKey: string
): {
  readonly url: string | undefined
  readonly branch: "hash_ring" | "qps"
  readonly sessionId?: string
} => {
  let sessionId: string | undefined
  const want = sessionKey.toLowerCase()
  for (const k of Object.keys(headers ?? {}))
    if (k.toLowerCase() === want) {
      sessionId = headers![k]
      break
    }
  if (sessionId === undefined && body !== undefined && Object.hasOwn(body, sessionKey)) {
    const v = body[sessionKey]
    if (v !== null && v !== undefined) sessionId = psPythonStr(v)
  }
  if (sessionId === undefined) return { url: psQpsRouting(urls, qps), branch: "qps" }
  return { url: ringNode(urls, sessionId), branch: "hash_ring", sessionId }
}
