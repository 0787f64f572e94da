// `simulate` and `goodput` refuse an engine option the engine a policy runs on does not have,
// as a user meets it (the built CLI in a subprocess): one line naming the flag, the option, the
// policy and the engine; exit 1; nothing read, run or written. The trace path does not exist, so
// a refusal that came after any work would be the trace's error instead; the --report file is
// never created. The same flags on the vLLM engine run and write the report (the control).
import { existsSync, mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { built, run } from "./cliSubprocess.js"

const missing = "/nonexistent/loadledger-trace.jsonl"
const trace = "examples/traces/mooncake/conversation_trace.jsonl"

describe.skipIf(!built)("engine options an engine lacks are refused before any work", () => {
  it.each([
    [
      ["--front-ends", "4"],
      "--front-ends: frontEnds 4 needs the vLLM engine (SGLang has one front end, no API-server count), got engine sglang (round-robin runs on sglang; add --engine vllm to run it on vLLM)"
    ],
    [
      ["--prefill-interval", "2"],
      "--prefill-interval: prefillIntervalSteps 2 needs the vLLM engine (SGLang has no prefill schedule interval), got engine sglang (round-robin runs on sglang; add --engine vllm to run it on vLLM)"
    ],
    [
      ["--async-scheduling"],
      "--async-scheduling: asyncScheduling true needs the vLLM engine (SGLang's scheduler is not modelled one step ahead), got engine sglang (round-robin runs on sglang; add --engine vllm to run it on vLLM)"
    ],
    [
      ["--coordinator-rows", "vllm"],
      "--coordinator-rows vllm applies to vLLM runs only, and round-robin would run on SGLang: add --engine vllm"
    ],
    [
      ["--engine", "trtllm", "--front-ends", "2"],
      "--front-ends: frontEnds 2 needs the vLLM engine (TensorRT-LLM has one front end, no API-server count), got engine trtllm (round-robin runs on trtllm; add --engine vllm to run it on vLLM)"
    ],
    [
      ["--engine", "trtllm", "--prefill-interval", "3"],
      "--prefill-interval: prefillIntervalSteps 3 needs the vLLM engine (TensorRT-LLM has no prefill schedule interval), got engine trtllm (round-robin runs on trtllm; add --engine vllm to run it on vLLM)"
    ]
  ])("simulate %j: the refusal line, exit 1, no report", (flags, line) => {
    const report = join(mkdtempSync(join(tmpdir(), "ll-refuse-")), "report.html")
    const r = run([
      "simulate",
      "--trace",
      missing,
      "--policies",
      "round-robin",
      "--dp",
      "4",
      ...flags,
      "--report",
      report
    ])
    expect(r.status).toBe(1)
    expect(r.stderr).toBe(`loadledger: ${line}\n`)
    expect(r.stdout).toBe("")
    expect(existsSync(report)).toBe(false)
  })

  it("simulate: the same flags on the vLLM engine run and write the report (the control)", () => {
    const report = join(mkdtempSync(join(tmpdir(), "ll-refuse-")), "report.html")
    const r = run([
      "simulate",
      "--trace",
      trace,
      "--limit",
      "40",
      "--policies",
      "round-robin",
      "--dp",
      "4",
      "--engine",
      "vllm",
      "--front-ends",
      "2",
      "--prefill-interval",
      "2",
      "--async-scheduling",
      "--coordinator-rows",
      "vllm",
      "--report",
      report,
      "--json",
      "--quiet"
    ])
    expect(r.stderr).toBe("")
    expect(r.status).toBe(0)
    expect(JSON.parse(r.stdout).results[0].requests.finished).toBe(40)
    expect(existsSync(report)).toBe(true)
  })

  it.each([[[]], [["--engine", "trtllm"]]])(
    "goodput %j --front-ends 3: the refusal line, exit 1, no report",
    (flags) => {
      const report = join(mkdtempSync(join(tmpdir(), "ll-refuse-")), "goodput.html")
      const r = run([
        "goodput",
        "--trace",
        missing,
        "--policies",
        "round-robin",
        "--dp",
        "4",
        ...flags,
        "--front-ends",
        "3",
        "--report",
        report
      ])
      expect(r.status).toBe(1)
      expect(r.stderr).toBe(
        "loadledger: --front-ends counts vLLM API servers; add --engine vllm to run every policy behind them\n"
      )
      expect(r.stdout).toBe("")
      expect(existsSync(report)).toBe(false)
    }
  )
})
