/**
 * Which fields a rank's row must hold to be known: by default at least one load count (a partial
 * row stays known, `missing` naming what it lacks against `sourcePublishedFields`), an explicit
 * `requiredFields` winning; and real vLLM `/metrics` payloads from decoder to a policy decision
 * (public API only).
 */
import { readFileSync } from "node:fs"
import { totalRequests, vllmKvPressure } from "@loadledger/policies"
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
  sourcePublishedFields,
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

describe("by default a row is known when it carries a load count; what it lacks is named, not zeroed", () => {
  it("each kind publishes the request counts; /v1/loads and /get_load the tokens too", () => {
    expect(Object.fromEntries(kinds.map((k) => [k, sourcePublishedFields(k)]))).toEqual({
      "sglang-v1-loads": ["numRunningReqs", "numWaitingReqs", "numTotalTokens"],
      "sglang-get-load": ["numRunningReqs", "numWaitingReqs", "numTotalTokens"],
      "sglang-metrics": ["numRunningReqs", "numWaitingReqs"],
      "vllm-metrics": ["numRunningReqs", "numWaitingReqs"]
    })
  })

  // the old rule (every published field required) made ranks 1.. unknown here: the fault of vLLM #48808
  it("for every kind, a row lacking any one published field is partial: known, the field absent and named", () => {
    for (const kind of kinds) {
      const published = sourcePublishedFields(kind)
      const notPublished = allFields.filter((f) => !published.includes(f))
      let r = makeRouter(totalRequests, [source("u", 1 + published.length, kind)], { staleAfterSeconds: 5 })
      // rank 0 lacks every field the kind does not publish; rank i + 1 lacks published[i]
      const rows = [
        without(fullRow(0), notPublished),
        ...published.map((f, i) => without(fullRow(i + 1), [f]))
      ]
      r = applyPoll(r, "u", Result.succeed(rows), 0)
      const s = statuses(r, 0)
      expect([kind, s.map((x) => x.condition)]).toEqual([kind, s.map(() => "known")])
      expect([kind, s.map((x) => x.missing)]).toEqual([kind, [undefined, ...published.map((f) => [f])]])
      published.forEach((f, i) => {
        expect(s[i + 1]?.row[f]).toBeUndefined()
      })
      // the policy sees every rank: the view holds them all
      expect(r.view.members).toEqual(s.map((x) => x.index))
    }
  })

  it("for every kind, a row with no load count at all is unknown(missing-field), out of the view, never 0", () => {
    for (const kind of kinds) {
      let r = makeRouter(totalRequests, [source("u", 2, kind)], { staleAfterSeconds: 5 })
      // rank 1 reports only KV usage: no count a policy could compare
      const rows = [fullRow(0), { dpRank: 1, kvCacheUsage: 0.1 }]
      r = applyPoll(r, "u", Result.succeed(rows), 0)
      const s = statuses(r, 0)
      expect([kind, s[1]?.condition, s[1]?.reason, s[1]?.missing]).toEqual([
        kind,
        "unknown",
        "missing-field",
        sourcePublishedFields(kind)
      ])
      expect(s[1]?.row).toEqual({
        dpRank: 1,
        worker: "u",
        workerDpRank: 1,
        unknown: { reason: "not-reported", message: expect.stringContaining("no load count") }
      })
      expect(r.view.members).toEqual([0])
    }
  })

  it("any one count is enough: running alone, waiting alone, tokens alone", () => {
    let r = makeRouter(totalRequests, [source("u", 3, "sglang-v1-loads")], { staleAfterSeconds: 5 })
    const rows = [
      { dpRank: 0, numRunningReqs: 2 },
      { dpRank: 1, numWaitingReqs: 0 },
      { dpRank: 2, numTotalTokens: 40 }
    ]
    r = applyPoll(r, "u", Result.succeed(rows), 0)
    expect(statuses(r, 0).map((s) => [s.condition, s.missing])).toEqual([
      ["known", ["numWaitingReqs", "numTotalTokens"]],
      ["known", ["numRunningReqs", "numTotalTokens"]],
      ["known", ["numRunningReqs", "numWaitingReqs"]]
    ])
  })

  it("a corrupt count handed to applyPoll (negative, NaN, infinite, a string) makes the row rejected, never known", () => {
    const bad: ReadonlyArray<[RankLoad, string]> = [
      [{ dpRank: 0, numRunningReqs: -1, numWaitingReqs: 0 }, "negative-count"],
      [{ dpRank: 0, numRunningReqs: 3, numWaitingReqs: Number.NaN }, "invalid-number"],
      [{ dpRank: 0, numTotalTokens: Number.POSITIVE_INFINITY }, "invalid-number"],
      [{ dpRank: 0, numRunningReqs: "4" as unknown as number }, "invalid-number"],
      [{ dpRank: 0, numRunningReqs: 1, numWaitingUncachedTokens: -5 }, "negative-count"]
    ]
    for (const [row, reason] of bad) {
      let r = makeRouter(totalRequests, [source("u", 2, "vllm-metrics")], { staleAfterSeconds: 5 })
      r = applyPoll(r, "u", Result.succeed([row, { dpRank: 1, numRunningReqs: 9, numWaitingReqs: 0 }]), 0)
      const s = statuses(r, 0)[0]!
      expect([s.condition, s.reason, s.row.unknown?.reason]).toEqual(["unknown", "rejected-row", reason])
      expect(s.row.numRunningReqs).toBeUndefined()
      expect(r.view.members).toEqual([1])
    }
  })

  it("each worker of a mixed fleet is measured against its own kind", () => {
    const counts = { numRunningReqs: 0, numWaitingReqs: 0 }
    let r = makeRouter(totalRequests, [source("v", 1, "vllm-metrics"), source("s", 1, "sglang-v1-loads")], {
      staleAfterSeconds: 5
    })
    r = applyPoll(r, "v", Result.succeed([{ dpRank: 0, ...counts }]), 0)
    r = applyPoll(r, "s", Result.succeed([{ dpRank: 0, ...counts }]), 0)
    // the old default made the SGLang rank unknown for lacking tokens
    expect(statuses(r, 0).map((s) => [s.condition, s.missing])).toEqual([
      ["known", undefined],
      ["known", ["numTotalTokens"]]
    ])
  })

  it("an explicit requiredFields wins over every kind: a row lacking one is unknown; a worker without a kind is measured against the three counts", () => {
    const counts = [{ dpRank: 0, numRunningReqs: 0, numWaitingReqs: 0 }]
    let explicit = makeRouter(totalRequests, [source("v", 1, "vllm-metrics")], {
      staleAfterSeconds: 5,
      requiredFields: ["kvCacheUsage"]
    })
    explicit = applyPoll(explicit, "v", Result.succeed(counts), 0)
    expect(statuses(explicit, 0)[0]).toMatchObject({ condition: "unknown", missing: ["kvCacheUsage"] })
    // an explicit list is the whole rule: a row holding it is known even without a count
    explicit = applyPoll(explicit, "v", Result.succeed([{ dpRank: 0, kvCacheUsage: 0.5 }]), 1)
    expect(statuses(explicit, 1)[0]).toMatchObject({
      condition: "known",
      missing: ["numRunningReqs", "numWaitingReqs"]
    })
    let kindless = makeRouter(totalRequests, [{ url: "w", dpSize: 1 }], { staleAfterSeconds: 5 })
    kindless = applyPoll(kindless, "w", Result.succeed(counts), 0)
    expect(statuses(kindless, 0)[0]).toMatchObject({ condition: "known", missing: ["numTotalTokens"] })
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

  // the old default made engines 1-3 unknown and sent every request to engine 0, the busiest
  it("vLLM #48808 as pasted (the last scrape has engine 0's waiting count only): every engine known, 1-3 partial; vLLM's balancer sends to 2 and 3", () => {
    let r = makeRouter(vllmKvPressure, [source("b", 4, "vllm-metrics")], { staleAfterSeconds: 5 })
    r = applyPoll(r, "b", Result.succeed(decoded(vllmDp4)), 0)
    const s = statuses(r, 0)
    expect(s.map((x) => [x.condition, x.missing, x.row.numRunningReqs, x.row.numWaitingReqs])).toEqual([
      ["known", undefined, 27, 0],
      ["known", ["numWaitingReqs"], 5, undefined],
      ["known", ["numWaitingReqs"], 0, undefined],
      ["known", ["numWaitingReqs"], 0, undefined]
    ])
    const picks: Array<number> = []
    for (let i = 0; i < 4; i++) {
      const p = placed(route(r, { requestId: `q${i}`, inputLength: 512 }, 0.1 + i / 100))
      expect(p.decision.mode).toBe("policy")
      picks.push(p.decision.dpRank)
      r = p.state
    }
    expect(picks).toEqual([2, 3, 2, 3])
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
