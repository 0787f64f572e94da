/**
 * Bounded load test of the example router's added latency (loopback only).
 *
 *   pnpm exec tsx --conditions=@loadledger/source bench/live.ts [--requests 2000] [--concurrency 1,16]
 *     [--deadline-s 60] [--mode processes|inprocess]
 *
 * Two loopback test workers (DP 2 each, no artificial latency, one-chunk answers) behind the example
 * router (`examples/router/main.ts`, policy total-requests, polls every 100 ms). `processes` (default):
 * workers, router and this client each run in their own process; `inprocess`: all in this one. For each request
 * we time the same completion through the proxy and straight to the worker and rank the chosen
 * upstream received, and report the difference (proxy − direct) at p50 and p99. Fixed request count
 * and a hard deadline; all servers are closed at the end.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { Agent, request as httpRequest } from "node:http"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import { applyPoll, finish, makeRouter, route, startLiveRouter, startProxy } from "@loadledger/live"
import { startFakeEngine as startFakeWorker } from "@loadledger/live/testing"
import { totalRequests } from "@loadledger/policies"
import { Result } from "effect"
import { type Benchmark, nsPerOp } from "./harness.js"

const agent = new Agent({ keepAlive: true, maxSockets: 64 })
const body = JSON.stringify({ model: "m", prompt: "Say hello in one word." })

const once = (url: string, rank: number | undefined): Promise<{ ms: number; rank: string; dpRank: number }> =>
  new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint()
    const headers: Record<string, string> = { "content-type": "application/json" }
    if (rank !== undefined) headers["x-data-parallel-rank"] = String(rank)
    const req = httpRequest(url, { method: "POST", agent, headers }, (res) => {
      let text = ""
      res.setEncoding("utf8")
      res.on("data", (c: string) => {
        text += c
      })
      res.on("end", () => {
        const ms = Number(process.hrtime.bigint() - t0) / 1e6
        if (res.statusCode !== 200) return reject(new Error(`HTTP ${res.statusCode}`))
        resolve({
          ms,
          rank: String(res.headers["x-loadledger-rank"] ?? ""),
          dpRank: JSON.parse(text).dp_rank
        })
      })
    })
    req.on("error", reject)
    req.end(body)
  })

const pct = (xs: ReadonlyArray<number>, p: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] ?? Number.NaN
}

/** CPU cost of the pure decision path alone: `route` + `finish` with fresh loads, in µs per request. */
export const decisionCostUs = (ranksPerWorker = 4, workerCount = 2, held = 0): number => {
  const workers = Array.from({ length: workerCount }, (_, i) => ({ url: `w${i}`, dpSize: ranksPerWorker }))
  let r = makeRouter(totalRequests, workers, { staleAfterSeconds: 1e9 })
  for (const w of workers) {
    const rows = Array.from({ length: ranksPerWorker }, (_, dpRank) => ({
      dpRank,
      timestamp: 1,
      numRunningReqs: dpRank,
      numWaitingReqs: 0,
      numTotalTokens: 100 * dpRank
    }))
    r = applyPoll(r, w.url, Result.succeed(rows), 0)
  }
  for (let i = 0; i < held; i++) {
    const out = route(r, { requestId: `held${i}`, inputLength: 64 }, 0.5)
    if (out._tag === "RouterError") throw new Error(out.message)
    r = out.state
  }
  const ns = nsPerOp((i) => {
    const out = route(r, { requestId: `b${i}`, inputLength: 64 }, 1 + i * 1e-6)
    if (out._tag === "RouterError") throw new Error(out.message)
    r = finish(out.state, `b${i}`, 1 + i * 1e-6).state
  }, 2000)
  return ns / 1000
}

/** `pnpm bench` entry: the decision path only (the proxy load test is async: run this file directly). */
export const liveBench: Benchmark = {
  name: "live router decision path",
  run: () => {
    for (const [per, count, held] of [
      [4, 2, 0],
      [8, 8, 0],
      [8, 8, 5000]
    ] as const) {
      const us = decisionCostUs(per, count, held)
      process.stdout.write(
        `route + finish, ${per * count} ranks, ${held} others in flight: ${us.toFixed(2)} µs per request (min of 9 rounds)\n`
      )
    }
    process.stdout.write("proxy added latency: pnpm exec tsx --conditions=@loadledger/source bench/live.ts\n")
  }
}

interface Setup {
  readonly proxyUrl: string
  readonly inflight: () => Promise<ReadonlyArray<number>>
  readonly close: () => Promise<void>
}

/** Workers, router and proxy inside this process (they share the client's event loop). */
const inProcess = async (): Promise<Setup> => {
  const workers = await Promise.all([0, 1].map(() => startFakeWorker({ dpSize: 2, chunks: 1 })))
  const router = startLiveRouter({
    sources: workers.map((w) => ({
      url: w.url,
      dpSize: 2,
      kind: "sglang-v1-loads" as const,
      intervalMs: 100,
      timeoutMs: 500
    })),
    policy: totalRequests,
    staleAfterSeconds: 1
  })
  await router.ready
  const proxy = await startProxy({ router })
  return {
    proxyUrl: proxy.url,
    inflight: async () => router.inflight(),
    close: async () => {
      await proxy.close()
      await router.close()
      await Promise.all(workers.map((w) => w.close()))
    }
  }
}

/** Start `script` under tsx in a child process; resolve with the stdout lines matching `pattern`. */
const child = (script: string, args: ReadonlyArray<string>, pattern: RegExp, count: number) =>
  new Promise<{ proc: ChildProcess; matches: Array<RegExpExecArray> }>((resolve, reject) => {
    const path = fileURLToPath(new URL(script, import.meta.url))
    const proc = spawn(
      process.execPath,
      ["--import", "tsx", "--conditions=@loadledger/source", path, ...args],
      {
        stdio: ["ignore", "pipe", "inherit"]
      }
    )
    const matches: Array<RegExpExecArray> = []
    let buf = ""
    const timer = setTimeout(() => reject(new Error(`${script} did not start within 60 s`)), 60_000)
    proc.stdout.setEncoding("utf8")
    proc.stdout.on("data", (c: string) => {
      buf += c
      for (let nl = buf.indexOf("\n"); nl >= 0; nl = buf.indexOf("\n")) {
        const m = pattern.exec(buf.slice(0, nl))
        buf = buf.slice(nl + 1)
        if (m !== null) matches.push(m)
        if (matches.length === count) {
          clearTimeout(timer)
          resolve({ proc, matches })
        }
      }
    })
    proc.on("exit", (code) => reject(new Error(`${script} exited with ${code}`)))
  })

/** Workers and the router each in their own process, the client alone in this one. */
const separateProcesses = async (): Promise<Setup> => {
  const workers = await child(
    "../examples/router/workers.ts",
    [
      "--count",
      "2",
      "--dp",
      "2",
      "--base-port",
      "0",
      "--latency-ms",
      "0",
      "--chunks",
      "1",
      "--chunk-delay-ms",
      "0"
    ],
    /^test worker (\S+) /,
    2
  )
  const urls = workers.matches.map((m) => m[1]!)
  const router = await child(
    "../examples/router/main.ts",
    [
      ...urls.flatMap((u) => ["--worker", u]),
      "--dp",
      "2",
      "--port",
      "0",
      "--interval-ms",
      "100",
      "--policy",
      "total-requests"
    ],
    /^loadledger router on (\S+) /,
    1
  ).catch((e) => {
    workers.proc.kill()
    throw e
  })
  const proxyUrl = router.matches[0]![1]!
  const stop = (p: ChildProcess) =>
    new Promise<void>((resolve) => {
      if (p.exitCode !== null) return resolve()
      p.removeAllListeners("exit")
      p.once("exit", () => resolve())
      p.kill("SIGTERM")
    })
  return {
    proxyUrl,
    inflight: async () => {
      const res = await fetch(`${proxyUrl}/router/ranks`)
      return ((await res.json()) as { inflight: ReadonlyArray<number> }).inflight
    },
    close: async () => {
      await stop(router.proc)
      await stop(workers.proc)
    }
  }
}

export const run = async (
  requests = 2000,
  concurrencies: ReadonlyArray<number> = [1, 16],
  deadlineS = 60,
  mode: "processes" | "inprocess" = "processes"
) => {
  const deadline = Date.now() + deadlineS * 1000
  const setup = mode === "processes" ? await separateProcesses() : await inProcess()
  const lines: Array<string> = []
  try {
    for (let i = 0; i < 200; i++) await once(`${setup.proxyUrl}/v1/completions`, undefined) // warm-up
    for (const c of concurrencies) {
      const added: Array<number> = []
      const viaProxy: Array<number> = []
      const direct: Array<number> = []
      let next = 0
      await Promise.all(
        Array.from({ length: c }, async () => {
          while (next < requests && Date.now() < deadline) {
            next++
            const p = await once(`${setup.proxyUrl}/v1/completions`, undefined)
            const at = p.rank.lastIndexOf("@")
            const d = await once(`${p.rank.slice(0, at)}/v1/completions`, Number(p.rank.slice(at + 1)))
            viaProxy.push(p.ms)
            direct.push(d.ms)
            added.push(p.ms - d.ms)
          }
        })
      )
      const f = (x: number) => x.toFixed(3)
      lines.push(
        `concurrency ${c}: ${added.length} requests; added latency p50 ${f(pct(added, 50))} ms, p99 ${f(pct(added, 99))} ms` +
          ` (via proxy p50 ${f(pct(viaProxy, 50))} / p99 ${f(pct(viaProxy, 99))} ms; direct p50 ${f(pct(direct, 50))} / p99 ${f(pct(direct, 99))} ms)`
      )
    }
    if (Date.now() >= deadline) lines.push(`stopped at the ${deadlineS} s deadline`)
    lines.push(`in flight after the run: [${(await setup.inflight()).join(", ")}]`)
  } finally {
    await setup.close()
    agent.destroy()
  }
  return lines
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: {
      requests: { type: "string", default: "2000" },
      concurrency: { type: "string", default: "1,16" },
      "deadline-s": { type: "string", default: "60" },
      mode: { type: "string", default: "processes" }
    }
  })
  const mode = values.mode === "inprocess" ? "inprocess" : "processes"
  console.log(
    `node ${process.version}, loopback, ${values.requests} requests per concurrency level, mode ${mode}`
  )
  console.log(`decision path (route + finish, 8 ranks, pure): ${decisionCostUs().toFixed(2)} µs per request`)
  const lines = await run(
    Number(values.requests),
    values.concurrency.split(",").map(Number),
    Number(values["deadline-s"]),
    mode
  )
  for (const l of lines) console.log(l)
}
