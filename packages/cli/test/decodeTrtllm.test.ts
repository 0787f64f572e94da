import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterEach, describe, expect, it } from "vitest"
import { runCaptured as run } from "./runCli.js"

const trtllm = (name: string) =>
  fileURLToPath(new URL(`../../schema/test/fixtures/trtllm/${name}`, import.meta.url))

afterEach(() => {
  process.exitCode = undefined
})

describe("loadledger decode: TensorRT-LLM trtllm-serve iteration stats", () => {
  it("auto-detects the /metrics JSON list: the latest iteration as rank 0, notices on stderr", async () => {
    const r = await run("decode", trtllm("iteration_stats_pytorch_adp.json"))
    expect(r.code).toBe(0)
    expect(JSON.parse(r.out)).toEqual([
      {
        dpRank: 0,
        numRunningReqs: 251,
        numWaitingReqs: 34,
        maxRunningRequests: 512,
        numPausedReqs: 0,
        prefixCacheHitRate: 0.3066,
        numUsedTokens: 203_520,
        maxTotalNumTokens: 288_000,
        kvAvailableTokens: 84_480,
        kvCacheUsage: 6360 / 9000
      }
    ])
    expect(r.err).toContain(
      "notice: UnknownField: TensorRT-LLM iteration stats key attentionDpBalance (in 1 entries) is not read"
    )
    expect(r.err).toContain("notice: DefaultedIdentity: $[1]: TensorRT-LLM iteration stats carry no rank")
  })
  it("--kind trtllm-iteration-stats: the docs' example, and an error naming the path", async () => {
    const r = await run(
      "decode",
      trtllm("iteration_stats_docs_example.json"),
      "--kind",
      "trtllm-iteration-stats"
    )
    expect(r.code).toBe(0)
    expect(JSON.parse(r.out)[0]).toMatchObject({ dpRank: 0, numRunningReqs: 1, numUsedTokens: 96 })
    const e = await run(
      "decode",
      trtllm("iteration_stats_empty_queue.json"),
      "--kind",
      "trtllm-iteration-stats"
    )
    expect(e.out).toBe("[]\n")
    const bad = join(mkdtempSync(join(tmpdir(), "loadledger-trtllm-")), "bad.json")
    writeFileSync(bad, '[{"iter":3,"numActiveRequests":2,"kvCacheStats":{"usedNumBlocks":"7"}}]')
    const b = await run("decode", bad)
    expect(b.code).toBe(1)
    expect(b.err).toBe(`loadledger decode: ${bad}: $[0].kvCacheStats.usedNumBlocks: Expected number\n`)
  })
  it("auto-detects the /prometheus/metrics page", async () => {
    const r = await run("decode", trtllm("prometheus_metrics_page.prom"))
    expect(r.code).toBe(0)
    expect(JSON.parse(r.out)).toEqual([
      expect.objectContaining({
        dpRank: 0,
        numRunningReqs: 251,
        numWaitingReqs: 34,
        kvAvailableTokens: 84_480
      })
    ])
    expect(r.err).toContain("notice: DeclaredWithoutSamples: trtllm_num_paused_requests")
  })
})
