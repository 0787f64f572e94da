/**
 * The command line of `loadledger serve` (and of the example router), parsed and checked without
 * side effects: a `ServeArgs`, `"help"`, or one line saying what is wrong.
 *
 * @since 0.4.0
 */
import { parseArgs } from "node:util"
import { findPolicy, policyEntries } from "@loadledger/policies"
import type { GatewayKind } from "./Gateway.js"
import { booleanFlags, fileTokens, int, integerFlags, valueFlags } from "./internal/serveFlags.js"
import { optionLines } from "./internal/serveHelp.js"
import { serveWorkers } from "./internal/serveWorkers.js"
import type { K8sService } from "./K8sWorkers.js"
import type { LoadField, SourceKind } from "./Types.js"

/**
 * A checked `serve` command line. Times in milliseconds, as the flags give them; `requiredFields`
 * absent: the router's default (a row with at least one load count is known, partial rows
 * included); `model` / `gpu`: the served model's step-time presets (both or neither);
 * `bookings`: a `redis://` / `valkey://` URL of the store replicas share bookings through (absent:
 * in process, this replica alone), `bookingsGroup` the key prefix replicas of one fleet share;
 * `config`: the config file the values came from, if any.
 *
 * @category models
 * @since 0.4.0
 */
export interface ServeArgs {
  readonly workers: ReadonlyArray<string>
  readonly dp: number
  readonly source: SourceKind
  readonly policy: string
  /** `--policy-config FILE`: an own policy as JSON (`PolicyConfig`, e.g. `loadledger tune`'s); wins over `policy`. */
  readonly policyConfig: string | undefined
  readonly port: number
  readonly host: string
  readonly intervalMs: number
  readonly timeoutMs: number
  readonly staleMs: number
  readonly requiredFields: ReadonlyArray<LoadField> | undefined
  readonly replicas: number
  readonly replicaIndex: number
  readonly connectTimeoutMs: number
  readonly firstByteTimeoutMs: number
  readonly idleTimeoutMs: number
  readonly decodeBudgetMs: number
  readonly ejectAfter: number
  readonly ejectMs: number
  readonly model: string | undefined
  readonly gpu: string | undefined
  readonly maxRunningRequests: number | undefined
  /** `--overload-bound N`: requests in flight per rank past which it is skipped (`RouterOptions`). */
  readonly overloadBound: number | undefined
  readonly drainMs: number
  readonly accessLog: boolean
  /** `--check`: check the flags, the config file and the policy, print them and exit without listening. */
  readonly check: boolean
  readonly bookings: string | undefined
  readonly bookingsGroup: string
  readonly config: string | undefined
  /** `--workers-file`: a watched list of worker URLs (see `watchWorkerFile`). */
  readonly workersFile: string | undefined
  /** `--workers-dns NAME:PORT`: workers at every address NAME resolves to (see `watchWorkerDns`). */
  readonly workersDns: { readonly name: string; readonly port: number } | undefined
  /** `--workers-from k8s:NAMESPACE/SERVICE[:PORT]`: the Service's EndpointSlices (see `watchWorkerEndpointSlices`). */
  readonly workersK8s: K8sService | undefined
  /**
   * `--gateway KIND=URL` (repeatable; KIND `smg` = `smg-loads`, `smg-metrics`, `dynamo` =
   * `dynamo-metrics`, `llm-d` = `llm-d-metrics`): gateways whose fleet report feeds the router
   * (see `GatewaySpec`: the workers they name by URL are routed to; others observed only).
   */
  readonly gateways: ReadonlyArray<{ readonly kind: GatewayKind; readonly url: string }>
}

/**
 * The usage text of `loadledger serve`.
 *
 * @example
 * ```ts
 * import { serveUsage } from "@loadledger/live"
 * serveUsage.startsWith("usage: loadledger serve --worker URL") // => true
 * ```
 *
 * @category cli
 * @since 0.4.0
 */
export const serveUsage = `usage: loadledger serve --worker URL [--worker URL ...] [options]
       loadledger serve --gateway KIND=URL [options]
       loadledger serve --workers-file FILE | --workers-dns NAME:PORT | --workers-from SOURCE
       loadledger serve --config FILE [options]

Run the live router: a reverse proxy for OpenAI-style completions (/v1/completions,
/v1/chat/completions) that places each request on a DP rank with a loadledger policy over the
engines' polled load reports; /healthz, /readyz, /metrics, /router/ranks; JSON log lines on stdout;
SIGTERM / SIGINT drains. Every flag is checked before anything starts (exit 2 on a bad one).

Options:
${optionLines()}`

const kinds: ReadonlyArray<SourceKind> = [
  "sglang-v1-loads",
  "sglang-get-load",
  "sglang-metrics",
  "vllm-metrics",
  "trtllm-iteration-stats",
  "trtllm-metrics"
]
const fields: ReadonlyArray<LoadField> = [
  "numRunningReqs",
  "numWaitingReqs",
  "numTotalTokens",
  "kvCacheUsage"
]

/** `--dp -1` is a value, not an option: each value flag is joined with its argument first. */
const joinValues = (argv: ReadonlyArray<string>): Array<string> => {
  const joined: Array<string> = []
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!
    const name = a.startsWith("--") && !a.includes("=") ? a.slice(2) : undefined
    if (name !== undefined && Object.hasOwn(valueFlags, name) && i + 1 < argv.length) {
      joined.push(`${a}=${argv[i + 1]}`)
      i++
    } else joined.push(a)
  }
  return joined
}

const flagName = (token: string): string | undefined =>
  token.startsWith("--") ? token.slice(2).split("=")[0] : undefined

/**
 * The `--config FILE` of a command line, if given (read it, then pass its values to
 * `parseServeArgs`).
 *
 * @example
 * ```ts
 * import { serveConfigPath } from "@loadledger/live"
 * serveConfigPath(["--worker", "http://h:1", "--config", "router.yaml"]) // => "router.yaml"
 * serveConfigPath(["--config=router.json"]) // => "router.json"
 * serveConfigPath(["--worker", "http://h:1"]) // => undefined
 * ```
 *
 * @category cli
 * @since 0.4.0
 */
export const serveConfigPath = (argv: ReadonlyArray<string>): string | undefined => {
  let out: string | undefined
  for (const t of joinValues(argv)) if (flagName(t) === "config") out = t.slice("--config=".length)
  return out
}

/**
 * Parse and check a `serve` command line (`argv` without node, script and command name), with the
 * values of a config file under it (`file`: its name, for messages, and its parsed object; the
 * command line wins). `presets` lists the step-time model and GPU names `--model` / `--gpu` may
 * take (unchecked when absent).
 *
 * **Errors**: one line naming the flag (or the file's key) at fault, as `{ error }`: an integer out
 * of its bounds, a worker URL that is not an http(s) base URL or is given twice, no worker, an
 * unknown `--source`, `--policy`, `--require` field, model or GPU, `--replica-index` not below
 * `--replicas`, `--model` without `--gpu`, a `--bookings` URL that is not `redis://` or
 * `valkey://`, an unknown flag or key.
 *
 * @example
 * ```ts
 * import { parseServeArgs } from "@loadledger/live"
 * const a = parseServeArgs(["--worker", "http://127.0.0.1:9001/", "--dp", "2"], { file: { name: "r.yaml", values: { dp: 4, intervalMs: 100 } } })
 * typeof a === "object" && "workers" in a && [a.workers, a.dp, a.intervalMs] // => [["http://127.0.0.1:9001"], 2, 100]
 * parseServeArgs(["--worker", "http://127.0.0.1:9001", "--dp", "0"]) // => { error: '--dp must be an integer from 1 to 1024, got "0"' }
 * ```
 *
 * @category cli
 * @since 0.4.0
 */
export const parseServeArgs = (
  argv: ReadonlyArray<string>,
  options: {
    readonly file?: { readonly name: string; readonly values: Readonly<Record<string, unknown>> } | undefined
    readonly presets?:
      | { readonly models: ReadonlyArray<string>; readonly gpus: ReadonlyArray<string> }
      | undefined
  } = {}
): ServeArgs | "help" | { readonly error: string } => {
  const joined = joinValues(argv)
  if (options.file !== undefined) {
    const given = new Set(joined.map(flagName).filter((x) => x !== undefined))
    const extra = fileTokens(options.file.values, given, options.file.name)
    if (!Array.isArray(extra)) return extra
    joined.unshift(...extra)
  }
  let values: Record<string, string | boolean | Array<string> | undefined>
  try {
    values = parseArgs({
      args: joined,
      strict: true,
      allowPositionals: false,
      options: {
        ...Object.fromEntries(
          Object.entries(valueFlags).map(([k, d]) => [
            k,
            k === "worker" || k === "gateway"
              ? { type: "string" as const, multiple: true, default: [] }
              : d === undefined
                ? { type: "string" as const }
                : { type: "string" as const, default: d }
          ])
        ),
        ...Object.fromEntries([...booleanFlags].map((k) => [k, { type: "boolean" as const, default: false }]))
      }
    }).values
  } catch (e) {
    return { error: e instanceof Error ? e.message.split("\n")[0]! : String(e) }
  }
  if (values.help === true) return "help"
  const s = (k: string) => values[k] as string
  const opt = (k: string) => values[k] as string | undefined
  const w = serveWorkers(values.worker as Array<string>, opt, values.gateway as Array<string>)
  if ("error" in w) return w
  const { workers, workersFile, workersDns, workersK8s, gateways } = w
  if (!kinds.includes(s("source") as SourceKind))
    return { error: `--source must be one of ${kinds.join(", ")}, got "${s("source")}"` }
  if (findPolicy(s("policy")) === undefined)
    return {
      error: `unknown --policy "${s("policy")}"; registered: ${policyEntries()
        .map((e) => e.name)
        .join(", ")}`
    }
  const n: Record<string, number> = {}
  for (const [k, [min, max]] of Object.entries(integerFlags)) {
    const v = int(k, s(k), min, max)
    if (typeof v === "string") return { error: v }
    n[k] = v
  }
  if (n["replica-index"]! >= n.replicas!)
    return { error: `--replica-index must be below --replicas (${n.replicas}), got ${n["replica-index"]}` }
  const required = opt("require")?.split(",")
  for (const f of required ?? [])
    if (!fields.includes(f as LoadField)) return { error: `--require takes ${fields.join(", ")}, got "${f}"` }
  const model = opt("model")
  const gpu = opt("gpu")
  if ((model === undefined) !== (gpu === undefined)) return { error: "--model and --gpu go together" }
  const presets = options.presets
  if (model !== undefined && presets !== undefined && !presets.models.includes(model))
    return { error: `--model must be one of ${presets.models.join(", ")}, got "${model}"` }
  if (gpu !== undefined && presets !== undefined && !presets.gpus.includes(gpu))
    return { error: `--gpu must be one of ${presets.gpus.join(", ")}, got "${gpu}"` }
  const rawCap = opt("max-running-requests")
  const cap = rawCap === undefined ? undefined : int("max-running-requests", rawCap, 1)
  if (typeof cap === "string") return { error: cap }
  const rawBound = opt("overload-bound")
  const overloadBound = rawBound === undefined ? undefined : int("overload-bound", rawBound, 1)
  if (typeof overloadBound === "string") return { error: overloadBound }
  const bookings = opt("bookings")
  if (bookings !== undefined && !/^(redis|rediss|valkey|valkeys):\/\/[^/\s]/.test(bookings))
    return {
      error: `--bookings must be a redis:// or valkey:// URL like redis://127.0.0.1:6379, got "${bookings}"`
    }
  return {
    workers,
    dp: n.dp!,
    source: s("source") as SourceKind,
    policy: s("policy"),
    policyConfig: opt("policy-config"),
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
    maxRunningRequests: cap,
    overloadBound,
    drainMs: n["drain-ms"]!,
    accessLog: values["access-log"] === true,
    check: values.check === true,
    bookings,
    bookingsGroup: s("bookings-group"),
    config: opt("config"),
    workersFile,
    workersDns,
    workersK8s,
    gateways
  }
}
