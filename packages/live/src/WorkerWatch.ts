/**
 * Where the worker set comes from while the router runs: a watched file of URLs, or the addresses
 * a DNS name resolves to (a Kubernetes headless Service, a Consul name). Each watch calls back with
 * the whole set whenever it changes; `startServe` adds and removes the router's sources to match.
 *
 * @since 0.4.0
 */

import { lookup } from "node:dns/promises"
import { unwatchFile, watchFile } from "node:fs"
import { readFile } from "node:fs/promises"
import { workerUrl } from "./internal/serveFlags.js"

/**
 * A running watch: `close` stops it.
 *
 * @category models
 * @since 0.4.0
 */
export interface WorkerWatch {
  readonly close: () => void
}

/**
 * The worker URLs of a list: a JSON array of strings, or one URL a line (blank lines and `#`
 * comments skipped); each an http(s) base URL (as its origin), each once.
 *
 * @example
 * ```ts
 * import { parseWorkerList } from "@loadledger/live"
 * parseWorkerList("# pool a\nhttp://10.0.0.5:8000/\nhttp://10.0.0.6:8000\n") // => ["http://10.0.0.5:8000", "http://10.0.0.6:8000"]
 * parseWorkerList('["http://10.0.0.5:8000", "nope"]') // => { error: '--worker must be an http(s) URL like http://127.0.0.1:30000, got "nope"' }
 * ```
 *
 * @category cli
 * @since 0.4.0
 */
export const parseWorkerList = (text: string): ReadonlyArray<string> | { readonly error: string } => {
  let raw: Array<unknown>
  const t = text.trim()
  if (t.startsWith("[")) {
    try {
      const j: unknown = JSON.parse(t)
      if (!Array.isArray(j)) return { error: "a JSON worker list must be an array of URLs" }
      raw = j
    } catch (e) {
      return { error: `not a JSON array: ${(e as Error).message}` }
    }
  } else
    raw = t
      .split("\n")
      .map((l) => l.replace(/#.*/, "").trim())
      .filter((l) => l.length > 0)
  const out: Array<string> = []
  for (const x of raw) {
    if (typeof x !== "string") return { error: "a worker list holds URLs (strings)" }
    const u = workerUrl(x)
    if (typeof u !== "string") return u
    if (!out.includes(u)) out.push(u)
  }
  return out
}

/**
 * Watch the worker list at `path` (see `parseWorkerList`), read now and on every change (its
 * modification time, checked every `intervalMs`, default 1 000: a Kubernetes ConfigMap's symlink
 * swap is seen too). `onSet` gets the list each time it changed; `onError` a line when the file
 * cannot be read or parsed (the last good list stays).
 *
 * @example
 * ```ts
 * import { writeFileSync } from "node:fs"
 * import { tmpdir } from "node:os"
 * import { join } from "node:path"
 * import { watchWorkerFile } from "@loadledger/live"
 * const path = join(tmpdir(), `workers-${process.pid}.txt`)
 * writeFileSync(path, "http://10.0.0.5:8000\n")
 * const sets: Array<ReadonlyArray<string>> = []
 * const w = watchWorkerFile(path, (s) => sets.push(s), () => {})
 * await new Promise((r) => setTimeout(r, 50))
 * w.close()
 * sets // => [["http://10.0.0.5:8000"]]
 * ```
 *
 * @category constructors
 * @since 0.4.0
 */
export const watchWorkerFile = (
  path: string,
  onSet: (urls: ReadonlyArray<string>) => void,
  onError: (message: string) => void,
  intervalMs = 1000
): WorkerWatch => {
  let last: string | undefined
  let closed = false
  const read = async () => {
    let text: string
    try {
      text = await readFile(path, "utf8")
    } catch (e) {
      return onError(`cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`)
    }
    const urls = parseWorkerList(text)
    if ("error" in urls) return onError(`${path}: ${urls.error}`)
    const key = urls.join("\n")
    if (key !== last && !closed) {
      last = key
      onSet(urls)
    }
  }
  void read()
  const changed = () => void read()
  watchFile(path, { interval: intervalMs, persistent: false }, changed)
  return {
    close: () => {
      closed = true
      unwatchFile(path, changed)
    }
  }
}

/**
 * Watch the addresses DNS gives `name` (every A / AAAA record, `dns.lookup` with `all`), every
 * `intervalMs` (default 5 000), as workers `scheme://address:port`. `onSet` gets the sorted set each
 * time it changed; a failed lookup calls `onError` and keeps the last set.
 *
 * @example
 * ```ts
 * import { watchWorkerDns } from "@loadledger/live"
 * const sets: Array<ReadonlyArray<string>> = []
 * const w = watchWorkerDns("localhost", 30000, (s) => sets.push(s), () => {})
 * await new Promise((r) => setTimeout(r, 200))
 * w.close()
 * sets[0]?.includes("http://127.0.0.1:30000") // => true
 * ```
 *
 * @category constructors
 * @since 0.4.0
 */
export const watchWorkerDns = (
  name: string,
  port: number,
  onSet: (urls: ReadonlyArray<string>) => void,
  onError: (message: string) => void,
  intervalMs = 5000,
  scheme: "http" | "https" = "http"
): WorkerWatch => {
  let last: string | undefined
  let closed = false
  const resolve = async () => {
    try {
      const found = await lookup(name, { all: true })
      const urls = [
        ...new Set(found.map((a) => `${scheme}://${a.family === 6 ? `[${a.address}]` : a.address}:${port}`))
      ].sort()
      const key = urls.join("\n")
      if (key !== last && !closed) {
        last = key
        onSet(urls)
      }
    } catch (e) {
      if (!closed) onError(`cannot resolve ${name}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`)
    }
  }
  void resolve()
  const timer = setInterval(() => void resolve(), intervalMs)
  timer.unref()
  return {
    close: () => {
      closed = true
      clearInterval(timer)
    }
  }
}
