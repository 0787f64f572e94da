// Smoke test of what ships: import every package's built `dist` (no source condition) and run the
// built CLI once. Run by `pnpm lint:pkg` after the build.

import assert from "node:assert/strict"
import { execFileSync } from "node:child_process"

const schema = await import("@loadledger/schema")
const policies = await import("@loadledger/policies")
const stepTime = await import("@loadledger/step-time")
await import("@loadledger/sim")
await import("@loadledger/testing")
await import("@loadledger/live")

const payload = JSON.stringify({
  loads: [{ dp_rank: 0, num_running_reqs: 2, num_waiting_reqs: 1, num_total_tokens: 300 }]
})
const rows = schema.decodeLedger(payload, "v1-loads")
assert.equal(rows._tag, "Success")
assert.equal(rows.success[0].numTotalTokens, 300)

const s0 = policies.totalTokens.init(2)
const r = policies.totalTokens.route(s0, { requestId: "a", inputLength: 10 }, 1)
assert.equal(r._tag, "Routed")
assert.equal(r.rank, 0)

const out = stepTime.stepTime({ model: stepTime.models["glm-5.3"], gpu: stepTime.gpus.h200 }, [
  { decode: [8192], extend: [] },
  { decode: [8192], extend: [] }
])
assert.ok(out.stepSeconds > 0)
// the light entry is the same model: the same presets and the same step time, from shared chunks
const core = await import("@loadledger/step-time/core")
assert.equal(core.models, stepTime.models)
assert.deepEqual(
  core.stepTime({ model: core.models["glm-5.3"], gpu: core.gpus.h200 }, [
    { decode: [8192], extend: [] },
    { decode: [8192], extend: [] }
  ]),
  out
)
assert.equal(core.modelFromJson, undefined)

const cli = execFileSync(
  process.execPath,
  ["packages/cli/dist/bin.js", "decode", "fixtures/payloads/sglang_v1_loads_docs_example.json"],
  { encoding: "utf8" }
)
assert.equal(JSON.parse(cli)[0].numTotalTokens, 100000)
// capacity on the built worker threads: the same JSON as in this thread
const capacity = (jobs) =>
  execFileSync(
    process.execPath,
    [
      "packages/cli/dist/bin.js",
      "capacity",
      "--trace",
      "examples/traces/mooncake/conversation_trace.jsonl",
      "--limit",
      "150",
      "--dp",
      "2",
      "--precision",
      "0.1",
      "--json",
      "--quiet",
      "--jobs",
      jobs
    ],
    { encoding: "utf8" }
  )
assert.equal(capacity("2"), capacity("1"))
console.log("smoke: built packages import and the built CLI runs")
