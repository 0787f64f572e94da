// A deterministic replay harness for the recorded-decisions test (own-recorded.test.ts): a toy
// group of ranks (a FIFO queue, a running-slot cap, a KV pool, a fixed service time per request)
// fed by a trace's arrivals, publishing load rows at a fixed interval, driving one policy's
// observe / route / finish / setStatus. It is not the simulator (whose engine models change under
// other work): it only has to give every code path of the own policies realistic inputs, and to be
// the same every run.
import { readFileSync } from "node:fs"
import type { Policy, RankLoad, RouteRequest } from "../../src/index.js"

/** One arrival: seconds from the trace start, prompt and output tokens, prompt block ids. */
export interface Arrival {
  readonly at: number
  readonly inputLength: number
  readonly outputLength: number
  readonly hashIds: ReadonlyArray<number> | undefined
}

const root = new URL("../../../../", import.meta.url)

/** The first `count` rows of a Mooncake JSON-lines trace (timestamps in ms). */
export const mooncake = (file: string, count: number): Array<Arrival> =>
  readFileSync(new URL(file, root), "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .slice(0, count)
    .map((l) => {
      const o = JSON.parse(l) as {
        timestamp: number
        input_length: number
        output_length: number
        hash_ids: Array<number>
      }
      return {
        at: o.timestamp / 1000,
        inputLength: o.input_length,
        outputLength: o.output_length,
        hashIds: o.hash_ids
      }
    })

/** The first `count` rows of the Azure 2023 CSV (wall-clock timestamps, seconds from the first). */
export const azure = (file: string, count: number): Array<Arrival> => {
  const lines = readFileSync(new URL(file, root), "utf8")
    .split("\n")
    .slice(1, count + 1)
  const secs = (s: string): number => {
    const [, time] = s.split(" ")
    const [h, m, sec] = time!.split(":")
    return Number(h) * 3600 + Number(m) * 60 + Number(sec)
  }
  const t0 = secs(lines[0]!.split(",")[0]!)
  return lines.map((l) => {
    const [ts, ctx, gen] = l.split(",")
    return { at: secs(ts!) - t0, inputLength: Number(ctx), outputLength: Number(gen), hashIds: undefined }
  })
}

/** How the group publishes and what goes wrong. */
export interface Scenario {
  readonly name: string
  readonly dpSize: number
  readonly clientCount: number
  readonly clientIndex: number
  /** `full`: SGLang's fields, timestamped; `partial`: vLLM's coordinator (counts and KV usage, no time). */
  readonly rows: "full" | "partial"
  readonly publishSeconds: number
  readonly kvPoolTokens: number
  readonly maxRunningRequests: number
  /** Arrival times divided by this (load). */
  readonly speedUp: number
  /** Stale publisher, unknown rows, an unhealthy rank, pinned requests, rows without timestamps. */
  readonly faults: boolean
}

interface Req {
  readonly id: string
  readonly input: number
  readonly output: number
  start: number
  end: number
}

interface Rank {
  readonly waiting: Array<Req>
  readonly running: Array<Req>
}

const serviceSeconds = (r: Req): number => r.input / 25_000 + r.output * 0.015

/** Decisions: a rank, or `!reason` for a rejection, one per arrival in order. */
export const replay = (
  policy: Policy<unknown>,
  arrivals: ReadonlyArray<Arrival>,
  sc: Scenario
): Array<string> => {
  const n = sc.dpSize
  const ranks: Array<Rank> = Array.from({ length: n }, () => ({ waiting: [], running: [] }))
  let state = policy.init(n)
  let nextPublish = 0
  let frozen: RankLoad | undefined
  const decisions: Array<string> = []

  const admit = (rk: Rank, t: number): void => {
    while (rk.waiting.length > 0 && rk.running.length < sc.maxRunningRequests) {
      const q = rk.waiting.shift()!
      q.start = t
      q.end = t + serviceSeconds(q)
      rk.running.push(q)
    }
  }
  const used = (rk: Rank, t: number): number => {
    let u = 0
    for (const q of rk.running)
      u += q.input + Math.floor(q.output * Math.min(1, (t - q.start) / (q.end - q.start || 1)))
    return u
  }
  const rowOf = (r: number, t: number, k: number): RankLoad => {
    const rk = ranks[r]!
    const u = used(rk, t)
    let queued = 0
    for (const q of rk.waiting) queued += q.input
    const kv = Math.min(1, u / sc.kvPoolTokens)
    if (sc.rows === "partial")
      return {
        dpRank: r,
        numRunningReqs: rk.running.length,
        numWaitingReqs: rk.waiting.length,
        kvCacheUsage: kv
      }
    const row: RankLoad = {
      dpRank: r,
      timestamp: sc.faults && k % 7 === 3 ? undefined : t,
      numRunningReqs: rk.running.length,
      numWaitingReqs: rk.waiting.length,
      numTotalTokens: u + queued,
      numWaitingUncachedTokens: queued,
      numUsedTokens: u,
      kvCacheUsage: kv,
      kvAvailableTokens: Math.max(0, sc.kvPoolTokens - u),
      tokenCapacity: sc.kvPoolTokens,
      maxRunningRequests: sc.maxRunningRequests
    }
    return row
  }
  const publish = (t: number, k: number): void => {
    const rows: Array<RankLoad> = []
    for (let r = 0; r < n; r++) {
      if (sc.faults && r === 3 && t > 20) {
        // a frozen publisher: its last row again, old timestamp
        frozen ??= rowOf(r, t, k)
        rows.push(frozen)
        continue
      }
      if (sc.faults && r === 5 && k % 11 < 3)
        rows.push({ dpRank: r, unknown: { reason: "unreachable", message: "timeout" } })
      else rows.push(rowOf(r, t, k))
    }
    state = policy.observe(state, rows, t + 0.002)
  }
  /** Advance the group to `t`: finishes (reported to the policy), admissions and publishes in time order. */
  const advance = (t: number): void => {
    for (;;) {
      let when = Number.POSITIVE_INFINITY
      let who = -1
      for (let r = 0; r < n; r++)
        for (const q of ranks[r]!.running)
          if (q.end < when) {
            when = q.end
            who = r
          }
      const pub = nextPublish * sc.publishSeconds
      if (pub <= t && pub <= when) {
        publish(pub, nextPublish)
        nextPublish++
        continue
      }
      if (when > t) return
      const rk = ranks[who]!
      const i = rk.running.findIndex((q) => q.end === when)
      const [done] = rk.running.splice(i, 1)
      admit(rk, when)
      state = policy.finish(state, [done!.id], when)
    }
  }

  for (let i = 0; i < arrivals.length; i++) {
    const a = arrivals[i]!
    const t = a.at / sc.speedUp
    advance(t)
    if (sc.faults && i === Math.floor(arrivals.length * 0.3))
      state = policy.setStatus(
        state,
        Array.from({ length: n }, (_, r) => r !== 2)
      )
    if (sc.faults && i === Math.floor(arrivals.length * 0.5))
      state = policy.setStatus(state, Array(n).fill(true))
    const hashes = a.hashIds?.map((h) => `b${h}`)
    const request: RouteRequest = {
      // faults: now and then a request id still in flight (refused by the policies that track ids)
      requestId: sc.faults && i % 151 === 150 ? `q${i - 1}` : `q${i}`,
      inputLength: a.inputLength,
      prefixHashes: hashes,
      sessionId: a.hashIds !== undefined && a.hashIds.length > 1 ? `s${a.hashIds[1]}` : undefined,
      routedDpRank: sc.faults && i % 97 === 13 ? i % n : undefined
    }
    const out = policy.route(state, request, t)
    if (out._tag !== "Routed") {
      decisions.push(`!${out.reason}`)
      if (out.state !== undefined) state = out.state
      continue
    }
    decisions.push(`${out.rank}`)
    state = out.state
    const rk = ranks[out.rank]!
    rk.waiting.push({ id: request.requestId, input: a.inputLength, output: a.outputLength, start: 0, end: 0 })
    admit(rk, t)
  }
  return decisions
}
