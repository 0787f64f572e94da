/**
 * Where `serve` finds its workers: the `--worker` URLs, `--workers-file`, `--workers-dns`,
 * `--workers-from` and the `--gateway` sources, checked in that order of messages (`parseServeArgs` calls this after parsing
 * the flags). Private to `ServeArgs.ts`.
 */
import { type GatewayKind, gatewayKinds } from "../Gateway.js"
import type { K8sService } from "../K8sWorkers.js"
import { workersFrom, workerUrl } from "./serveFlags.js"

/** The worker sources of a checked `serve` command line (the matching `ServeArgs` fields). */
export interface ServeWorkers {
  readonly workers: ReadonlyArray<string>
  readonly workersFile: string | undefined
  readonly workersDns: { readonly name: string; readonly port: number } | undefined
  readonly workersK8s: K8sService | undefined
  readonly gateways: ReadonlyArray<{ readonly kind: GatewayKind; readonly url: string }>
}

/** Short names `--gateway` takes beside the kinds themselves. */
const gatewayAliases: Readonly<Record<string, GatewayKind>> = {
  smg: "smg-loads",
  dynamo: "dynamo-metrics",
  "llm-d": "llm-d-metrics"
}

/** `--gateway KIND=URL` values, checked; or the message naming the value at fault. */
const serveGateways = (raw: ReadonlyArray<string>): ServeWorkers["gateways"] | { readonly error: string } => {
  const out: Array<{ kind: GatewayKind; url: string }> = []
  for (const g of raw) {
    const eq = g.indexOf("=")
    const name = eq < 0 ? "" : g.slice(0, eq)
    const kind = gatewayAliases[name] ?? (gatewayKinds as ReadonlyArray<string>).find((k) => k === name)
    if (kind === undefined)
      return {
        error: `--gateway is KIND=URL, KIND one of smg, dynamo, llm-d, ${gatewayKinds.join(", ")}; got "${g}"`
      }
    const u = workerUrl(g.slice(eq + 1))
    if (typeof u !== "string") return { error: u.error.replace("--worker", "--gateway's URL") }
    if (out.some((x) => x.url === u)) return { error: `--gateway ${u} is given twice` }
    out.push({ kind: kind as GatewayKind, url: u })
  }
  return out
}

/**
 * Check the worker flags: `rawWorkers` the `--worker` values, `opt` a flag's value if given. One
 * line naming the flag at fault as `{ error }`: a bad `--workers-from` or `--workers-dns`, no
 * worker source at all, a worker URL that is not an http(s) base URL or is given twice.
 */
export const serveWorkers = (
  rawWorkers: ReadonlyArray<string>,
  opt: (k: string) => string | undefined,
  rawGateways: ReadonlyArray<string> = []
): ServeWorkers | { readonly error: string } => {
  const gateways = serveGateways(rawGateways)
  if ("error" in gateways) return gateways
  let workersFile = opt("workers-file")
  let rawDns = opt("workers-dns")
  let workersK8s: K8sService | undefined
  const from = opt("workers-from")
  if (from !== undefined) {
    const f = workersFrom(from)
    if ("error" in f) return f
    if ("k8s" in f) workersK8s = f.k8s
    else if ("dns" in f) rawDns = f.dns
    else workersFile = f.file
  }
  let workersDns: ServeWorkers["workersDns"]
  if (rawDns !== undefined) {
    const m = /^([A-Za-z0-9.-]+):(\d{1,5})$/.exec(rawDns)
    const port = m === null ? Number.NaN : Number(m[2])
    if (m === null || port < 1 || port > 65535)
      return { error: `--workers-dns must be NAME:PORT like engines.default.svc:30000, got "${rawDns}"` }
    workersDns = { name: m[1]!, port }
  }
  if (
    rawWorkers.length === 0 &&
    gateways.length === 0 &&
    workersFile === undefined &&
    workersDns === undefined &&
    workersK8s === undefined
  )
    return {
      error:
        "at least one --worker URL is required (or --workers-file / --workers-dns / --workers-from / --gateway)"
    }
  const workers: Array<string> = []
  for (const w of rawWorkers) {
    const u = workerUrl(w)
    if (typeof u !== "string") return u
    if (workers.includes(u)) return { error: `--worker ${u} is given twice` }
    workers.push(u)
  }
  return { workers, workersFile, workersDns, workersK8s, gateways }
}
