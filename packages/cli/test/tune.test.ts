/**
 * `loadledger tune` as a process on the real Mooncake conversation trace (the repository's copies of
 * the shared trace, first few hundred requests): the configuration it prints parses and builds,
 * the report gives the held-out half's goodputs, and the JSON round-trips into
 * `goodput --policy-config`.
 */
import { spawnSync } from "node:child_process"
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { policyFromConfig } from "@loadledger/policies"
import { describe, expect, it } from "vitest"

const bin = fileURLToPath(new URL("../src/bin.ts", import.meta.url))
const repo = fileURLToPath(new URL("../../../", import.meta.url))
const mooncake = "examples/traces/mooncake/conversation_trace.jsonl"
const dir = mkdtempSync(join(tmpdir(), "loadledger-tune-"))

const loadledger = (...args: Array<string>) =>
  spawnSync(process.execPath, ["--import", "tsx", "--conditions=@loadledger/source", bin, ...args], {
    cwd: repo,
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024
  })

const quick = ["--limit", "320", "--windows", "2", "--dp", "2", "--precision", "0.1"]
const slo = ["--slo", "distserve-summarization-opt-66b"]

/** The numbers of the report's `held-out half:` line: default, tuned and bound goodputs (req/s). */
const heldOut = (report: string) => {
  const line = report.split("\n").find((l) => l.startsWith("held-out half: default "))!
  const m = /default ([\d.]+) .* tuned ([\d.]+) .* balance bound ([\d.]+) /.exec(line)!
  return { default: Number(m[1]), tuned: Number(m[2]), bound: Number(m[3]) }
}

describe("loadledger tune", () => {
  it("prints a configuration that parses and builds, and the held-out half's goodputs beside the default's", () => {
    const r = loadledger("tune", "--trace", mooncake, ...slo, ...quick, "--budget", "4")
    expect(r.stderr).toContain("weights searched: decodeLoad, slotWait, homeCredit; 4 evaluations")
    expect(r.status).toBe(0)
    const config = JSON.parse(r.stdout)
    expect(config.kind).toBe("step-time")
    expect(config.name).toBe("loadledger-default-tuned")
    expect(config.terms.map((t: { term: string }) => t.term).sort()).toEqual(
      ["decodeLoad", "homeCredit", "ownPrefill", "queuedPrefill", "slotWait"].sort()
    )
    const p = policyFromConfig(config)
    expect("_tag" in p ? p : p.name).toBe("step-time-aware")
    const h = heldOut(r.stderr)
    expect(h.default).toBeGreaterThan(0)
    expect(h.tuned).toBeGreaterThan(0)
    // the bound is the ceiling of every placement
    expect(h.bound).toBeGreaterThanOrEqual(Math.max(h.default, h.tuned) * 0.95)
    // the first half never gets worse than the start: an improvement must be strict
    const first = /first half \(tuned on\): default ([\d.]+) .* tuned ([\d.]+) /.exec(r.stderr)!
    expect(Number(first[2])).toBeGreaterThanOrEqual(Number(first[1]))
  }, 120_000)

  it("its JSON round-trips into goodput --policy-config, ranked under its own name", () => {
    const out = join(dir, "tuned.json")
    const t = loadledger("tune", "--trace", mooncake, ...slo, ...quick, "--budget", "2", "--out", out)
    expect(t.status).toBe(0)
    // with --out the report is on stdout
    expect(t.stdout).toContain(`configuration written to ${out}`)
    heldOut(t.stdout)
    const g = loadledger(
      "goodput",
      "--trace",
      mooncake,
      ...slo,
      ...quick,
      "--policies",
      "step-time-aware",
      "--policy-config",
      out,
      "--no-curves",
      "--jobs",
      "1",
      "--json",
      "--quiet"
    )
    expect(g.stderr).toBe("")
    expect(g.status).toBe(0)
    const rows = JSON.parse(g.stdout).engines[0].policies as Array<{
      policy: string
      goodput: { requestsPerSecond: number }
    }>
    const tuned = rows.find((x) => x.policy === "loadledger-default-tuned")!
    expect(tuned.goodput.requestsPerSecond).toBeGreaterThan(0)
    expect(rows.map((x) => x.policy)).toContain("step-time-aware")
  }, 120_000)

  it("behind four vLLM front ends tunes a scored configuration's weighted terms (not its gate)", () => {
    const from = join(dir, "from.json")
    writeFileSync(
      from,
      JSON.stringify({
        kind: "scored",
        name: "mine",
        terms: [
          { term: "tokens", weight: 1 },
          { term: "waiting", weight: 0.5 },
          { term: "kvPressureGate", weight: 0 }
        ]
      })
    )
    const out = join(dir, "vllm.json")
    const r = loadledger(
      "tune",
      "--trace",
      mooncake,
      ...quick,
      ...slo,
      "--engine",
      "vllm",
      "--front-ends",
      "4",
      "--from",
      from,
      "--budget",
      "3",
      "--out",
      out
    )
    expect(r.stderr).toBe("")
    expect(r.status).toBe(0)
    expect(r.stdout).toContain("vllm engine, 4 front ends")
    expect(r.stdout).toContain("weights searched: tokens, waiting; 3 evaluations")
    const config = JSON.parse(readFileSync(out, "utf8"))
    expect(config.name).toBe("mine-tuned")
    expect(config.terms.find((t: { term: string }) => t.term === "kvPressureGate")).toEqual({
      term: "kvPressureGate",
      weight: 0
    })
    expect(heldOut(r.stdout).default).toBeGreaterThan(0)
  }, 120_000)

  it("refuses what it cannot tune before any replay, in one line", () => {
    const r = loadledger("tune", "--trace", mooncake, "--from", "cache-affinity")
    expect(r.status).toBe(1)
    expect(r.stderr).toBe(
      "loadledger: --from: a cache-affinity configuration has no weighted terms to tune (it decides by rules)\n"
    )
    const n = loadledger("tune", "--trace", mooncake, "--from", "no-such")
    expect(n.status).toBe(1)
    expect(n.stderr).toContain(
      '--from: "no-such" is neither an own configuration (loadledger-default, ledger-balanced,'
    )
  }, 60_000)
})
