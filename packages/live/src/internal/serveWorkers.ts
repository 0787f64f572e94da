/**
 * Where `serve` finds its workers: the `--worker` URLs, `--workers-file`, `--workers-dns` and
 * `--workers-from`, checked in that order of messages (`parseServeArgs` calls this after parsing
 * the flags). Private to `ServeArgs.ts`.
 */
import type { K8sService } from "../K8sWorkers.js"
import { workersFrom, workerUrl } from "./serveFlags.js"

/** The worker sources of a checked `serve` command line (the matching `ServeArgs` fields). */
export interface ServeWorkers {
  readonly workers: ReadonlyArray<string>
  readonly workersFile: string | undefined
  readonly workersDns: { readonly name: string; readonly port: number } | undefined
  readonly workersK8s: K8sService | undefined
}

/**
 * Check the worker flags: `rawWorkers` the `--worker` values, `opt` a flag's value if given. One
 * line naming the flag at fault as `{ error }`: a bad `--workers-from` or `--workers-dns`, no
 * worker source at all, a worker URL that is not an http(s) base URL or is given twice.
 */
export const serveWorkers = (
  rawWorkers: ReadonlyArray<string>,
  opt: (k: string) => string | undefined
): ServeWorkers | { readonly error: string } => {
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
    workersFile === undefined &&
    workersDns === undefined &&
    workersK8s === undefined
  )
    return {
      error: "at least one --worker URL is required (or --workers-file / --workers-dns / --workers-from)"
    }
  const workers: Array<string> = []
  for (const w of rawWorkers) {
    const u = workerUrl(w)
    if (typeof u !== "string") return u
    if (workers.includes(u)) return { error: `--worker ${u} is given twice` }
    workers.push(u)
  }
  return { workers, workersFile, workersDns, workersK8s }
}
