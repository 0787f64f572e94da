/**
 * Which fields a rank's row must hold to be known: by default what its source publishes
 * (`sourceRequiredFields`), an explicit `requiredFields` winning; and real vLLM `/metrics` payloads
 * from decoder to a policy decision (public API only).
 */
import { readFileSync } from "node:fs"
import { totalRequests } from "@loadledger/policies"
import { decodeLedger, type RankLoad } from "@loadledger/schema"
import { Result } from "effect"
import { describe, expect, it } from "vitest"
import {
  applyPoll,
  type Decision,
  ejectWorker,
  type LoadField,
  makeRouter,
  type RouterState,
  route,
  type SourceKind,
  type SourceSpec,
  sourceRequiredFields,
  statuses
} from "../src/index.js"

const payload = (name: string) =>
  readFileSync(new URL(`../../../fixtures/payloads/${name}`, import.meta.url), "utf8")
const vllmSingle = payload("vllm_metrics_qwen25coder32b__production_stack_issue318.prom")
const vllmDp4 = payload("vllm_metrics_dp4_engine_imbalance__vllm_issue48808.prom")
// the paste holds two time points, each under a `# <timestamp>` line; the first is complete
const vllmDp4First = vllmDp4.slice(0, vllmDp4.indexOf("# 2026-05-28 13:00:26"))

const decoded = (text: string): ReadonlyArray<RankLoad> => {
  const r = decodeLedger(text, "vllm-metrics")
  if (Result.isFailure(r)) throw new Error(`${r.failure._tag}: ${r.failure.message}`)
  return r.success
}
const source = (url: string, dpSize: number, kind: SourceKind): SourceSpec => ({
  url,
  dpSize,
  kind,
  intervalMs: 100,
  timeoutMs: 50
})
const placed = <S>(r: ReturnType<typeof route<S>>): { state: RouterState<S>; decision: Decision } => {
  if (r._tag === "RouterError") throw new Error(`expected a placement, got ${r.reason}: ${r.message}`)
  return r
}

const kinds: ReadonlyArray<SourceKind> = [
  "sglang-v1-loads",
  "sglang-get-load",
  "sglang-metrics",
  "vllm-metrics"
]
const allFields: ReadonlyArray<LoadField> = [
  "numRunningReqs",
  "numWaitingReqs",
  "numTotalTokens",
  "kvCacheUsage"
]
const fullRow = (dpRank: number): RankLoad => ({
  dpRank,
  numRunningReqs: 1,
  numWaitingReqs: 0,
  numTotalTokens: 10,
  kvCacheUsage: 0.5
})
const without = (row: RankLoad, fields: ReadonlyArray<LoadField>): RankLoad => {
  const out: Record<string, unknown> = { ...row }
  for (const f of fields) delete out[f]
  return out as unknown as RankLoad
}

describe("default required fields follow the source kind", () => {
  it("vLLM and SGLang /metrics require the request counts; /v1/loads and /get_load the tokens too", () => {
    expect(Object.fromEntries(kinds.map((k) => [k, sourceRequiredFields(k)]))).toEqual({
      "sglang-v1-loads": ["numRunningReqs", "numWaitingReqs", "numTotalTokens"],
      "sglang-get-load": ["numRunningReqs", "numWaitingReqs", "numTotalTokens"],
      "sglang-metrics": ["numRunningReqs", "numWaitingReqs"],
      "vllm-metrics": ["numRunningReqs", "numWaitingReqs"]
    })
  })

  it("for every kind, a row is known exactly when it holds that kind's fields; a missing one is named", () => {
    for (const kind of kinds) {
      const required = sourceRequiredFields(kind)
      const notRequired = allFields.filter((f) => !required.includes(f))
      let r = makeRouter(totalRequests, [source("u", 1 + required.length, kind)], { staleAfterSeconds: 5 })
      // rank 0 lacks every field the kind does not publish; rank i + 1 lacks required[i]
      const rows = [without(fullRow(0), notRequired), ...required.map((f, i) => without(fullRow(i + 1), [f]))]
      r = applyPoll(r, "u", Result.succeed(rows), 0)
      const s = statuses(r, 0)
      expect([kind, s.map((x) => x.condition)]).toEqual([kind, ["known", ...required.map(() => "unknown")]])
      expect(s.slice(1).map((x) => x.missing)).toEqual(required.map((f) => [f]))
    }
  })

  it("each worker of a mixed fleet is judged by its own kind", () => {
    const counts = { numRunningReqs: 0, numWaitingReqs: 0 }
    let r = makeRouter(totalRequests, [source("v", 1, "vllm-metrics"), source("s", 1, "sglang-v1-loads")], {
      staleAfterSeconds: 5
    })
    r = applyPoll(r, "v", Result.succeed([{ dpRank: 0, ...counts }]), 0)
    r = applyPoll(r, "s", Result.succeed([{ dpRank: 0, ...counts }]), 0)
    expect(statuses(r, 0).map((s) => [s.condition, s.missing])).toEqual([
      ["known", undefined],
      ["unknown", ["numTotalTokens"]]
    ])
  })

  it("an explicit requiredFields wins over every kind; a worker without a kind keeps running, waiting, tokens", () => {
    const counts = [{ dpRank: 0, numRunningReqs: 0, numWaitingReqs: 0 }]
    let explicit = makeRouter(totalRequests, [source("v", 1, "vllm-metrics")], {
      staleAfterSeconds: 5,
      requiredFields: ["kvCacheUsage"]
    })
    explicit = applyPoll(explicit, "v", Result.succeed(counts), 0)
    expect(statuses(explicit, 0)[0]).toMatchObject({ condition: "unknown", missing: ["kvCacheUsage"] })
    let kindless = makeRouter(totalRequests, [{ url: "w", dpSize: 1 }], { staleAfterSeconds: 5 })
    kindless = applyPoll(kindless, "w", Result.succeed(counts), 0)
    expect(statuses(kindless, 0)[0]).toMatchObject({ condition: "unknown", missing: ["numTotalTokens"] })
  })
})

describe("real vLLM /metrics payloads, decoded, routed by the policy", () => {
  it("production-stack #318 (one engine, V0 names) and vLLM #48808's first time point (DP-4): every rank known, the idle one chosen", () => {
    let r = makeRouter(totalRequests, [source("a", 1, "vllm-metrics"), source("b", 4, "vllm-metrics")], {
      staleAfterSeconds: 5
    })
    r = applyPoll(r, "a", Result.succeed(decoded(vllmSingle)), 0)
    r = applyPoll(r, "b", Result.succeed(decoded(vllmDp4First)), 0)
    expect(statuses(r, 0).map((s) => [s.condition, s.row.numRunningReqs, s.row.numWaitingReqs])).toEqual([
      ["known", 0, 0],
      ["known", 8, 0],
      ["known", 8, 0],
      ["known", 8, 0],
      ["known", 8, 0]
    ])
    const d = placed(route(r, { requestId: "q1", inputLength: 512 }, 0.1)).decision
    expect([d.mode, d.fallbackReason, d.workerUrl, d.dpRank]).toEqual(["policy", undefined, "a", 0])
  })

  it("vLLM #48808 as pasted (the last scrape has engine 0's waiting count only): engine 0 known, 1-3 missing numWaitingReqs", () => {
    let r = makeRouter(totalRequests, [source("b", 4, "vllm-metrics")], { staleAfterSeconds: 5 })
    r = applyPoll(r, "b", Result.succeed(decoded(vllmDp4)), 0)
    const s = statuses(r, 0)
    expect(s.map((x) => [x.condition, x.missing])).toEqual([
      ["known", undefined],
      ["unknown", ["numWaitingReqs"]],
      ["unknown", ["numWaitingReqs"]],
      ["unknown", ["numWaitingReqs"]]
    ])
    expect(s[0]?.row.numRunningReqs).toBe(27)
    const d = placed(route(r, { requestId: "q1", inputLength: 512 }, 0.1)).decision
    expect([d.mode, d.dpRank]).toEqual(["policy", 0])
  })
})

describe("a time that is not finite seconds", () => {
  const bad = [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]
  const start = () => {
    const r = makeRouter(totalRequests, [source("a", 1, "vllm-metrics"), source("b", 1, "vllm-metrics")], {
      staleAfterSeconds: 5
    })
    return applyPoll(r, "a", Result.succeed([{ dpRank: 0, numRunningReqs: 1, numWaitingReqs: 0 }]), 0)
  }

  it("applyPoll ignores the poll, success or failure, and returns the state itself, as the policies' observe does", () => {
    const r = start()
    for (const now of bad) {
      expect(
        applyPoll(r, "b", Result.succeed([{ dpRank: 0, numRunningReqs: 0, numWaitingReqs: 0 }]), now)
      ).toBe(r)
      expect(
        applyPoll(r, "a", Result.fail({ _tag: "PollFailure", kind: "timeout", message: "late" }), now)
      ).toBe(r)
    }
    // the ignored poll left no trace: b is still never-reported, a keeps its row
    expect(statuses(r, 1).map((s) => s.reason)).toEqual([undefined, "never-reported"])
  })

  it("ejectWorker ignores a bad now and a NaN hold; route refuses a bad now naming it", () => {
    const r = start()
    for (const now of bad) expect(ejectWorker(r, "a", 2, "x", now)).toBe(r)
    expect(ejectWorker(r, "a", Number.NaN, "x", 1)).toBe(r)
    expect(ejectWorker(r, "a", Number.POSITIVE_INFINITY, "x", 1).view.members).toEqual([])
    for (const now of bad)
      expect(route(r, { requestId: "q", inputLength: 1 }, now)).toMatchObject({
        _tag: "RouterError",
        reason: "InvalidInput",
        field: "now"
      })
  })
})
