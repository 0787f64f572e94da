/**
 * The flags of `loadledger serve` as data: names, defaults, integer bounds, and the merge of a
 * config file under the command line. Read by `ServeArgs.ts`.
 *
 * @internal
 */

/** Every flag that takes a value, with its default (absent: no default). @internal */
export const valueFlags: Readonly<Record<string, string | undefined>> = {
  worker: undefined,
  gateway: undefined,
  dp: "1",
  source: "sglang-v1-loads",
  policy: "total-requests",
  "policy-config": undefined,
  port: "8000",
  host: "127.0.0.1",
  "interval-ms": "250",
  "timeout-ms": "500",
  "stale-ms": "1000",
  require: undefined,
  replicas: "1",
  "replica-index": "0",
  "connect-timeout-ms": "2000",
  "first-byte-timeout-ms": "300000",
  "idle-timeout-ms": "60000",
  "decode-budget-ms": "1000",
  "eject-after": "3",
  "eject-ms": "10000",
  model: undefined,
  gpu: undefined,
  "max-running-requests": undefined,
  "overload-bound": undefined,
  "drain-ms": "30000",
  bookings: undefined,
  "bookings-group": "default",
  "workers-file": undefined,
  "workers-dns": undefined,
  "workers-from": undefined,
  config: undefined
}

/** Flags without a value. @internal */
export const booleanFlags = new Set(["help", "access-log", "check"])

/** Integer flags and their bounds `[min, max]` (max absent: no upper bound). @internal */
export const integerFlags: Readonly<Record<string, readonly [number, number?]>> = {
  dp: [1, 1024],
  port: [0, 65535],
  "interval-ms": [1],
  "timeout-ms": [1],
  "stale-ms": [1],
  replicas: [1, 1024],
  "replica-index": [0, 1023],
  "connect-timeout-ms": [1],
  "first-byte-timeout-ms": [1],
  "idle-timeout-ms": [1],
  "decode-budget-ms": [1],
  "eject-after": [1],
  "eject-ms": [0],
  "drain-ms": [0]
}

/** `raw` as an integer in `min..max`, or the message naming `--name`. @internal */
export const int = (
  name: string,
  raw: string,
  min: number,
  max = Number.MAX_SAFE_INTEGER
): number | string => {
  const n = /^-?\d+$/.test(raw.trim()) ? Number(raw) : Number.NaN
  return Number.isSafeInteger(n) && n >= min && n <= max
    ? n
    : `--${name} must be an integer from ${min}${max === Number.MAX_SAFE_INTEGER ? " up" : ` to ${max}`}, got "${raw}"`
}

/** An http(s) base URL without path or query, as its origin; or the message. @internal */
export const workerUrl = (raw: string): string | { readonly error: string } => {
  let u: URL
  try {
    u = new URL(raw)
  } catch {
    return { error: `--worker must be an http(s) URL like http://127.0.0.1:30000, got "${raw}"` }
  }
  if ((u.protocol !== "http:" && u.protocol !== "https:") || u.hostname === "")
    return { error: `--worker must be an http(s) URL like http://127.0.0.1:30000, got "${raw}"` }
  if (u.pathname !== "/" || u.search !== "" || u.hash !== "")
    return { error: `--worker is a base URL without path or query, got "${raw}"` }
  return u.origin
}

const kebab = (k: string): string => k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)

/**
 * A config file's values as `--flag=value` tokens, for the flags the command line does not give
 * (the command line wins; a repeated flag such as `--worker` is replaced whole). Keys are the flag
 * names, kebab-case or camelCase (`intervalMs`), `workers` for `worker`, `gateways` for `gateway`;
 * values strings, numbers, booleans (the boolean flags), or arrays (`worker`, `gateway`, `require`). @internal
 */
export const fileTokens = (
  file: Readonly<Record<string, unknown>>,
  given: ReadonlySet<string>,
  fileName: string
): Array<string> | { readonly error: string } => {
  const out: Array<string> = []
  for (const [rawKey, v] of Object.entries(file)) {
    const key = rawKey === "workers" ? "worker" : rawKey === "gateways" ? "gateway" : kebab(rawKey)
    const known = Object.hasOwn(valueFlags, key) || (booleanFlags.has(key) && key !== "help")
    if (!known || key === "config") return { error: `${fileName}: unknown key "${rawKey}"` }
    if (given.has(key)) continue
    if (booleanFlags.has(key)) {
      if (typeof v !== "boolean") return { error: `${fileName}: ${rawKey} must be true or false` }
      if (v) out.push(`--${key}`)
      continue
    }
    const items = Array.isArray(v) ? (key === "require" ? [v.join(",")] : v) : [v]
    if (Array.isArray(v) && key !== "worker" && key !== "gateway" && key !== "require")
      return { error: `${fileName}: ${rawKey} takes one value, got a list` }
    for (const x of items) {
      if (typeof x !== "string" && typeof x !== "number")
        return { error: `${fileName}: ${rawKey} must be a string or a number` }
      out.push(`--${key}=${x}`)
    }
  }
  return out
}

/**
 * `--workers-from SOURCE`: `k8s:NAMESPACE/SERVICE[:PORT]` (PORT a number or a port name),
 * `dns:NAME:PORT` or `file:PATH`; or the message. @internal
 */
export const workersFrom = (
  raw: string
):
  | {
      readonly k8s: {
        readonly namespace: string
        readonly service: string
        readonly port: number | string | undefined
      }
    }
  | { readonly dns: string }
  | { readonly file: string }
  | { readonly error: string } => {
  if (raw.startsWith("file:") && raw.length > 5) return { file: raw.slice(5) }
  if (raw.startsWith("dns:")) return { dns: raw.slice(4) }
  const m = /^k8s:([a-z0-9]([-a-z0-9]*[a-z0-9])?)\/([a-z0-9]([-a-z0-9]*[a-z0-9])?)(:([a-z0-9-]+))?$/.exec(raw)
  if (m === null)
    return {
      error: `--workers-from must be k8s:NAMESPACE/SERVICE[:PORT], dns:NAME:PORT or file:PATH, got "${raw}"`
    }
  const p = m[6]
  const port = p === undefined ? undefined : /^\d+$/.test(p) ? Number(p) : p
  if (typeof port === "number" && (port < 1 || port > 65535))
    return { error: `--workers-from port must be from 1 to 65535, got ${port}` }
  return { k8s: { namespace: m[1]!, service: m[3]!, port } }
}
