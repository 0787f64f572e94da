/**
 * `loadledger serve` as a process, in front of loopback fake engines: it routes, streams, answers
 * health and readiness, logs JSON lines, and on SIGTERM drains a stream in flight to its end
 * before it exits 0; a bad flag is one line and exit 2, a config file gives the flags.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { once } from "node:events"
import { mkdtempSync, writeFileSync } from "node:fs"
import { request } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { type FakeEngine, startFakeEngine } from "@loadledger/live/testing"
import { afterEach, describe, expect, it } from "vitest"
import { EXAMPLES } from "../src/internal/examples.js"

const bin = fileURLToPath(new URL("../src/bin.ts", import.meta.url))
const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!()
})

interface Served {
  readonly child: ChildProcess
  readonly url: string
  readonly records: Array<Record<string, unknown>>
  readonly stderr: () => string
}

const startServe = async (args: Array<string>): Promise<Served> => {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", "--conditions=@loadledger/source", bin, "serve", ...args],
    {
      stdio: ["ignore", "pipe", "pipe"]
    }
  )
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGKILL")
      await once(child, "exit")
    }
  })
  const records: Array<Record<string, unknown>> = []
  let err = ""
  child.stderr!.on("data", (c) => {
    err += String(c)
  })
  let buf = ""
  const url = await new Promise<string>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`serve did not start: ${err}`)), 60_000)
    child.stdout!.on("data", (c) => {
      buf += String(c)
      for (let i = buf.indexOf("\n"); i >= 0; i = buf.indexOf("\n")) {
        const line = buf.slice(0, i)
        buf = buf.slice(i + 1)
        const r = JSON.parse(line) as Record<string, unknown>
        records.push(r)
        if (r.msg === "listening") {
          clearTimeout(t)
          resolve(r.url as string)
        }
      }
    })
    child.on("exit", (code) => reject(new Error(`serve exited ${code}: ${err}`)))
  })
  return { child, url, records, stderr: () => err }
}

const engine = async (o: Parameters<typeof startFakeEngine>[0]): Promise<FakeEngine> => {
  const e = await startFakeEngine(o)
  cleanups.push(() => e.close())
  return e
}

/** A completion through the router: status, rank header, body, and `onFirstChunk` when the first body bytes arrive. */
const complete = (url: string, stream: boolean, onFirstChunk?: () => void) =>
  new Promise<{ status: number; rank: string | undefined; body: string }>((resolve, reject) => {
    const body = JSON.stringify({ model: "m", prompt: "hello there", stream })
    const req = request(
      `${url}/v1/completions`,
      {
        method: "POST",
        headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) }
      },
      (res) => {
        let text = ""
        res.setEncoding("utf8")
        res.on("data", (c) => {
          if (text === "") onFirstChunk?.()
          text += c
        })
        res.on("end", () =>
          resolve({
            status: res.statusCode!,
            rank: res.headers["x-loadledger-rank"] as string | undefined,
            body: text
          })
        )
        res.on("error", reject)
      }
    )
    req.on("error", reject)
    req.end(body)
  })

describe("loadledger serve", () => {
  it("routes, streams, answers /healthz and /readyz, and on SIGTERM drains the stream in flight, then exits 0", async () => {
    const es = await Promise.all([0, 1].map(() => engine({ dpSize: 2, chunks: 8, chunkDelayMs: 100 })))
    const s = await startServe([
      ...es.flatMap((e) => ["--worker", e.url]),
      ...["--dp", "2", "--port", "0", "--interval-ms", "50", "--access-log"]
    ])
    const until = async (cond: () => Promise<boolean>) => {
      for (let k = 0; k < 200 && !(await cond()); k++) await new Promise((r) => setTimeout(r, 25))
    }
    await until(async () => (await fetch(`${s.url}/readyz`)).status === 200)
    expect((await fetch(`${s.url}/healthz`)).status).toBe(200)
    expect(await (await fetch(`${s.url}/readyz`)).json()).toEqual({ ready: true })
    const plain = await complete(s.url, false)
    expect(plain.status).toBe(200)
    expect(es.map((e) => e.url)).toContain(plain.rank?.split("@")[0])
    // a stream of 8 chunks 100 ms apart: SIGTERM after its first chunk
    let sent = false
    const exited = once(s.child, "exit")
    const stream = complete(s.url, true, () => {
      if (!sent) {
        sent = true
        s.child.kill("SIGTERM")
      }
    })
    const streamed = await stream
    expect(streamed.status).toBe(200)
    expect(streamed.body.endsWith("data: [DONE]\n\n")).toBe(true)
    expect(streamed.body.match(/tok\d/g)).toHaveLength(8)
    const [code] = await exited
    expect(code).toBe(0)
    // after the drain nothing listens
    await expect(fetch(`${s.url}/healthz`)).rejects.toThrow()
    const msgs = s.records.map((r) => r.msg)
    expect(msgs).toContain("rank")
    expect(s.records.find((r) => r.msg === "draining")).toMatchObject({ level: "info", inflight: 1 })
    expect(s.records.find((r) => r.msg === "drained")).toMatchObject({ left: 0 })
    expect(s.records.filter((r) => r.msg === "request").map((r) => r.status)).toEqual([200, 200])
    for (const r of s.records) expect(typeof r.time).toBe("string")
    expect(es.flatMap((e) => e.running())).toEqual([0, 0, 0, 0])
    expect(s.stderr()).toBe("")
  })

  it("takes its flags from --config (YAML), the command line winning; a bad flag is one line and exit 2", async () => {
    const e = await engine({ dpSize: 1 })
    const dir = mkdtempSync(join(tmpdir(), "serve-"))
    const config = join(dir, "router.yaml")
    writeFileSync(config, `workers:\n  - ${e.url}\ndp: 4\nintervalMs: 50\npolicy: round-robin\n`)
    const s = await startServe(["--config", config, "--port", "0", "--dp", "1"])
    expect(s.records.find((r) => r.msg === "listening")).toMatchObject({
      policy: "round-robin",
      ranks: 1,
      config
    })
    expect((await complete(s.url, false)).rank).toBe(`${e.url}@0`)
    s.child.kill("SIGTERM")
    expect((await once(s.child, "exit"))[0]).toBe(0)

    const bad = spawn(
      process.execPath,
      ["--import", "tsx", "--conditions=@loadledger/source", bin, "serve", "--worker", e.url, "--dp", "-1"],
      {
        stdio: ["ignore", "pipe", "pipe"]
      }
    )
    let err = ""
    bad.stderr!.on("data", (c) => {
      err += String(c)
    })
    expect((await once(bad, "exit"))[0]).toBe(2)
    expect(err.trim().split("\n")).toEqual([
      'loadledger serve: --dp must be an integer from 1 to 1024, got "-1" (--help for usage)'
    ])
  })

  it("runs an own policy from --policy-config (a tune output), named by it; a refused one is one line and exit 2", async () => {
    const es = await Promise.all([0, 1].map(() => engine({ dpSize: 2 })))
    const dir = mkdtempSync(join(tmpdir(), "serve-config-"))
    const tuned = join(dir, "tuned.json")
    writeFileSync(
      tuned,
      JSON.stringify({
        kind: "step-time",
        name: "step-time-aware-tuned",
        terms: [
          { term: "queuedPrefill", weight: 1 },
          { term: "ownPrefill", weight: 1 },
          { term: "slotWait", weight: 0.45 },
          { term: "decodeLoad", weight: 8 },
          { term: "homeCredit", weight: 0 }
        ]
      })
    )
    const s = await startServe([
      ...es.flatMap((e) => ["--worker", e.url]),
      ...["--dp", "2", "--port", "0", "--interval-ms", "50", "--policy-config", tuned]
    ])
    expect(s.records.find((r) => r.msg === "listening")).toMatchObject({
      policy: "step-time-aware-tuned",
      ranks: 4
    })
    for (let k = 0; k < 200 && (await fetch(`${s.url}/readyz`)).status !== 200; k++)
      await new Promise((r) => setTimeout(r, 25))
    const plain = await complete(s.url, false)
    expect(plain.status).toBe(200)
    expect(es.map((e) => e.url)).toContain(plain.rank?.split("@")[0])
    const badFile = join(dir, "bad.json")
    writeFileSync(badFile, JSON.stringify({ kind: "scored", terms: [{ term: "tokenz", weight: 1 }] }))
    const bad = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        "--conditions=@loadledger/source",
        bin,
        "serve",
        "--worker",
        es[0]!.url,
        "--policy-config",
        badFile
      ],
      { stdio: ["ignore", "pipe", "pipe"] }
    )
    let err = ""
    bad.stderr!.on("data", (c) => {
      err += String(c)
    })
    expect((await once(bad, "exit"))[0]).toBe(2)
    expect(err.trim().split("\n")).toHaveLength(1)
    expect(err).toContain(
      `loadledger serve: --policy-config: ${badFile}: terms[0].term: unknown term "tokenz"`
    )
  })

  it("--help's SGLang example runs as printed against fake engines (their URLs for its workers, port 0) and drains on SIGTERM; --check exits 0 at once without listening", async () => {
    const example = EXAMPLES.serve![0]!
    const words = example.run.split(" ").slice(2)
    const count = words.filter((w) => w === "--worker").length
    const dp = Number(words[words.indexOf("--dp") + 1])
    const es = await Promise.all(Array.from({ length: count }, () => engine({ dpSize: dp })))
    let k = 0
    const args = words.map((w, i) => (words[i - 1] === "--worker" ? es[k++]!.url : w))
    const s = await startServe([...args, "--port", "0", "--interval-ms", "50"])
    expect(s.records.find((r) => r.msg === "listening")).toMatchObject({
      policy: "total-tokens",
      ranks: count * dp
    })
    for (let n = 0; n < 200 && (await fetch(`${s.url}/readyz`)).status !== 200; n++)
      await new Promise((r) => setTimeout(r, 25))
    const plain = await complete(s.url, false)
    expect(plain.status).toBe(200)
    expect(es.map((e) => e.url)).toContain(plain.rank?.split("@")[0])
    s.child.kill("SIGTERM")
    expect((await once(s.child, "exit"))[0]).toBe(0)

    // --check: the same flags checked and printed as one JSON line, nothing listens
    const checked = spawn(
      process.execPath,
      ["--import", "tsx", "--conditions=@loadledger/source", bin, "serve", ...args, "--check"],
      { stdio: ["ignore", "pipe", "pipe"] }
    )
    let out = ""
    checked.stdout!.on("data", (c) => {
      out += String(c)
    })
    expect((await once(checked, "exit"))[0]).toBe(0)
    const lines = out.trim().split("\n")
    expect(lines).toHaveLength(1)
    expect(JSON.parse(lines[0]!)).toMatchObject({
      msg: "checked",
      workers: es.map((e) => e.url),
      dp,
      policy: "total-tokens",
      port: 8000
    })
  })
})
