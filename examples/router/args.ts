/**
 * The example router's command line, parsed and validated without side effects: a config, or one
 * line saying what is wrong (exit code 2).
 */
import { parseArgs } from "node:util"
import type { LoadField, SourceKind } from "@loadledger/live"
import { findPolicy, policyEntries } from "@loadledger/policies"
import { gpus, models } from "@loadledger/step-time"

export interface RouterArgs {
  readonly workers: ReadonlyArray<string>
  readonly dp: number
  readonly source: SourceKind
  readonly policy: string
  readonly port: number
  readonly host: string
  readonly intervalMs: number
  readonly timeoutMs: number
  readonly staleMs: number
  /** `--require`; absent: the library's default (a rank is known with at least one load count, partial rows included). */
  readonly requiredFields: ReadonlyArray<LoadField> | undefined
  readonly replicas: number
  readonly replicaIndex: number
  readonly connectTimeoutMs: number
  readonly firstByteTimeoutMs: number
  readonly idleTimeoutMs: number
  readonly decodeBudgetMs: number
  readonly ejectAfter: number
  readonly ejectMs: number
  /** `--model` / `--gpu`: the served model's presets (both or neither), for the policy's step cost. */
  readonly model: string | undefined
  readonly gpu: string | undefined
  /** `--max-running-requests`: the engines' per-rank cap, for policies that price running slots. */
  readonly maxRunningRequests: number | undefined
}

export const usage = `usage: main.ts --worker URL [--worker URL ...] [--dp N] [--source sglang-v1-loads|sglang-get-load|sglang-metrics|vllm-metrics]
  [--policy NAME] [--port 8000] [--host 127.0.0.1] [--interval-ms 250] [--timeout-ms 500] [--stale-ms 1000]
  [--require numRunningReqs,numWaitingReqs,numTotalTokens] [--replicas 1] [--replica-index 0]
  [--connect-timeout-ms 2000] [--first-byte-timeout-ms 300000] [--idle-timeout-ms 60000] [--decode-budget-ms 1000]
  [--eject-after 3] [--eject-ms 10000] [--model glm-5.3 --gpu h200] [--max-running-requests N]`

const kinds: ReadonlyArray<SourceKind> = [
  "sglang-v1-loads",
  "sglang-get-load",
  "sglang-metrics",
  "vllm-metrics"
]
const fields: ReadonlyArray<LoadField> = [
  "numRunningReqs",
  "numWaitingReqs",
  "numTotalTokens",
  "kvCacheUsage"
]

const valueFlags = new Set([
  "worker",
  "dp",
  "source",
  "policy",
  "port",
  "host",
  "interval-ms",
  "timeout-ms",
  "stale-ms",
  "require",
  "replicas",
  "replica-index",
  "connect-timeout-ms",
  "first-byte-timeout-ms",
  "idle-timeout-ms",
  "decode-budget-ms",
  "eject-after",
  "eject-ms",
  "model",
  "gpu",
  "max-running-requests"
])

const int = (name: string, raw: string, min: number, max = Number.MAX_SAFE_INTEGER): number | string => {
  const n = /^-?\d+$/.test(raw.trim()) ? Number(raw) : Number.NaN
  return Number.isSafeInteger(n) && n >= min && n <= max
    ? n
    : `--${name} must be an integer from ${min}${max === Number.MAX_SAFE_INTEGER ? " up" : ` to ${max}`}, got "${raw}"`
}

const workerUrl = (raw: string): string | { readonly error: string } => {
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

/** Parse `argv` (without node and script): the config, `"help"`, or an error line. */
export const parseRouterArgs = (
  argv: ReadonlyArray<string>
): RouterArgs | "help" | { readonly error: string } => {
  let values: Record<string, string | boolean | Array<string> | undefined>
  // `--dp -1` is a value, not an option: join every value flag with its argument first
  const joined: Array<string> = []
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!
    const name = a.startsWith("--") && !a.includes("=") ? a.slice(2) : undefined
    if (name !== undefined && name !== "help" && valueFlags.has(name) && i + 1 < argv.length) {
      joined.push(`${a}=${argv[i + 1]}`)
      i++
    } else joined.push(a)
  }
  try {
    values = parseArgs({
      args: joined,
      strict: true,
      allowPositionals: false,
      options: {
        worker: { type: "string", multiple: true, default: [] },
        dp: { type: "string", default: "1" },
        source: { type: "string", default: "sglang-v1-loads" },
        policy: { type: "string", default: "total-requests" },
        port: { type: "string", default: "8000" },
        host: { type: "string", default: "127.0.0.1" },
        "interval-ms": { type: "string", default: "250" },
        "timeout-ms": { type: "string", default: "500" },
        "stale-ms": { type: "string", default: "1000" },
        require: { type: "string" },
        replicas: { type: "string", default: "1" },
        "replica-index": { type: "string", default: "0" },
        "connect-timeout-ms": { type: "string", default: "2000" },
        "first-byte-timeout-ms": { type: "string", default: "300000" },
        "idle-timeout-ms": { type: "string", default: "60000" },
        "decode-budget-ms": { type: "string", default: "1000" },
        "eject-after": { type: "string", default: "3" },
        "eject-ms": { type: "string", default: "10000" },
        model: { type: "string" },
        gpu: { type: "string" },
        "max-running-requests": { type: "string" },
        help: { type: "boolean", default: false }
      }
    }).values
  } catch (e) {
    return { error: e instanceof Error ? e.message.split("\n")[0]! : String(e) }
  }
  if (values.help === true) return "help"
  const s = (k: string) => values[k] as string
  const rawWorkers = values.worker as Array<string>
  if (rawWorkers.length === 0) return { error: "at least one --worker URL is required" }
  const workers: Array<string> = []
  for (const w of rawWorkers) {
    const u = workerUrl(w)
    if (typeof u !== "string") return u
    if (workers.includes(u)) return { error: `--worker ${u} is given twice` }
    workers.push(u)
  }
  if (!kinds.includes(s("source") as SourceKind))
    return { error: `--source must be one of ${kinds.join(", ")}, got "${s("source")}"` }
  if (findPolicy(s("policy")) === undefined)
    return {
      error: `unknown --policy "${s("policy")}"; registered: ${policyEntries()
        .map((e) => e.name)
        .join(", ")}`
    }
  const numbers: Record<string, readonly [number, number?]> = {
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
    "eject-ms": [0]
  }
  const n: Record<string, number> = {}
  for (const [k, [min, max]] of Object.entries(numbers)) {
    const v = int(k, s(k), min, max)
    if (typeof v === "string") return { error: v }
    n[k] = v
  }
  if (n["replica-index"]! >= n.replicas!)
    return { error: `--replica-index must be below --replicas (${n.replicas}), got ${n["replica-index"]}` }
  const source = s("source") as SourceKind
  // absent: the router's default, a row with at least one load count is known (partial rows included)
  const required = (values.require as string | undefined)?.split(",")
  for (const f of required ?? [])
    if (!fields.includes(f as LoadField)) return { error: `--require takes ${fields.join(", ")}, got "${f}"` }
  const model = values.model as string | undefined
  const gpu = values.gpu as string | undefined
  if ((model === undefined) !== (gpu === undefined)) return { error: "--model and --gpu go together" }
  if (model !== undefined && models[model] === undefined)
    return { error: `--model must be one of ${Object.keys(models).join(", ")}, got "${model}"` }
  if (gpu !== undefined && gpus[gpu] === undefined)
    return { error: `--gpu must be one of ${Object.keys(gpus).join(", ")}, got "${gpu}"` }
  const rawCap = values["max-running-requests"] as string | undefined
  const cap = rawCap === undefined ? undefined : int("max-running-requests", rawCap, 1)
  if (typeof cap === "string") return { error: cap }
  return {
    workers,
    dp: n.dp!,
    source,
    policy: s("policy"),
    port: n.port!,
    host: s("host"),
    intervalMs: n["interval-ms"]!,
    timeoutMs: n["timeout-ms"]!,
    staleMs: n["stale-ms"]!,
    requiredFields: required as Array<LoadField> | undefined,
    replicas: n.replicas!,
    replicaIndex: n["replica-index"]!,
    connectTimeoutMs: n["connect-timeout-ms"]!,
    firstByteTimeoutMs: n["first-byte-timeout-ms"]!,
    idleTimeoutMs: n["idle-timeout-ms"]!,
    decodeBudgetMs: n["decode-budget-ms"]!,
    ejectAfter: n["eject-after"]!,
    ejectMs: n["eject-ms"]!,
    model,
    gpu,
    maxRunningRequests: cap
  }
}
