/**
 * The router under faults, on loopback: fake engines (from @loadledger/live/testing) behind the
 * example router, a bounded client, and the fault matrix of issue 12 (hang, 500s, restart with the
 * port closed, schema drift, frozen stats, -1 loads, oversized payload, slow stream). Prints what
 * an operator asks: sent, answered, lost, duplicated at engines, retried, fallback decisions by
 * reason, in-flight at the end, time to exclude and readmit each faulty engine, router RSS and
 * event-loop delay.
 *
 *   pnpm soak [--requests 2000] [--concurrency 32] [--engines 8] [--dp 2] [--fault-s 10]
 *             [--deadline-s 120] [--router process|inprocess] [--json]
 *
 * Bounded: stops after `--requests` answers or `--deadline-s`, whichever first; 127.0.0.1 only.
 * Over 300 lines: a runnable script, read top to bottom (setup, the fault matrix, the report); splitting it would make it harder to follow as an example.
 *
 */
import { type ChildProcess, spawn } from "node:child_process"
import { once } from "node:events"
import { Agent, request as httpRequest } from "node:http"
import { cpus, loadavg } from "node:os"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import { startLiveRouter, startProxy } from "@loadledger/live"
import { type FakeEngine, type FakeEngineOptions, startFakeEngine } from "@loadledger/live/testing"
import { findPolicy } from "@loadledger/policies"

/** One fault of the matrix: what it does to its engine, and whether the router must exclude it. */
export interface Fault {
  readonly name: string
  readonly apply: (e: FakeEngine) => Promise<void>
  readonly clear: (e: FakeEngine) => Promise<void>
  /** The longest time from the fault's start to the engine's exclusion (ms), or undefined when it must stay in. */
  readonly excludeBoundMs?: number | undefined
}

export interface SoakOptions {
  readonly requests: number
  readonly concurrency: number
  readonly engines: number
  readonly dp: number
  readonly intervalMs: number
  readonly timeoutMs: number
  readonly staleMs: number
  readonly decodeBudgetMs: number
  readonly faultStartMs: number
  readonly faultMs: number
  readonly deadlineMs: number
  readonly engineLatencyMs: number
  readonly router: "process" | "inprocess"
  readonly policy: string
  readonly firstByteTimeoutMs: number
  readonly idleTimeoutMs: number
  readonly oversizedBytes: number
  /** How long the proxy's passive health check ejects an engine after 3 failed requests in a row. */
  readonly ejectMs: number
}

export interface EngineReport {
  readonly engine: string
  readonly fault: string
  readonly mustExclude: boolean
  readonly boundMs?: number | undefined
  /** ms from the fault's start until every rank of the engine left the view (undefined: never). */
  readonly excludedAfterMs?: number | undefined
  /** the ranks' reasons when exclusion was first seen */
  readonly excludedAs?: string | undefined
  /** ms from the fault's end until every rank was known again (undefined: not within the deadline). */
  readonly readmittedAfterMs?: number | undefined
  /** requests the engine received later than `boundMs` after the fault began, while it lasted. */
  readonly receivedAfterBound: number
}

export interface SoakReport {
  readonly options: SoakOptions
  readonly sent: number
  readonly answered: number
  readonly answeredByStatus: Readonly<Record<string, number>>
  readonly cutMidStream: number
  readonly lost: number
  readonly duplicatedAtEngines: number
  readonly retried: number
  readonly fallbacks: Readonly<Record<string, number>>
  readonly inflightAtEnd: number
  readonly engines: ReadonlyArray<EngineReport>
  readonly routerRssStartMb: number
  readonly routerRssPeakMb: number
  /** The router's event-loop delay (prom-client, monitorEventLoopDelay): worst max and worst p99 over scrapes. */
  readonly eventLoopDelayMaxMs: number
  readonly eventLoopDelayP99Ms: number
  readonly elapsedS: number
  /** 1-minute load average of the machine at the start and the end, and its core count. */
  readonly loadAverage: readonly [number, number]
  readonly cores: number
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

/** The fault matrix, in engine order; engines past the matrix stay healthy. */
export const faultMatrix = (o: SoakOptions): ReadonlyArray<Fault> => {
  const poll = o.intervalMs + o.timeoutMs
  const set = (x: Partial<FakeEngineOptions>) => async (e: FakeEngine) => e.set(x)
  const healthy = set({ loads: { _tag: "live" }, completions: "ok", chunkDelayMs: 10 })
  return [
    {
      name: "hang",
      apply: set({ loads: { _tag: "hang" }, completions: "hang" }),
      clear: healthy,
      excludeBoundMs: poll
    },
    {
      name: "500s",
      apply: set({ loads: { _tag: "status", status: 500 }, completions: "500" }),
      clear: healthy,
      excludeBoundMs: poll
    },
    { name: "restart (port closed)", apply: (e) => e.stop(), clear: (e) => e.start(), excludeBoundMs: poll },
    { name: "schema drift", apply: set({ loads: { _tag: "drift" } }), clear: healthy, excludeBoundMs: poll },
    // a frozen timestamp is first received within one poll; the first poll answered more than
    // `staleMs` after that receipt proves it frozen
    {
      name: "frozen stats",
      apply: set({ loads: { _tag: "frozen" } }),
      clear: healthy,
      excludeBoundMs: 2 * poll + o.staleMs
    },
    { name: "-1 loads", apply: set({ loads: { _tag: "negative" } }), clear: healthy, excludeBoundMs: poll },
    {
      name: "oversized payload",
      apply: set({ loads: { _tag: "nested", bytes: o.oversizedBytes, depth: 200 } }),
      clear: healthy
    },
    { name: "slow stream", apply: set({ chunkDelayMs: Math.min(200, o.idleTimeoutMs / 4) }), clear: healthy }
  ]
}

interface RouterHandle {
  readonly url: string
  readonly close: () => Promise<void>
}

const startRouterProcess = async (
  o: SoakOptions,
  engines: ReadonlyArray<FakeEngine>
): Promise<RouterHandle> => {
  const main = fileURLToPath(new URL("./main.ts", import.meta.url))
  const args = [
    ...engines.flatMap((e) => ["--worker", e.url]),
    ...["--dp", String(o.dp), "--port", "0", "--policy", o.policy],
    ...[
      "--interval-ms",
      String(o.intervalMs),
      "--timeout-ms",
      String(o.timeoutMs),
      "--stale-ms",
      String(o.staleMs)
    ],
    ...[
      "--first-byte-timeout-ms",
      String(o.firstByteTimeoutMs),
      "--idle-timeout-ms",
      String(o.idleTimeoutMs)
    ],
    ...["--decode-budget-ms", String(o.decodeBudgetMs), "--eject-ms", String(o.ejectMs), "--drain-ms", "2000"]
  ]
  const child: ChildProcess = spawn(
    process.execPath,
    ["--import", "tsx", "--conditions=@loadledger/source", main, ...args],
    { stdio: ["ignore", "pipe", "pipe"] }
  )
  let out = ""
  let err = ""
  child.stderr!.on("data", (c) => {
    err += String(c)
  })
  const url = await new Promise<string>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`router did not start in 60 s: ${err}`)), 60_000)
    child.stdout!.on("data", (c) => {
      out += String(c)
      // the JSON log line `{"msg":"listening","url":...}`
      const m = /"msg":"listening","url":"(http:\/\/[^"]+)"/.exec(out)
      if (m !== null) {
        clearTimeout(t)
        resolve(m[1]!)
      }
    })
    child.on("exit", (code) => reject(new Error(`router exited ${code}: ${err}`)))
  })
  return {
    url,
    close: async () => {
      const exited = once(child, "exit")
      child.kill("SIGTERM")
      await Promise.race([exited, sleep(5_000)])
    }
  }
}

const startRouterInProcess = async (
  o: SoakOptions,
  engines: ReadonlyArray<FakeEngine>
): Promise<RouterHandle> => {
  const router = startLiveRouter({
    sources: engines.map((e) => ({
      url: e.url,
      dpSize: o.dp,
      kind: "sglang-v1-loads" as const,
      intervalMs: o.intervalMs,
      timeoutMs: o.timeoutMs
    })),
    policy: findPolicy(o.policy)!.make({ seed: 1 }),
    staleAfterSeconds: o.staleMs / 1000,
    decodeBudgetMs: o.decodeBudgetMs,
    processMetrics: true
  })
  await router.ready
  const proxy = await startProxy({
    router,
    firstByteTimeoutMs: o.firstByteTimeoutMs,
    idleStreamTimeoutMs: o.idleTimeoutMs,
    ejectForMs: o.ejectMs
  })
  return {
    url: proxy.url,
    close: async () => {
      await proxy.close()
      await router.close()
    }
  }
}

const get = (agent: Agent, url: string, timeoutMs = 2_000): Promise<string | undefined> =>
  new Promise((resolve) => {
    const req = httpRequest(url, { agent, timeout: timeoutMs }, (res) => {
      let body = ""
      res.setEncoding("utf8")
      res.on("data", (c) => {
        body += c
      })
      res.on("end", () => resolve(body))
      res.on("error", () => resolve(undefined))
    })
    req.on("timeout", () => req.destroy())
    req.on("error", () => resolve(undefined))
    req.end()
  })

const metricValues = (text: string, name: string): Array<{ labels: string; value: number }> =>
  text
    .split("\n")
    .filter((l) => l.startsWith(name))
    .map((l) => {
      const m = /^[^{\s]+(\{[^}]*\})?\s+(\S+)/.exec(l)
      return { labels: m?.[1] ?? "", value: Number(m?.[2]) }
    })

type Outcome =
  | { readonly _tag: "answered"; readonly status: number }
  | { readonly _tag: "cut" }
  | { readonly _tag: "lost" }

const send = (agent: Agent, url: string, id: string, stream: boolean, timeoutMs: number): Promise<Outcome> =>
  new Promise((resolve) => {
    const body = JSON.stringify({ model: "m", prompt: `soak request ${id}`, stream })
    let settled = false
    const done = (o: Outcome) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      resolve(o)
    }
    const req = httpRequest(
      `${url}/v1/completions`,
      {
        method: "POST",
        agent,
        headers: {
          "content-type": "application/json",
          "content-length": Buffer.byteLength(body),
          "x-request-id": id
        }
      },
      (res) => {
        res.on("data", () => {})
        res.on("end", () => done({ _tag: "answered", status: res.statusCode! }))
        res.on("aborted", () => done({ _tag: "cut" }))
        res.on("error", () => done({ _tag: "cut" }))
        res.on("close", () =>
          done(res.complete ? { _tag: "answered", status: res.statusCode! } : { _tag: "cut" })
        )
      }
    )
    const timer = setTimeout(() => {
      done({ _tag: "lost" })
      req.destroy()
    }, timeoutMs)
    req.on("error", () => done({ _tag: "lost" }))
    req.end(body)
  })

/** Run the soak; resolves with the report (engines and router are closed). */
export const runSoak = async (o: SoakOptions): Promise<SoakReport> => {
  const t0 = Date.now()
  const loadStart = loadavg()[0]!
  const engines = await Promise.all(
    Array.from({ length: o.engines }, () =>
      startFakeEngine({ dpSize: o.dp, latencyMs: o.engineLatencyMs, chunks: 4, chunkDelayMs: 10 })
    )
  )
  const router =
    o.router === "process" ? await startRouterProcess(o, engines) : await startRouterInProcess(o, engines)
  const agent = new Agent({ keepAlive: true, maxSockets: o.concurrency + 4 })
  const side = new Agent({ keepAlive: true, maxSockets: 4 })
  const faults = faultMatrix(o).slice(0, o.engines)

  // observers: router RSS and event-loop delay from /metrics; rank conditions from /router/ranks
  let rssStart = 0
  let rssPeak = 0
  let scrapes = 0
  let loopMax = 0
  let loopP99 = 0
  let observing = true
  const scrape = async () => {
    const text = await get(side, `${router.url}/metrics`)
    if (text === undefined) return text
    const rss = metricValues(text, "process_resident_memory_bytes")[0]?.value ?? Number.NaN
    // the first scrape covers start-up (module loading); the delay is measured from the second on
    if (scrapes++ === 0) rssStart = rss
    else {
      loopMax = Math.max(
        loopMax,
        metricValues(text, "nodejs_eventloop_lag_max_seconds")[0]?.value ?? Number.NEGATIVE_INFINITY
      )
      loopP99 = Math.max(
        loopP99,
        metricValues(text, "nodejs_eventloop_lag_p99_seconds")[0]?.value ?? Number.NEGATIVE_INFINITY
      )
    }
    rssPeak = Math.max(rssPeak, rss)
    return text
  }
  await scrape()
  const faultStart = t0 + 0 // set when faults are applied
  let faultAt = faultStart
  let clearAt = Number.POSITIVE_INFINITY
  const excludedAt = new Map<number, number>()
  const readmittedAt = new Map<number, number>()
  const excludedWhy = new Map<number, string>()
  const observer = (async () => {
    let k = 0
    while (observing) {
      const text = await get(side, `${router.url}/router/ranks`)
      if (text !== undefined) {
        const ranks = (
          JSON.parse(text) as { ranks: Array<{ workerUrl: string; condition: string; reason?: string }> }
        ).ranks
        const now = Date.now()
        faults.forEach((_, i) => {
          const mine = ranks.filter((r) => r.workerUrl === engines[i]!.url)
          const out = mine.length > 0 && mine.every((r) => r.condition !== "known")
          if (now >= faultAt && faultAt > t0 && !excludedAt.has(i) && out && now < clearAt) {
            excludedAt.set(i, now)
            excludedWhy.set(i, [...new Set(mine.map((r) => r.reason))].join(","))
          }
          if (now >= clearAt && !readmittedAt.has(i) && mine.length > 0 && !out) readmittedAt.set(i, now)
        })
      }
      if (++k % 10 === 0) await scrape()
      await sleep(20)
    }
  })()

  const outcomes: Array<Outcome> = []
  let next = 0
  const deadline = t0 + o.deadlineMs
  const clientTimeoutMs = o.firstByteTimeoutMs + o.idleTimeoutMs + 10_000
  const clients = Array.from({ length: o.concurrency }, async () => {
    while (next < o.requests && Date.now() < deadline) {
      const i = next++
      outcomes.push(await send(agent, router.url, `soak-${i}`, i % 2 === 0, clientTimeoutMs))
    }
  })
  const schedule = (async () => {
    await sleep(o.faultStartMs)
    faultAt = Date.now()
    await Promise.all(faults.map((f, i) => f.apply(engines[i]!)))
    await sleep(o.faultMs)
    await Promise.all(faults.map((f, i) => f.clear(engines[i]!)))
    clearAt = Date.now()
  })()
  await Promise.all(clients)
  await schedule
  // readmission: wait for every engine to be back (bounded by the deadline)
  const poll = o.intervalMs + o.timeoutMs
  while (
    Date.now() < Math.min(deadline, clearAt + 4 * poll + o.decodeBudgetMs) &&
    readmittedAt.size < faults.length
  )
    await sleep(50)
  // in flight at the end: the router's own count, once the client has its answers
  let inflightAtEnd = -1
  for (let k = 0; k < 50; k++) {
    const text = await get(side, `${router.url}/router/ranks`)
    if (text !== undefined) {
      inflightAtEnd = (JSON.parse(text) as { inflight: Array<number> }).inflight.reduce((a, b) => a + b, 0)
      if (inflightAtEnd === 0) break
    }
    await sleep(100)
  }
  observing = false
  await observer
  const metrics = (await scrape()) ?? ""
  const fallbacks: Record<string, number> = {}
  for (const m of metricValues(metrics, "loadledger_router_fallbacks_total")) {
    const reason = /reason="([^"]*)"/.exec(m.labels)?.[1] ?? "?"
    fallbacks[reason] = m.value
  }
  const retried = metricValues(metrics, "loadledger_router_retries_total").reduce((a, m) => a + m.value, 0)
  await router.close()
  agent.destroy()
  side.destroy()

  const seen = new Map<string, number>()
  for (const e of engines)
    for (const r of e.received()) seen.set(r.requestId, (seen.get(r.requestId) || 0) + 1)
  let duplicated = 0
  for (const c of seen.values()) if (c > 1) duplicated += c - 1
  const answeredByStatus: Record<string, number> = {}
  for (const x of outcomes)
    if (x._tag === "answered")
      answeredByStatus[String(x.status)] = (answeredByStatus[String(x.status)] || 0) + 1
  const report: SoakReport = {
    options: o,
    sent: outcomes.length,
    answered: outcomes.filter((x) => x._tag === "answered").length,
    answeredByStatus,
    cutMidStream: outcomes.filter((x) => x._tag === "cut").length,
    lost: outcomes.filter((x) => x._tag === "lost").length,
    duplicatedAtEngines: duplicated,
    retried,
    fallbacks,
    inflightAtEnd,
    engines: faults.map((f, i) => {
      const ex = excludedAt.get(i)
      const re = readmittedAt.get(i)
      const bound = f.excludeBoundMs
      return {
        engine: engines[i]!.url,
        fault: f.name,
        mustExclude: bound !== undefined,
        boundMs: bound,
        excludedAfterMs: ex === undefined ? undefined : ex - faultAt,
        excludedAs: excludedWhy.get(i),
        readmittedAfterMs: re === undefined ? undefined : re - clearAt,
        receivedAfterBound:
          bound === undefined
            ? 0
            : engines[i]!.received().filter((r) => r.atMs > faultAt + bound && r.atMs < clearAt).length
      }
    }),
    routerRssStartMb: rssStart / 2 ** 20,
    routerRssPeakMb: rssPeak / 2 ** 20,
    eventLoopDelayMaxMs: loopMax * 1000,
    eventLoopDelayP99Ms: loopP99 * 1000,
    elapsedS: (Date.now() - t0) / 1000,
    loadAverage: [loadStart, loadavg()[0]!],
    cores: cpus().length
  }
  await Promise.all(engines.map((e) => e.close()))
  return report
}

/** The report as text, one figure a line. */
export const formatSoak = (r: SoakReport): string => {
  const o = r.options
  const ms = (x: number | undefined) => (x === undefined ? "never" : `${Math.round(x)} ms`)
  const lines = [
    `soak: ${o.engines} engines x ${o.dp} DP ranks, ${o.requests} requests at concurrency ${o.concurrency}, policy ${o.policy}, router ${o.router}`,
    `  polls every ${o.intervalMs} ms, timeout ${o.timeoutMs} ms (exclusion bound ${o.intervalMs + o.timeoutMs} ms), stale after ${o.staleMs} ms; faults from ${o.faultStartMs} ms for ${o.faultMs} ms`,
    `requests sent        ${r.sent}`,
    `answered             ${r.answered}  (${Object.entries(r.answeredByStatus)
      .map(([s, n]) => `${s}: ${n}`)
      .join(", ")})`,
    `cut mid-stream       ${r.cutMidStream}`,
    `lost (no answer)     ${r.lost}`,
    `duplicated at engines ${r.duplicatedAtEngines}`,
    `retried (never sent) ${r.retried}`,
    `fallback decisions   ${
      Object.keys(r.fallbacks).length === 0
        ? "0"
        : Object.entries(r.fallbacks)
            .map(([k, v]) => `${k}: ${v}`)
            .join(", ")
    }`,
    `in flight at the end ${r.inflightAtEnd}`,
    `router RSS           start ${r.routerRssStartMb.toFixed(1)} MB, peak ${r.routerRssPeakMb.toFixed(1)} MB`,
    `event-loop delay     router, worst scrape: max ${r.eventLoopDelayMaxMs.toFixed(1)} ms, p99 ${r.eventLoopDelayP99Ms.toFixed(1)} ms`,
    "engine faults:",
    ...r.engines.map(
      (e) =>
        `  ${e.fault.padEnd(22)} excluded after ${ms(e.excludedAfterMs).padEnd(8)} ${e.excludedAs === undefined ? "" : `as ${e.excludedAs} `}(${e.mustExclude ? `bound ${e.boundMs} ms` : "exclusion not required"}), readmitted ${ms(e.readmittedAfterMs)} after recovery, requests after the bound ${e.receivedAfterBound}`
    ),
    `elapsed ${r.elapsedS.toFixed(1)} s; machine: ${r.cores} cores, load average ${r.loadAverage[0].toFixed(1)} at the start, ${r.loadAverage[1].toFixed(1)} at the end`
  ]
  return lines.join("\n")
}

/** The issue-12 acceptance: what must hold for a soak to pass (empty = pass). */
export const soakProblems = (r: SoakReport): Array<string> => {
  const p: Array<string> = []
  if (r.lost !== 0) p.push(`${r.lost} requests lost`)
  if (r.duplicatedAtEngines !== 0) p.push(`${r.duplicatedAtEngines} requests duplicated at engines`)
  if (r.inflightAtEnd !== 0) p.push(`in flight at the end: ${r.inflightAtEnd}`)
  if (r.sent !== r.options.requests) p.push(`sent ${r.sent} of ${r.options.requests} before the deadline`)
  // with 8 engines and at most 6 excluded, some rank is always usable: the policy decides every time
  const fallbacks = Object.values(r.fallbacks).reduce((a, b) => a + b, 0)
  if (fallbacks !== 0 && r.options.engines > 6)
    p.push(`${fallbacks} fallback decisions while ranks were usable`)
  for (const e of r.engines) {
    if (e.mustExclude && (e.excludedAfterMs === undefined || e.excludedAfterMs > e.boundMs! + 100))
      p.push(`${e.fault}: excluded after ${e.excludedAfterMs ?? "never"} ms, bound ${e.boundMs} ms`)
    if (e.receivedAfterBound !== 0)
      p.push(`${e.fault}: ${e.receivedAfterBound} requests after the exclusion bound`)
  }
  return p
}

export const defaultSoakOptions: SoakOptions = {
  requests: 2000,
  concurrency: 32,
  engines: 8,
  dp: 2,
  intervalMs: 100,
  timeoutMs: 300,
  staleMs: 1000,
  decodeBudgetMs: 1000,
  faultStartMs: 2_000,
  faultMs: 10_000,
  deadlineMs: 120_000,
  engineLatencyMs: 100,
  router: "process",
  policy: "total-requests",
  firstByteTimeoutMs: 3_000,
  idleTimeoutMs: 2_000,
  oversizedBytes: 800_000,
  ejectMs: 2_000
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: {
      requests: { type: "string" },
      concurrency: { type: "string" },
      engines: { type: "string" },
      dp: { type: "string" },
      "fault-s": { type: "string" },
      "deadline-s": { type: "string" },
      router: { type: "string" },
      policy: { type: "string" },
      json: { type: "boolean", default: false }
    }
  })
  const num = (v: string | undefined, d: number, name: string) => {
    if (v === undefined) return d
    const n = Number(v)
    if (!Number.isInteger(n) || n < 1) {
      console.error(`soak: --${name} must be a positive integer, got "${v}"`)
      process.exit(2)
    }
    return n
  }
  const d = defaultSoakOptions
  const o: SoakOptions = {
    ...d,
    requests: num(values.requests, d.requests, "requests"),
    concurrency: num(values.concurrency, d.concurrency, "concurrency"),
    engines: num(values.engines, d.engines, "engines"),
    dp: num(values.dp, d.dp, "dp"),
    faultMs: num(values["fault-s"], d.faultMs / 1000, "fault-s") * 1000,
    deadlineMs: num(values["deadline-s"], d.deadlineMs / 1000, "deadline-s") * 1000,
    router: values.router === "inprocess" ? "inprocess" : "process",
    policy: values.policy ?? d.policy
  }
  const report = await runSoak(o)
  console.log(values.json ? JSON.stringify(report, null, 2) : formatSoak(report))
  const problems = soakProblems(report)
  if (problems.length > 0) {
    console.error(`soak: FAIL: ${problems.join("; ")}`)
    process.exit(1)
  }
  console.log("soak: PASS (0 lost, 0 duplicated, in-flight 0, every fault engine excluded within its bound)")
  process.exit(0)
}
