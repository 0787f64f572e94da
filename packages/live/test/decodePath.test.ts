/**
 * A load payload that fails to decode names the field at fault in the rank's status (as the
 * `decode` command does), whether it was decoded on the routing thread or off it.
 */
import { totalRequests } from "@loadledger/policies"
import { afterEach, expect, it } from "vitest"
import { type SourceKind, startLiveRouter } from "../src/index.js"
import { startFakeEngine } from "../src/testing/index.js"

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!()
})

const body = JSON.stringify({
  timestamp: "2026-01-01T00:00:00Z",
  version: "x",
  loads: [{ dp_rank: 0, timestamp: "soon", num_running_reqs: 0, num_waiting_reqs: 0, num_total_tokens: 0 }]
})

for (const [where, inThreadDecodeMaxBytes] of [
  ["on the routing thread", 1 << 20],
  ["off the routing thread", 0]
] as const)
  it(`decode-failed names the path of the bad field (${where})`, async () => {
    const e = await startFakeEngine({
      dpSize: 1,
      loads: { _tag: "body", body, contentType: "application/json" }
    })
    cleanups.push(() => e.close())
    const r = startLiveRouter({
      sources: [{ url: e.url, dpSize: 1, kind: "sglang-v1-loads", intervalMs: 1000, timeoutMs: 1000 }],
      policy: totalRequests,
      staleAfterSeconds: 5,
      // the decode worker starts from the sources under tsx: slow on a loaded machine
      decodeBudgetMs: 20_000,
      inThreadDecodeMaxBytes
    })
    cleanups.push(() => r.close())
    await r.ready
    const s = r.ranks()[0]!
    expect(s.reason).toBe("decode-failed")
    expect(s.row.unknown?.message).toMatch(/^decode-failed: InvalidField: \$\.loads\[0\]\.timestamp: /)
  })

/** A payload of each source kind that fails to decode, and the start of the message it must give. */
const badByKind: ReadonlyArray<readonly [SourceKind, string, RegExp]> = [
  ["sglang-v1-loads", body, /^decode-failed: InvalidField: \$\.loads\[0\]\.timestamp: /],
  [
    "sglang-get-load",
    '[{"dp_rank":0,"num_reqs":"3","num_waiting_reqs":0,"num_tokens":0}]',
    /^decode-failed: InvalidField: \$\[0\]\.num_reqs: /
  ],
  [
    "sglang-metrics",
    'sglang:num_running_reqs{dp_rank="0"} abc\n',
    /^decode-failed: SyntaxError: line 1: .*sglang:num_running_reqs/
  ],
  [
    "vllm-metrics",
    'vllm:num_requests_running{engine="0"} abc\n',
    /^decode-failed: SyntaxError: line 1: .*vllm:num_requests_running/
  ],
  [
    "trtllm-iteration-stats",
    JSON.stringify([{ iter: 1, numActiveRequests: "x" }]),
    /^decode-failed: InvalidField: \$\[0\]\.numActiveRequests: /
  ],
  [
    "trtllm-metrics",
    "trtllm_num_active_requests{} abc\n",
    /^decode-failed: SyntaxError: line 1: .*trtllm_num_active_requests/
  ]
]

it("every source kind names where its payload failed: the JSON path or the exposition line", async () => {
  expect(new Set(badByKind.map(([k]) => k)).size).toBe(6)
  for (const [kind, payload, expected] of badByKind) {
    const e = await startFakeEngine({
      dpSize: 1,
      loads: { _tag: "body", body: payload, contentType: "text/plain" }
    })
    cleanups.push(() => e.close())
    // every kind polls the engine's one load endpoint
    const r = startLiveRouter({
      sources: [{ url: e.url, dpSize: 1, kind, path: "/v1/loads", intervalMs: 1000, timeoutMs: 1000 }],
      policy: totalRequests,
      staleAfterSeconds: 5
    })
    cleanups.push(() => r.close())
    await r.ready
    const s = r.ranks()[0]!
    expect([kind, s.reason]).toEqual([kind, "decode-failed"])
    expect(s.row.unknown?.message).toMatch(expected)
  }
})
