// Issue 36 item 1, as a user meets it (subprocess, built CLI): every command's --help ends with
// examples that run as printed; list; did-you-mean for names; the default policy set; --policy and
// --policies both accepted; defaults printed one way.
import { describe, expect, it } from "vitest"
import { EXAMPLES } from "../src/internal/examples.js"
import { built, run, scratchShell } from "./cliSubprocess.js"

const COMMANDS = [
  "decode",
  "conformance",
  "step-time",
  "calibrate",
  "simulate",
  "diagnose",
  "capacity",
  "goodput",
  "tune",
  "serve",
  "compare",
  "sweep",
  "list",
  "reproduce",
  "completion"
]

describe.skipIf(!built)("help, examples and names (built loadledger in a subprocess)", () => {
  it("every command's --help ends with its examples, two or three of them", () => {
    expect(Object.keys(EXAMPLES).sort()).toEqual(["", ...COMMANDS].sort())
    for (const c of ["", ...COMMANDS]) {
      const r = run(c === "" ? ["--help"] : [c, "--help"])
      expect(r.status).toBe(0)
      const tail = r.stdout.slice(r.stdout.lastIndexOf("\nExamples:\n"))
      const shown = tail.split("\n").filter((l) => l.startsWith("  $ "))
      expect(shown.map((l) => l.slice(4))).toEqual(EXAMPLES[c]!.map((x) => x.run))
      expect(shown.length).toBeGreaterThanOrEqual(2)
      expect(shown.length).toBeLessThanOrEqual(3)
      expect(r.stdout.trimEnd().endsWith(EXAMPLES[c]!.at(-1)!.run)).toBe(true)
    }
  })

  it("every example runs as printed (shortened by its fast flags) and exits 0", () => {
    const { sh } = scratchShell()
    for (const c of ["", ...COMMANDS])
      for (const x of EXAMPLES[c]!) {
        // a redirect stays last: the fast flags go before it
        const [cmd, redirect] = x.run.split(" > ")
        const line = `${cmd}${x.fast ? ` ${x.fast}` : ""}${redirect === undefined ? "" : ` > ${redirect}`}`
        const r = sh(line)
        expect({ line, status: r.status, stderr: r.status === 0 ? "" : r.stderr }).toEqual({
          line,
          status: 0,
          stderr: ""
        })
      }
  }, 240_000)

  it("list policies|models|gpus|slo, as text and --json, with each policy's source and engine", () => {
    const policies = JSON.parse(run(["list", "policies", "--json"]).stdout)
    expect(policies).toHaveLength(68)
    expect(policies.find((p: { name: string }) => p.name === "smg/prefix-hash")).toMatchObject({
      source: "smg",
      engine: "sglang",
      reference: true
    })
    expect(policies.find((p: { name: string }) => p.name === "vllm-kv-pressure")).toMatchObject({
      source: "vllm",
      engine: "vllm"
    })
    expect(policies.find((p: { name: string }) => p.name === "ledger-balanced")).toMatchObject({
      source: "loadledger",
      engine: "any"
    })
    const text = run(["list", "policies"]).stdout.split("\n")
    expect(text[0]).toMatch(/^policy +source +engine +description/)
    expect(text.find((l) => l.startsWith("aibrix/random "))).toMatch(/^aibrix\/random +aibrix +any +\S/)
    const models = JSON.parse(run(["list", "models", "--json"]).stdout)
    expect(models.find((m: { name: string }) => m.name === "llama2-70b")).toEqual({
      name: "llama2-70b",
      tp: 1,
      fitsOn: ["b200", "gb200"]
    })
    expect(JSON.parse(run(["list", "gpus", "--json"]).stdout).map((g: { name: string }) => g.name)).toContain(
      "h200"
    )
    const slo = JSON.parse(run(["list", "slo", "--json"]).stdout)
    expect(slo.find((s: { name: string }) => s.name === "mlperf-llama2-70b")).toMatchObject({
      ttftSeconds: 2,
      tpotSeconds: 0.2
    })
    const bad = run(["list", "polices"])
    expect(bad.status).toBe(1)
    expect(bad.stderr).toBe(
      'loadledger: list: unknown list "polices" (did you mean "policies"?); one of policies, models, gpus, slo\n'
    )
  })

  it("did-you-mean for policies, models, GPUs and SLO presets, before any work", () => {
    const t = "examples/traces/mooncake/conversation_trace.jsonl"
    const cases: Array<[Array<string>, string]> = [
      [
        ["simulate", "--trace", t, "--policies", "totl-tokens"],
        'unknown policy "totl-tokens" (did you mean "total-tokens"?); loadledger list policies names all 68'
      ],
      [
        ["capacity", "--trace", t, "--policy", "round-robn"],
        'unknown policy "round-robn" (did you mean "round-robin"?)'
      ],
      [
        ["simulate", "--trace", t, "--model", "llama2-70"],
        'unknown model "llama2-70" (did you mean "llama2-70b"?); known: glm-5.3-dense'
      ],
      [
        ["goodput", "--trace", t, "--gpu", "h20"],
        'unknown GPU "h20" (did you mean "h200"?); known: a100-80gb'
      ],
      [
        ["compare", "--trace", t, "--slo", "mlperf-deepseek-r2"],
        '--slo: unknown SLO preset "mlperf-deepseek-r2" (did you mean "mlperf-deepseek-r1"?)'
      ]
    ]
    for (const [args, message] of cases) {
      const r = run(args)
      expect(r.status).toBe(1)
      expect(r.stdout).toBe("")
      expect(r.stderr).toContain(`loadledger: ${message}`)
    }
  })

  it("without --policies, simulate runs the demo's five reference policies", () => {
    const r = run([
      "simulate",
      "--trace",
      "examples/traces/mooncake/conversation_trace.jsonl",
      "--limit",
      "50",
      "--json"
    ])
    expect(r.status).toBe(0)
    expect(JSON.parse(r.stdout).results.map((x: { policy: string }) => x.policy)).toEqual([
      "round-robin",
      "total-requests",
      "total-tokens",
      "vllm-kv-pressure",
      "follow-bootstrap-room"
    ])
  })

  it("--policy and --policies both work on simulate, capacity, goodput and compare; both at once is an error", () => {
    const t = ["--trace", "examples/traces/mooncake/conversation_trace.jsonl"]
    for (const cmd of ["simulate", "capacity", "goodput", "compare"]) {
      for (const flag of ["--policy", "--policies"]) {
        // an unknown name shows the flag was read as the policy list (and costs no replay)
        const r = run([cmd, ...t, flag, "no-such-policy"])
        expect(r.status).toBe(1)
        expect(r.stderr).toContain('unknown policy "no-such-policy"')
      }
      const both = run([cmd, ...t, "--policy", "round-robin", "--policies", "total-tokens"])
      expect(both.status).toBe(1)
      expect(both.stderr).toMatch(/under another name: give one of them/)
    }
  })

  it("defaults are printed one way: (default: X)", () => {
    for (const c of COMMANDS) {
      const help = run([c, "--help"]).stdout.replace(/\s+/g, " ")
      expect({ c, odd: help.match(/\(default [^:]|; default |, the default\)/g) }).toEqual({ c, odd: null })
    }
    expect(run(["simulate", "--help"]).stdout.replace(/\s+/g, " ")).toContain("per step (default: 8192)")
  })
})
