/**
 * Do polls stall routing? One router polls an engine that serves a valid, deeply nested /v1/loads
 * (800 KB by default) every 100 ms, while a loop routes and finishes requests as fast as the event
 * loop lets it (yielding with setImmediate). Measured twice: decoding on the routing thread
 * (`inThreadDecodeMaxBytes: Infinity`, the old behaviour) and off it (the default: bodies above 4 KiB
 * go to the decode worker). Prints routed calls and the event-loop delay (perf_hooks
 * monitorEventLoopDelay) of each run. Bounded: `--seconds` per run (default 8), loopback only.
 *
 *   pnpm exec tsx --conditions=@loadledger/source examples/router/pollStall.ts [--bytes 800000] [--seconds 8]
 */
import { monitorEventLoopDelay } from "node:perf_hooks"
import { parseArgs } from "node:util"
import { startLiveRouter } from "@loadledger/live"
import { nestedLoadsPayload, startFakeEngine } from "@loadledger/live/testing"
import { totalRequests } from "@loadledger/policies"

const { values } = parseArgs({
  options: { bytes: { type: "string", default: "800000" }, seconds: { type: "string", default: "8" } }
})
const bytes = Number(values.bytes)
const seconds = Number(values.seconds)
if (!Number.isInteger(bytes) || bytes < 1 || !(seconds > 0)) {
  console.error("pollStall: --bytes must be a positive integer and --seconds positive")
  process.exit(2)
}

const run = async (label: string, inThreadDecodeMaxBytes: number) => {
  const engine = await startFakeEngine({ dpSize: 2 })
  const healthy = await startFakeEngine({ dpSize: 2 })
  // a fixed body: the engine's own cost is the same in both runs
  engine.set({
    loads: { _tag: "body", body: nestedLoadsPayload(2, bytes, 200), contentType: "application/json" }
  })
  const router = startLiveRouter({
    sources: [engine, healthy].map((e) => ({
      url: e.url,
      dpSize: 2,
      kind: "sglang-v1-loads" as const,
      intervalMs: 100,
      timeoutMs: 300
    })),
    policy: totalRequests,
    staleAfterSeconds: 5,
    decodeBudgetMs: 10_000,
    inThreadDecodeMaxBytes
  })
  await router.ready
  const h = monitorEventLoopDelay({ resolution: 10 })
  h.enable()
  let routed = 0
  const end = performance.now() + seconds * 1000
  await new Promise<void>((resolve) => {
    const step = () => {
      if (performance.now() > end) return resolve()
      const id = `r${routed}`
      const d = router.route({ requestId: id, inputLength: 64 })
      if (d._tag === "Decision") {
        router.finish(id)
        routed++
      }
      setImmediate(step)
    }
    step()
  })
  h.disable()
  const text = await router.metrics()
  const decodes = /loadledger_router_decode_seconds_count (\d+)/.exec(text)?.[1]
  const decodeSum = /loadledger_router_decode_seconds_sum (\S+)/.exec(text)?.[1]
  await router.close()
  await engine.close()
  await healthy.close()
  const ms = (ns: number) => (ns / 1e6).toFixed(1)
  console.log(
    `${label.padEnd(28)} routed ${String(routed).padStart(7)} in ${seconds} s; event-loop delay p50 ${ms(h.percentile(50))} ms, p99 ${ms(h.percentile(99))} ms, max ${ms(h.max)} ms; ${decodes} decodes, ${Number(decodeSum).toFixed(2)} s decoding`
  )
}

console.log(
  `pollStall: one engine serves a ${bytes}-byte nested /v1/loads (depth 200), one a normal one; polls every 100 ms`
)
await run("decode on the routing thread", Number.POSITIVE_INFINITY)
await run("decode off the routing thread", 4096)
process.exit(0)
