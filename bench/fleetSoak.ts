/**
 * Soak: workers come and go under load (issue 35, "workers come and go under load in the soak
 * with nothing lost"). Fake engines behind `startServe` with a watched worker file rewritten every
 * `--churn-ms` to a random non-empty subset, a client at `--concurrency` sending `--requests`
 * non-streamed completions. Prints sent, answered 200, answered otherwise, lost (no answer), the
 * engines' received count and the duplicates (one request id at two engines), worker adds and
 * removals, and the in-flight counts at the end (router and engines), which must be 0.
 *
 *   pnpm bench:soak [--requests 4000] [--concurrency 32] [--engines 4] [--churn-ms 200]
 */
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { parseArgs } from "node:util"
import { parseServeArgs, type ServeArgs, startServe } from "@loadledger/live"
import { startFakeEngine } from "@loadledger/live/testing"
import { totalRequests } from "@loadledger/policies"

const { values } = parseArgs({
  options: {
    requests: { type: "string", default: "4000" },
    concurrency: { type: "string", default: "32" },
    engines: { type: "string", default: "4" },
    "churn-ms": { type: "string", default: "200" }
  }
})
const requests = Number(values.requests)
const concurrency = Number(values.concurrency)
const engines = await Promise.all(
  Array.from({ length: Number(values.engines) }, () => startFakeEngine({ dpSize: 2 }))
)
const path = join(mkdtempSync(join(tmpdir(), "soak-")), "workers.txt")
writeFileSync(path, engines.map((e) => e.url).join("\n"))
const args = parseServeArgs([
  "--workers-file",
  path,
  "--dp",
  "2",
  "--port",
  "0",
  "--interval-ms",
  "50"
]) as ServeArgs
let adds = 0
let removes = 0
const s = await startServe(args, totalRequests, {
  log: (r) => {
    if (r.msg === "worker-added") adds++
    if (r.msg === "worker-removed") removes++
  }
})
await s.router.ready
let seed = 7
const rand = () => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31
  return seed / 2 ** 31
}
const churn = setInterval(() => {
  const pick = engines.filter(() => rand() < 0.6)
  writeFileSync(
    path,
    (pick.length > 0 ? pick : [engines[Math.floor(rand() * engines.length)]!]).map((e) => e.url).join("\n")
  )
}, Number(values["churn-ms"]))
let sent = 0
let ok = 0
let other = 0
let lost = 0
const t0 = performance.now()
const client = async () => {
  while (sent < requests) {
    sent++
    try {
      const res = await fetch(`${s.url}/v1/completions`, {
        method: "POST",
        body: JSON.stringify({ prompt: "soak", max_tokens: 4 })
      })
      await res.arrayBuffer()
      if (res.status === 200) ok++
      else other++
    } catch {
      lost++
    }
  }
}
await Promise.all(Array.from({ length: concurrency }, client))
clearInterval(churn)
const seconds = (performance.now() - t0) / 1000
await new Promise((r) => setTimeout(r, 200))
const ids = engines.flatMap((e) =>
  e
    .received()
    .filter((x) => x.path.includes("completions"))
    .map((x) => x.requestId)
)
const report = {
  sent,
  answered200: ok,
  answeredOther: other,
  lost,
  atEngines: ids.length,
  duplicatedAtEngines: ids.length - new Set(ids).size,
  workerAdds: adds,
  workerRemoves: removes,
  routerInflightAtEnd: s.router.inflight().reduce((a, b) => a + b, 0),
  engineRunningAtEnd: engines.flatMap((e) => e.running()).reduce((a, b) => a + b, 0),
  requestsPerSecond: Math.round(sent / seconds)
}
console.log(JSON.stringify(report, null, 2))
await s.close()
await Promise.all(engines.map((e) => e.close()))
process.exitCode =
  report.lost === 0 && report.routerInflightAtEnd === 0 && report.engineRunningAtEnd === 0 ? 0 : 1
