// What the CLI tests share: `loadledger` run in-process, the trace most of them replay, the report's charts.
import { vi } from "vitest"
import { main } from "../src/index.js"

/** The examples' Mooncake conversation trace (23k requests; the tests take its first `--limit`). */
export const mooncake = new URL("../../../examples/traces/mooncake/conversation_trace.jsonl", import.meta.url)
  .pathname

/** `loadledger ...args` in-process; resolves to the exit code (capture the output around it). */
export const loadledger = (...args: Array<string>): Promise<number> => main(["node", "loadledger", ...args])

/**
 * `loadledger ...args` in-process with stdout and stderr captured for this call only (for tests
 * without `captureOutput`): the exit code and both texts.
 */
export const runCaptured = async (
  ...args: Array<string>
): Promise<{ code: number; out: string; err: string }> => {
  let out = ""
  let err = ""
  const o = vi.spyOn(process.stdout, "write").mockImplementation((c: string | Uint8Array) => {
    out += String(c)
    return true
  })
  const e = vi.spyOn(process.stderr, "write").mockImplementation((c: string | Uint8Array) => {
    err += String(c)
    return true
  })
  try {
    const code = await loadledger(...args)
    return { code, out, err }
  } finally {
    o.mockRestore()
    e.mockRestore()
    process.exitCode = undefined
  }
}

/** `loadledger simulate` over the first `limit` Mooncake requests with `policies`, then `extra` flags. */
export const simulateMooncake = (policies: string, limit: number, ...extra: Array<string>): Promise<number> =>
  loadledger("simulate", "--trace", mooncake, "--policies", policies, "--limit", String(limit), ...extra)

/**
 * The chart ids of a `simulate --report` page, in page order: 3 latency CDFs, shares, requests and
 * tokens per rank, imbalance, then one load heat map per run (`runs` = policies x front ends).
 */
export const reportChartIds = (runs: number): Array<string> => [
  "cdf-ttftSeconds",
  "cdf-itlSeconds",
  "cdf-e2eSeconds",
  "shares",
  "requests-per-rank",
  "tokens-per-rank",
  "imbalance",
  ...Array.from({ length: runs }, (_, i) => `load-${i}`)
]
