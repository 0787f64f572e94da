/**
 * The example router: a reverse proxy for OpenAI-style completions in front of SGLang or vLLM
 * workers, placing each request with a loadledger policy over a live ledger.
 *
 *   pnpm exec tsx --conditions=@loadledger/source examples/router/main.ts \
 *     --worker http://127.0.0.1:9001 --worker http://127.0.0.1:9002 --dp 2 --policy total-requests
 */
import { parseArgs } from "node:util"
import { type LoadField, type SourceKind, startLiveRouter } from "@loadledger/live"
import { pickPolicy } from "./policy.js"
import { startProxy } from "./proxy.js"

const { values } = parseArgs({
  options: {
    worker: { type: "string", multiple: true, default: [] },
    dp: { type: "string", default: "1" },
    source: { type: "string", default: "sglang-v1-loads" },
    policy: { type: "string", default: "total-requests" },
    port: { type: "string", default: "8000" },
    host: { type: "string", default: "127.0.0.1" },
    "interval-ms": { type: "string", default: "250" },
    "timeout-ms": { type: "string", default: "500" },
    "stale-ms": { type: "string", default: "1000" },
    unknown: { type: "string", default: "inflight" },
    require: { type: "string" },
    help: { type: "boolean", default: false }
  }
})

const usage = `usage: main.ts --worker URL [--worker URL ...] [--dp N] [--source sglang-v1-loads|sglang-get-load|sglang-metrics|vllm-metrics]
  [--policy NAME] [--port 8000] [--host 127.0.0.1] [--interval-ms 250] [--timeout-ms 500] [--stale-ms 1000]
  [--unknown inflight|exclude] [--require numRunningReqs,numWaitingReqs,numTotalTokens]`
if (values.help || values.worker.length === 0) {
  console.error(usage)
  process.exit(values.help ? 0 : 2)
}
const kinds = ["sglang-v1-loads", "sglang-get-load", "sglang-metrics", "vllm-metrics"]
if (!kinds.includes(values.source)) {
  console.error(`--source must be one of ${kinds.join(", ")}`)
  process.exit(2)
}
const policy = pickPolicy(values.policy)
if (typeof policy === "string") {
  console.error(policy)
  process.exit(2)
}
const source = values.source as SourceKind
const requiredFields = (
  values.require ??
  (source === "vllm-metrics" || source === "sglang-metrics"
    ? "numRunningReqs,numWaitingReqs"
    : "numRunningReqs,numWaitingReqs,numTotalTokens")
).split(",") as Array<LoadField>

const router = startLiveRouter({
  sources: values.worker.map((url) => ({
    url,
    dpSize: Number(values.dp),
    kind: source,
    intervalMs: Number(values["interval-ms"]),
    timeoutMs: Number(values["timeout-ms"])
  })),
  policy,
  staleAfterSeconds: Number(values["stale-ms"]) / 1000,
  unknownRanks: values.unknown === "exclude" ? "exclude" : "inflight",
  requiredFields
})
await router.ready
const proxy = await startProxy({ router, port: Number(values.port), host: values.host })
console.log(`loadledger router on ${proxy.url} (policy ${policy.name}, ${router.ranks().length} ranks)`)
for (const r of router.ranks()) console.log(`  ${r.id}: ${r.known ? "known" : `unknown (${r.reason})`}`)

const shutdown = async () => {
  await proxy.close()
  await router.close()
  process.exit(0)
}
process.on("SIGINT", shutdown)
process.on("SIGTERM", shutdown)
