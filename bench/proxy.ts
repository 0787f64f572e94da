// The router's overhead (issue 35 item 4): requests/s and p50 / p99 latency at concurrency 64,
// through `loadledger serve` against straight to the same fake engines, non-streamed and streamed,
// in one run. Engines, router and this client are three processes on the same machine (loopback).
// Targets: added p50 <= 1 ms, added p99 <= 5 ms, >= 5,000 non-streamed requests/s through the router.
//
//   pnpm bench:proxy [--seconds 5] [--concurrency 64] [--built] [--cpu-prof DIR] [--only router]
//   --built: packages/cli/dist (run `pnpm build` first); --cpu-prof DIR: the router's V8 CPU profile
//   written to DIR when it exits (open it in Chrome DevTools); --only router: skip the direct cases
import { type ChildProcess, spawn } from "node:child_process"
import { once } from "node:events"
import { readFileSync } from "node:fs"
import { Agent, request } from "node:http"
import { cpus, loadavg } from "node:os"
import { parseArgs } from "node:util"

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "5" },
    concurrency: { type: "string", default: "64" },
    built: { type: "boolean", default: false },
    "cpu-prof": { type: "string" },
    only: { type: "string" }
  }
})
const seconds = Number(values.seconds)
const concurrency = Number(values.concurrency)
const root = new URL("..", import.meta.url).pathname
const children: Array<ChildProcess> = []

/** Start a child and resolve with the first match of `pattern` on its stdout. */
const start = (args: Array<string>, pattern: RegExp): Promise<Array<string>> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: root, stdio: ["ignore", "pipe", "inherit"] })
    children.push(child)
    let out = ""
    child.stdout!.on("data", (c) => {
      out += String(c)
      const all = [...out.matchAll(new RegExp(pattern, "g"))].map((m) => m[1]!)
      if (all.length > 0 && out.includes("\n", out.lastIndexOf(all[all.length - 1]!))) resolve(all)
    })
    child.on("exit", (code) => reject(new Error(`${args.join(" ")} exited ${code}`)))
  })

const tsx = ["--import", "tsx", "--conditions=@loadledger/source"]
const engineUrls = await start(
  [
    ...tsx,
    "examples/router/workers.ts",
    "--count",
    "2",
    "--dp",
    "2",
    "--base-port",
    "0",
    "--latency-ms",
    "0",
    "--chunks",
    "3",
    "--chunk-delay-ms",
    "0"
  ],
  /test worker (http:\/\/\S+)/
)
const cli = values.built ? ["packages/cli/dist/bin.js"] : [...tsx, "packages/cli/src/bin.ts"]
const prof = values["cpu-prof"] === undefined ? [] : ["--cpu-prof", "--cpu-prof-dir", values["cpu-prof"]]
const [routerUrl] = await start(
  [
    ...prof,
    ...cli,
    "serve",
    ...engineUrls.flatMap((u) => ["--worker", u]),
    "--dp",
    "2",
    "--port",
    "0",
    "--interval-ms",
    "250"
  ],
  /"msg":"listening","url":"(http:\/\/[^"]+)"/
)

const agent = new Agent({ keepAlive: true, maxSockets: concurrency })
const once1 = (url: string, body: string): Promise<number> =>
  new Promise((resolve, reject) => {
    const t0 = performance.now()
    const req = request(
      url,
      {
        method: "POST",
        agent,
        headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) }
      },
      (res) => {
        res.on("data", () => {})
        res.on("end", () =>
          res.statusCode === 200
            ? resolve(performance.now() - t0)
            : reject(new Error(`HTTP ${res.statusCode}`))
        )
      }
    )
    req.on("error", reject)
    req.end(body)
  })

interface Figures {
  readonly rps: number
  readonly p50: number
  readonly p99: number
  /** CPU time (user + system) per request, µs: the engines' process and the router's (Linux only). */
  readonly engineCpuUs?: number | undefined
  readonly routerCpuUs?: number | undefined
}

/** A child's CPU seconds so far (user + system, from /proc; undefined off Linux). */
const cpuSeconds = (child: ChildProcess): number | undefined => {
  try {
    const f = readFileSync(`/proc/${child.pid}/stat`, "utf8").split(") ")[1]!.split(" ")
    return (Number(f[11]) + Number(f[12])) / 100
  } catch {
    return undefined
  }
}
const run = async (urls: ReadonlyArray<string>, stream: boolean, ms: number): Promise<Figures> => {
  const body = JSON.stringify({ model: "m", prompt: "the quick brown fox jumps over the lazy dog", stream })
  const lat: Array<number> = []
  const cpu0 = children.map(cpuSeconds)
  const end = performance.now() + ms
  let k = 0
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) lat.push(await once1(`${urls[k++ % urls.length]}/v1/completions`, body))
    })
  )
  const used = children.map((c, i) => {
    const a = cpu0[i]
    const b = cpuSeconds(c)
    return a === undefined || b === undefined ? undefined : ((b - a) * 1e6) / Math.max(1, lat.length)
  })
  lat.sort((a, b) => a - b)
  const q = (p: number) => lat[Math.min(lat.length - 1, Math.floor(p * lat.length))]!
  return {
    rps: lat.length / (ms / 1000),
    p50: q(0.5),
    p99: q(0.99),
    engineCpuUs: used[0],
    routerCpuUs: used[1]
  }
}

const f = (x: number, d = 2) => x.toFixed(d).padStart(8)
console.log(
  `proxy bench: 2 fake engines x 2 DP ranks, concurrency ${concurrency}, ${seconds} s a case after 1 s of warm-up; router ${values.built ? "built" : "from sources (tsx)"}; ${cpus().length} cores, load average ${loadavg()[0]!.toFixed(1)}`
)
console.log("case                       req/s    p50 ms   p99 ms  CPU us/req: engines  router")
const results: Record<string, Figures> = {}
for (const stream of [false, true])
  for (const [label, urls] of [
    ["direct", engineUrls],
    ["router", [routerUrl!]]
  ] as const) {
    if (values.only !== undefined && values.only !== label) continue
    await run(urls, stream, 1000)
    const r = await run(urls, stream, seconds * 1000)
    results[`${label}-${stream}`] = r
    console.log(
      `${`${label}, ${stream ? "streamed" : "non-streamed"}`.padEnd(24)} ${f(r.rps, 0)} ${f(r.p50)} ${f(r.p99)}            ${r.engineCpuUs === undefined ? "     -" : f(r.engineCpuUs, 0)} ${label === "router" && r.routerCpuUs !== undefined ? f(r.routerCpuUs, 0) : "       -"}`
    )
  }
for (const stream of [false, true]) {
  const d = results[`direct-${stream}`]
  const r = results[`router-${stream}`]
  if (d === undefined || r === undefined) continue
  console.log(
    `${stream ? "streamed" : "non-streamed"}: added p50 ${(r.p50 - d.p50).toFixed(2)} ms (target <= 1), added p99 ${(r.p99 - d.p99).toFixed(2)} ms (target <= 5), router ${r.rps.toFixed(0)} req/s${stream ? "" : " (target >= 5000)"}`
  )
}
agent.destroy()
for (const c of children) c.kill("SIGTERM")
await Promise.all(children.map((c) => (c.exitCode === null ? once(c, "exit") : undefined)))
process.exit(0)
