/**
 * Start loopback test workers for the example router (127.0.0.1 only): each serves
 * `/v1/completions`, `/v1/chat/completions` (streamed when `"stream": true`) and a live SGLang-style
 * `/v1/loads` built from the requests it is serving.
 *
 *   pnpm exec tsx --conditions=@loadledger/source examples/router/workers.ts --count 2 --dp 2 --base-port 9001
 */
import { parseArgs } from "node:util"
import { startFakeEngine } from "@loadledger/live/testing"

const { values } = parseArgs({
  options: {
    count: { type: "string", default: "2" },
    dp: { type: "string", default: "2" },
    "base-port": { type: "string", default: "9001" },
    "latency-ms": { type: "string", default: "50" },
    chunks: { type: "string", default: "8" },
    "chunk-delay-ms": { type: "string", default: "25" }
  }
})
const workers = await Promise.all(
  Array.from({ length: Number(values.count) }, (_, i) =>
    startFakeEngine({
      port: Number(values["base-port"]) === 0 ? 0 : Number(values["base-port"]) + i, // 0: ephemeral ports
      dpSize: Number(values.dp),
      latencyMs: Number(values["latency-ms"]),
      chunks: Number(values.chunks),
      chunkDelayMs: Number(values["chunk-delay-ms"])
    })
  )
)
for (const w of workers) console.log(`test worker ${w.url} (dp ${values.dp}): /v1/loads, /v1/completions`)
console.log(`router flags: ${workers.map((w) => `--worker ${w.url}`).join(" ")} --dp ${values.dp}`)
const shutdown = async () => {
  await Promise.all(workers.map((w) => w.close()))
  process.exit(0)
}
process.on("SIGINT", shutdown)
process.on("SIGTERM", shutdown)
