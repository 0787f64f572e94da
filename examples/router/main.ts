/**
 * The example router: a reverse proxy for OpenAI-style completions in front of SGLang or vLLM
 * workers, placing each request with a loadledger policy over a live ledger.
 *
 *   pnpm exec tsx --conditions=@loadledger/source examples/router/main.ts \
 *     --worker http://127.0.0.1:9001 --worker http://127.0.0.1:9002 --dp 2 --policy total-requests
 *
 * Bad arguments, or a port that cannot be bound, end with one line on stderr (exit 2 / 1).
 */
import { startLiveRouter, startProxy } from "@loadledger/live"
import { findPolicy, stepCostFrom } from "@loadledger/policies"
import { gpus, models, stepTimeFromAggregates } from "@loadledger/step-time"
import { parseRouterArgs, usage } from "./args.js"

const args = parseRouterArgs(process.argv.slice(2))
if (args === "help") {
  console.log(usage)
  process.exit(0)
}
if ("error" in args) {
  console.error(`main.ts: ${args.error} (--help for usage)`)
  process.exit(2)
}
// the served model's step cost, fitted once (read by `step-time-aware`; others ignore it)
const served =
  args.model !== undefined && args.gpu !== undefined
    ? { model: models[args.model]!, gpu: gpus[args.gpu]! }
    : undefined
const policy = findPolicy(args.policy)!.make({
  seed: 1,
  clientCount: args.replicas,
  clientIndex: args.replicaIndex,
  maxRunningRequests: args.maxRunningRequests,
  stepCost:
    served === undefined
      ? undefined
      : stepCostFrom((ranks) => stepTimeFromAggregates(served, ranks), { dpSize: args.dp })
})
const router = startLiveRouter({
  sources: args.workers.map((url) => ({
    url,
    dpSize: args.dp,
    kind: args.source,
    intervalMs: args.intervalMs,
    timeoutMs: args.timeoutMs
  })),
  policy,
  staleAfterSeconds: args.staleMs / 1000,
  requiredFields: args.requiredFields,
  clientCount: args.replicas,
  clientIndex: args.replicaIndex,
  decodeBudgetMs: args.decodeBudgetMs,
  processMetrics: true
})
const proxy = await startProxy({
  router,
  port: args.port,
  host: args.host,
  connectTimeoutMs: args.connectTimeoutMs,
  firstByteTimeoutMs: args.firstByteTimeoutMs,
  idleStreamTimeoutMs: args.idleTimeoutMs,
  ejectAfterFailures: args.ejectAfter,
  ejectForMs: args.ejectMs
}).catch(async (e: NodeJS.ErrnoException) => {
  await router.close()
  const why =
    e.code === "EADDRINUSE" ? "is in use" : e.code === "EACCES" ? "is not permitted" : `failed: ${e.message}`
  console.error(`main.ts: cannot listen on ${args.host}:${args.port}: the port ${why} (${e.code ?? "error"})`)
  process.exit(1)
})
await router.ready
const costNote = served === undefined ? "" : `, step cost of ${args.model} on ${args.gpu}`
console.log(
  `loadledger router on ${proxy.url} (policy ${policy.name}${costNote}, ${router.ranks().length} ranks)`
)
for (const r of router.ranks()) console.log(`  ${r.id}: ${r.condition}${r.reason ? ` (${r.reason})` : ""}`)

const shutdown = async () => {
  await proxy.close()
  await router.close()
  process.exit(0)
}
process.on("SIGINT", shutdown)
process.on("SIGTERM", shutdown)
