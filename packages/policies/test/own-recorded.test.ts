/**
 * Every registered own policy's decisions (the rank of each route, or the rejection's reason) over
 * the shared traces (Mooncake conversation and synthetic, Azure 2023 conversation; the first 500
 * arrivals of each), replayed by `support/replay.ts` in three scenarios (one SGLang controller with
 * full rows; four vLLM front ends on the coordinator's partial rows; faults: a frozen publisher,
 * unknown rows, an unhealthy rank, pinned requests, rows without timestamps, a small KV pool),
 * against `recorded/ownDecisions.json`, taken before issue 29 rewrote the own policies as terms.
 * Each cell's decisions must hash to the recorded digest, and its first decisions must equal the
 * recorded ones.
 *
 * `RECORD=1 pnpm exec vitest run packages/policies/test/own-recorded.test.ts` rewrites the file:
 * only for a behaviour change that is meant, said in its changeset.
 *
 * Re-recorded for issue 30 item 4 (a): the three `uncached-tokens * vllm-4fe` cells changed, and
 * only they. vLLM's partial rows carry waiting requests but no token counts, and the
 * `waitingUncachedTokens` term priced every such queue as 0 (no rank reports the field); it now
 * prices it as waiting requests x the prompt's tokens (`ScoreView`), so `uncached-tokens` steers
 * away from ranks with a counted queue. Every other cell (full SGLang rows report the field; the
 * other own policies do not read the term) is unchanged.
 *
 * Re-recorded for issue 35 item 5 (the stale-prefix law, smg-project/smg PR #2132): a rank marked
 * unhealthy now keeps none of its prefix entries (`uncached-tokens`' bitmask index drops its bit,
 * `step-time-aware`'s prefix clock jumps past any cache). One cell changed, and only it:
 * `uncached-tokens mooncake-conversation faults`, whose scenario marks a rank unhealthy and back.
 *
 * Re-recorded for issue 33 item 3 (the speed term prices seconds): `speed-aware` is now
 * `step-time-aware` inside the speed term (was `ledger-balanced` inside it). Its nine cells changed,
 * and only they; each now equals `step-time-aware`'s cell of the same trace and scenario (no rank
 * here is slow, so the term learns no speed below 1 and is its inner policy decision for decision).
 */
import { createHash } from "node:crypto"
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { ownPolicyEntries, type Policy } from "../src/index.js"
import { type Arrival, azure, mooncake, replay, type Scenario } from "./support/replay.js"

const file = new URL("./recorded/ownDecisions.json", import.meta.url)
const count = 500

const traces: ReadonlyArray<readonly [string, ReadonlyArray<Arrival>, number]> = [
  ["mooncake-conversation", mooncake("examples/traces/mooncake/conversation_trace.jsonl", count), 7],
  ["mooncake-synthetic", mooncake("examples/traces/mooncake/synthetic_trace.jsonl", count), 5],
  ["azure-conversation", azure("fixtures/traces/azure2023/AzureLLMInferenceTrace_conv.csv", count), 8]
]

const scenarios: ReadonlyArray<Omit<Scenario, "speedUp">> = [
  {
    name: "sglang",
    dpSize: 8,
    clientCount: 1,
    clientIndex: 0,
    rows: "full",
    publishSeconds: 0.05,
    kvPoolTokens: 400_000,
    maxRunningRequests: 16,
    faults: false
  },
  {
    name: "vllm-4fe",
    dpSize: 8,
    clientCount: 4,
    clientIndex: 1,
    rows: "partial",
    publishSeconds: 0.1,
    kvPoolTokens: 400_000,
    maxRunningRequests: 16,
    faults: false
  },
  {
    name: "faults",
    dpSize: 6,
    clientCount: 2,
    clientIndex: 0,
    rows: "full",
    publishSeconds: 0.2,
    kvPoolTokens: 90_000,
    maxRunningRequests: 8,
    faults: true
  }
]

interface Cell {
  readonly digest: string
  readonly routed: number
  readonly rejected: Record<string, number>
  readonly first: string
}

const cellOf = (decisions: ReadonlyArray<string>): Cell => {
  const rejected: Record<string, number> = {}
  let routed = 0
  for (const d of decisions)
    if (d.startsWith("!")) rejected[d.slice(1)] = (rejected[d.slice(1)] ?? 0) + 1
    else routed++
  return {
    digest: createHash("sha256").update(decisions.join(",")).digest("hex").slice(0, 16),
    routed,
    rejected,
    first: decisions.slice(0, 24).join(",")
  }
}

const run = (): Record<string, Cell> => {
  const out: Record<string, Cell> = {}
  for (const entry of ownPolicyEntries)
    for (const [trace, arrivals, speedUp] of traces)
      for (const sc of scenarios) {
        const policy = entry.make({
          clientCount: sc.clientCount,
          clientIndex: sc.clientIndex,
          seed: 7,
          maxRunningRequests: sc.maxRunningRequests
        }) as Policy<unknown>
        out[`${entry.name} ${trace} ${sc.name}`] = cellOf(replay(policy, arrivals, { ...sc, speedUp }))
      }
  return out
}

describe("own policies' recorded decisions", () => {
  it("every registered own policy decides as recorded on the shared traces", () => {
    const now = run()
    if (process.env.RECORD === "1" || !existsSync(file)) {
      writeFileSync(file, `${JSON.stringify(now, null, 1)}\n`)
      return
    }
    const recorded = JSON.parse(readFileSync(file, "utf8")) as Record<string, Cell>
    expect(Object.keys(now).sort()).toEqual(Object.keys(recorded).sort())
    for (const key of Object.keys(recorded)) expect({ key, ...now[key] }).toEqual({ key, ...recorded[key] })
  })
})
