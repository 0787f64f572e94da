import { spawnSync } from "node:child_process"
import { once } from "node:events"
import { createServer } from "node:net"
import { fileURLToPath } from "node:url"
import { parseServeArgs as parseRouterArgs } from "@loadledger/live"
import { gpus, models } from "@loadledger/step-time"
import { describe, expect, it } from "vitest"

const presets = { models: Object.keys(models), gpus: Object.keys(gpus) }
const error = (argv: Array<string>) => {
  const r = parseRouterArgs(argv, { presets })
  return typeof r === "object" && "error" in r ? r.error : undefined
}

describe("the router's arguments (loadledger serve, the example's main.ts)", () => {
  it("refuses what cannot route, with one line naming the flag", () => {
    expect(error(["--worker", "http://127.0.0.1:9001", "--dp", "-1"])).toBe(
      '--dp must be an integer from 1 to 1024, got "-1"'
    )
    expect(error(["--worker", "http://127.0.0.1:9001", "--dp", "0"])).toBe(
      '--dp must be an integer from 1 to 1024, got "0"'
    )
    expect(error(["--worker", "http://127.0.0.1:9001", "--dp", "2.5"])).toContain("--dp must be an integer")
    expect(error(["--worker", "not-a-url"])).toBe(
      '--worker must be an http(s) URL like http://127.0.0.1:30000, got "not-a-url"'
    )
    expect(error(["--worker", "ftp://h:1"])).toContain("--worker must be an http(s) URL")
    expect(error(["--worker", "http://h:1/v1/loads"])).toContain("--worker is a base URL")
    expect(error(["--worker", "http://h:1", "--worker", "http://h:1/"])).toBe(
      "--worker http://h:1 is given twice"
    )
    expect(error([])).toBe(
      "at least one --worker URL is required (or --workers-file / --workers-dns / --workers-from / --gateway)"
    )
    expect(error(["--workers-dns", "engines:0"])).toContain("--workers-dns must be NAME:PORT")
    expect(parseRouterArgs(["--workers-dns", "engines.default.svc:30000"])).toMatchObject({
      workers: [],
      workersDns: { name: "engines.default.svc", port: 30000 }
    })
    expect(error(["--worker", "http://h:1", "--bogus"])).toContain("Unknown option '--bogus'")
    expect(error(["--worker", "http://h:1", "--port", "70000"])).toContain(
      "--port must be an integer from 0 to 65535"
    )
    expect(error(["--worker", "http://h:1", "--policy", "nope"])).toContain(
      'unknown --policy "nope"; registered: '
    )
    expect(error(["--worker", "http://h:1", "--replicas", "2", "--replica-index", "2"])).toBe(
      "--replica-index must be below --replicas (2), got 2"
    )
    expect(error(["--worker", "http://h:1", "--require", "numRunningReqs,bogus"])).toContain(
      "--require takes"
    )
    for (const e of [error(["--dp", "x", "--worker", "http://h:1"]), error(["--worker", "nope"])])
      expect(e).not.toContain("\n")
  })

  it("accepts a working configuration", () => {
    expect(
      parseRouterArgs([
        "--worker",
        "http://127.0.0.1:9001/",
        "--dp",
        "2",
        "--replicas",
        "3",
        "--replica-index",
        "1"
      ])
    ).toMatchObject({
      workers: ["http://127.0.0.1:9001"],
      dp: 2,
      replicas: 3,
      replicaIndex: 1,
      policy: "total-requests"
    })
  })

  it("--require is the router's requiredFields; absent, the router's default (partial-row rule) applies", () => {
    const w = ["--worker", "http://h:1", "--source", "vllm-metrics"]
    expect(parseRouterArgs(w)).toMatchObject({ source: "vllm-metrics", requiredFields: undefined })
    expect(parseRouterArgs([...w, "--require", "numRunningReqs,kvCacheUsage"])).toMatchObject({
      requiredFields: ["numRunningReqs", "kvCacheUsage"]
    })
  })

  it("--model/--gpu name the served model (both or neither), --max-running-requests the engines' cap", () => {
    const w = ["--worker", "http://h:1", "--policy", "step-time-aware"]
    expect(parseRouterArgs(w)).toMatchObject({
      model: undefined,
      gpu: undefined,
      maxRunningRequests: undefined
    })
    expect(
      parseRouterArgs([...w, "--model", "deepseek-v3", "--gpu", "h200", "--max-running-requests", "48"])
    ).toMatchObject({ model: "deepseek-v3", gpu: "h200", maxRunningRequests: 48 })
    expect(error([...w, "--bookings", "http://h:6379"])).toContain(
      "--bookings must be a redis:// or valkey:// URL"
    )
    expect(
      parseRouterArgs([...w, "--bookings", "valkey://10.0.0.9:6379", "--drain-ms", "5000", "--access-log"])
    ).toMatchObject({
      bookings: "valkey://10.0.0.9:6379",
      bookingsGroup: "default",
      drainMs: 5000,
      accessLog: true
    })
    expect(error([...w, "--model", "deepseek-v3"])).toBe("--model and --gpu go together")
    expect(error([...w, "--model", "gpt-9", "--gpu", "h200"])).toContain(
      "--model must be one of glm-5.3-dense,"
    )
    expect(error([...w, "--model", "glm-5.3", "--gpu", "tpu"])).toContain('got "tpu"')
    expect(error([...w, "--max-running-requests", "0"])).toBe(
      '--max-running-requests must be an integer from 1 up, got "0"'
    )
  })

  it("a config file gives what the command line does not; its unknown keys and lists are refused", () => {
    const file = (values: Record<string, unknown>) => ({ file: { name: "r.yaml", values } })
    expect(
      parseRouterArgs(
        ["--dp", "2"],
        file({ workers: ["http://h:1", "http://h:2"], dp: 8, "stale-ms": 300, accessLog: true })
      )
    ).toMatchObject({ workers: ["http://h:1", "http://h:2"], dp: 2, staleMs: 300, accessLog: true })
    // a repeated flag on the command line replaces the file's list whole
    expect(parseRouterArgs(["--worker", "http://h:9"], file({ workers: ["http://h:1"] }))).toMatchObject({
      workers: ["http://h:9"]
    })
    expect(
      parseRouterArgs([], file({ workers: ["http://h:1"], require: ["numRunningReqs", "numTotalTokens"] }))
    ).toMatchObject({
      requiredFields: ["numRunningReqs", "numTotalTokens"]
    })
    expect(parseRouterArgs([], file({ workers: ["http://h:1"], bogus: 1 }))).toEqual({
      error: 'r.yaml: unknown key "bogus"'
    })
    expect(parseRouterArgs([], file({ workers: ["http://h:1"], dp: [1, 2] }))).toEqual({
      error: "r.yaml: dp takes one value, got a list"
    })
    expect(parseRouterArgs([], file({ workers: ["http://h:1"], dp: 0 }))).toEqual({
      error: '--dp must be an integer from 1 to 1024, got "0"'
    })
  })

  it("main.ts ends with one line and exit 2 on a bad flag, exit 1 on a port in use", async () => {
    const main = fileURLToPath(new URL("./main.ts", import.meta.url))
    const run = (args: Array<string>) =>
      spawnSync(process.execPath, ["--import", "tsx", "--conditions=@loadledger/source", main, ...args], {
        encoding: "utf8",
        timeout: 60_000
      })
    const bad = run(["--worker", "http://127.0.0.1:9", "--dp", "-1"])
    expect(bad.status).toBe(2)
    expect(bad.stderr.trim().split("\n")).toEqual([
      'loadledger serve: --dp must be an integer from 1 to 1024, got "-1" (--help for usage)'
    ])
    const busy = createServer()
    busy.listen(0, "127.0.0.1")
    await once(busy, "listening")
    const port = (busy.address() as { port: number }).port
    try {
      const inUse = run(["--worker", "http://127.0.0.1:9", "--port", String(port)])
      expect(inUse.status).toBe(1)
      expect(inUse.stderr.trim().split("\n")).toEqual([
        `loadledger serve: cannot listen on 127.0.0.1:${port}: the port is in use (EADDRINUSE)`
      ])
    } finally {
      busy.close()
    }
  })
})
