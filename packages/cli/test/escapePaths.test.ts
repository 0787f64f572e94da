/**
 * Issue 32 item 3, path by path: input holding terminal escape sequences (ESC / CSI / OSC 52), a
 * one-byte CSI, CR, DEL and bidirectional controls, fed to every CLI path that quotes input in a
 * real subprocess (the sources under tsx, no build needed): commander's own flag errors, `simulate
 * --trace` with a bad row and with an out-of-order trace (its notice quotes the path), `diagnose`
 * (a line that is not JSON, `--json`), `serve` (a bad config value; a gateway whose report holds
 * the controls: its log lines and `/router/ranks`). No raw control byte is printed anywhere.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import { once } from "node:events"
import { mkdtempSync, writeFileSync } from "node:fs"
import { createServer } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { escapeControl } from "@loadledger/schema"
import { afterEach, describe, expect, it } from "vitest"
import { escapeLines } from "../src/internal/terminalText.js"

const repo = new URL("../../../", import.meta.url).pathname
const tsx = join(repo, "node_modules/.bin/tsx")
const bin = join(repo, "packages/cli/src/bin.ts")
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const RAW = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/
const esc = "\u001b]52;c;cHduZWQ=\u0007\u001b[2J\u009b31m\r\u202e\u2066\u007f"
const jsonEsc = JSON.stringify(esc).slice(1, -1)
const dir = mkdtempSync(join(tmpdir(), "ll-esc-paths-"))
const file = (name: string, body: string) => {
  const f = join(dir, name)
  writeFileSync(f, body)
  return f
}
const cli = (...args: Array<string>) =>
  spawnSync(tsx, ["--conditions", "@loadledger/source", bin, ...args], { cwd: repo, encoding: "utf8" })
const clean = (r: { stdout: string; stderr: string }) => {
  expect(RAW.test(r.stdout), r.stdout).toBe(false)
  expect(RAW.test(r.stderr), r.stderr).toBe(false)
}

const children: Array<ChildProcess> = []
const servers: Array<{ close: () => void }> = []
afterEach(async () => {
  for (const c of children.splice(0)) {
    if (c.exitCode !== null || c.signalCode !== null) continue
    c.kill("SIGKILL")
    await once(c, "exit")
  }
  for (const s of servers.splice(0)) s.close()
})

describe("every CLI path that quotes input escapes control characters", () => {
  it("escapeLines is escapeControl line by line", () => {
    for (const s of [esc, "a\tb\rc", "plain \\ text", "\u0000\u009f\u2028\u2069"])
      expect(escapeLines(`${s}\n${s}`)).toBe(`${escapeControl(s)}\n${escapeControl(s)}`)
  })

  it("commander's flag errors quote the value escaped", () => {
    const r = cli("decode", "--kind", esc, file("x.json", "{}"))
    expect(r.status).toBe(1)
    clean(r)
    expect(r.stderr).toContain("\\x1b]52;c;cHduZWQ=\\x07\\x1b[2J\\x9b31m\\r\\u202e\\u2066\\x7f")
    clean(cli("simulate", `--bogus${esc}`))
  }, 60_000)

  it("simulate --trace: a bad row and an out-of-order trace's notice, both under a crafted path", () => {
    const bad = cli(
      "simulate",
      "--trace",
      file(`bad${esc}.jsonl`, `{"timestamp": 0, "input_length": "1${jsonEsc}", "output_length": 5}\n`),
      "--policies",
      "round-robin",
      "--dp",
      "2"
    )
    expect(bad.status).toBe(1)
    clean(bad)
    expect(bad.stderr).toContain("line 1")
    const unsorted = cli(
      "simulate",
      "--trace",
      file(
        `late${esc}.jsonl`,
        '{"timestamp": 5, "input_length": 10, "output_length": 2}\n{"timestamp": 0, "input_length": 10, "output_length": 2}\n'
      ),
      "--policies",
      "round-robin",
      "--dp",
      "2"
    )
    clean(unsorted)
    expect(unsorted.stderr).toContain("not in arrival order")
  }, 60_000)

  it("diagnose: a line that is not JSON (the parser's message quotes it), and --json", () => {
    const r = cli("diagnose", file(`d${esc}.jsonl`, `{"loads": [${esc}]}\n`))
    expect(r.status).toBe(1)
    clean(r)
    expect(r.stderr).toContain("line 1: not JSON")
    const row = (t: number) =>
      JSON.stringify({
        loads: [0, 1].map((dp_rank) => ({
          timestamp: t,
          dp_rank,
          num_running_reqs: 3,
          num_used_tokens: 90,
          utilization: 0.5,
          gen_throughput: 40,
          cache_hit_rate: 0,
          total_prefill_uncached_tokens: 100 * t
        }))
      })
    const ok = cli("diagnose", "--json", file("ok.jsonl", `${row(1)}\n${row(2)}\n${row(3)}\n`))
    expect(ok.status).toBe(0)
    clean(ok)
  }, 60_000)

  it("serve: a bad config value is escaped on stderr", () => {
    const r = cli("serve", "--config", file("r.json", JSON.stringify({ workers: [`http://h:1/${esc}`] })))
    expect(r.status).toBe(2)
    clean(r)
    expect(r.stderr).toContain("\\x1b[2J")
  }, 60_000)

  it("serve --gateway: worker names and a decode failure holding controls reach neither the log lines nor /router/ranks raw", async () => {
    let body = JSON.stringify({
      workers: [
        {
          worker: `pod${esc}`,
          load: 0,
          details: {
            timestamp: "",
            dp_rank_count: 1,
            loads: [{ dp_rank: 0, num_running_reqs: 1, num_waiting_reqs: 0 }]
          }
        },
        { worker: `http://w${esc}:1`, load: -1 }
      ]
    })
    const gw = createServer((_req, res) => res.end(body))
    await new Promise<void>((resolve) => gw.listen(0, "127.0.0.1", resolve))
    servers.push(gw)
    const port = (gw.address() as { port: number }).port
    // node itself with tsx's loader, not the tsx wrapper: the wrapper runs the CLI in a child of
    // its own, which a SIGKILL of the wrapper leaves running (an orphaned `serve` seen after a run)
    const child = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        "--conditions",
        "@loadledger/source",
        bin,
        "serve",
        "--gateway",
        `smg=http://127.0.0.1:${port}`,
        "--port",
        "0",
        "--interval-ms",
        "50"
      ],
      { cwd: repo }
    )
    children.push(child)
    let out = ""
    let err = ""
    child.stdout.on("data", (b: Buffer) => {
      out += b.toString("utf8")
    })
    child.stderr.on("data", (b: Buffer) => {
      err += b.toString("utf8")
    })
    const until = async (cond: () => boolean) => {
      const end = Date.now() + 30_000
      while (!cond()) {
        if (Date.now() > end) throw new Error(`timed out; stdout: ${out} stderr: ${err}`)
        await new Promise((r) => setTimeout(r, 50))
      }
    }
    await until(() => /"msg":"listening"/.test(out))
    const url = /"url":"(http:[^"]+)"/.exec(out)![1]!
    const ranks = await (await fetch(`${url}/router/ranks`)).text()
    expect(RAW.test(ranks)).toBe(false)
    expect(
      (JSON.parse(ranks) as { gateways: Array<{ observed: Array<{ worker: string }> }> }).gateways[0]!
        .observed[0]!.worker
    ).toBe(`pod${esc}`)
    // now a report that does not decode, with the controls in the bad value
    body = `{"workers": [{"worker": "x", "load": "${jsonEsc}"}]}`
    await until(() => /"msg":"gateway"/.test(out))
    const failed = await (await fetch(`${url}/router/ranks`)).text()
    expect(RAW.test(failed)).toBe(false)
    expect(JSON.parse(failed).gateways[0].failure.message).toContain("$.workers[0].load")
    expect(RAW.test(out)).toBe(false)
    expect(RAW.test(err)).toBe(false)
  }, 60_000)
})
