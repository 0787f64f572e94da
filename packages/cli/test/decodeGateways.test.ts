import { fileURLToPath } from "node:url"
import { afterEach, describe, expect, it } from "vitest"
import { runCaptured as run } from "./runCli.js"

const gateway = (name: string) =>
  fileURLToPath(new URL(`../../schema/test/fixtures/gateways/${name}`, import.meta.url))

afterEach(() => {
  process.exitCode = undefined
})

describe("loadledger decode: gateways (SMG, Dynamo, llm-d)", () => {
  it("auto-detects SMG /get_loads: rows keyed by (worker, dpRank); the worker without details on stderr", async () => {
    const r = await run("decode", gateway("smg_get_loads_fleet.json"))
    expect(r.code).toBe(0)
    const rows = JSON.parse(r.out) as Array<{ worker: string; dpRank: number }>
    expect(rows.map((x) => `${x.worker}#${x.dpRank}`)).toEqual([
      "http://decode-0:30000#0",
      "http://decode-1:30000#0",
      "http://vllm-0:8000#0",
      "http://decode-0:30000#1",
      "http://decode-1:30000#1"
    ])
    expect(r.err).toContain("1 load(s) without a rank (http://decode-2:30000)")
  })
  it("--json carries the rank-less loads", async () => {
    const r = await run("decode", "--json", "--kind", "smg-loads", gateway("smg_get_loads_fleet.json"))
    expect(r.code).toBe(0)
    expect(JSON.parse(r.out).rankless).toEqual([
      {
        worker: "http://decode-2:30000",
        unknown: { reason: "unreachable", message: "$.workers[3].load is -1: the gateway got no load" }
      }
    ])
  })
  it("auto-detects the SMG page, Dynamo events and page, and the llm-d page", async () => {
    const rows = async (f: string) => {
      const r = await run("decode", gateway(f))
      expect(r.code).toBe(0)
      return JSON.parse(r.out) as Array<Record<string, unknown>>
    }
    expect((await rows("smg_metrics_page.prom")).length).toBe(4)
    expect((await rows("dynamo_kv_metrics_events.jsonl"))[0]).toMatchObject({
      worker: "7587888160958628001",
      kvUsedBlocks: 455
    })
    expect((await rows("dynamo_frontend_metrics.prom"))[0]).toEqual({
      dpRank: 0,
      worker: "7890",
      activeDecodeBlocks: 56,
      activePrefillTokens: 1234
    })
    expect((await rows("llmd_epp_metrics.prom"))[0]).toEqual({
      dpRank: 0,
      worker: "pod1",
      numWaitingReqs: 100
    })
  })
})
