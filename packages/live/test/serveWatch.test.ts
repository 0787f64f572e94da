/**
 * `startServe` with a watched worker file: workers written into the file are added, workers taken
 * out of it removed, at run time, each with a log record; requests keep flowing meanwhile.
 */
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { totalRequests } from "@loadledger/policies"
import { afterEach, expect, it } from "vitest"
import { parseServeArgs, type ServeArgs, type ServeLogRecord, startServe } from "../src/index.js"
import { startFakeEngine } from "../src/testing/index.js"

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!()
})
const until = async (cond: () => boolean, ms: number, what: string) => {
  const end = Date.now() + ms
  while (!cond()) {
    if (Date.now() > end) throw new Error(`${what}: not within ${ms} ms`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

it("a watched worker file adds and removes workers while the router runs", async () => {
  const [a, b] = await Promise.all([0, 1].map(() => startFakeEngine({ dpSize: 1 })))
  cleanups.push(async () => {
    await a!.close()
    await b!.close()
  })
  const path = join(mkdtempSync(join(tmpdir(), "workers-")), "workers.txt")
  writeFileSync(path, `# the pool\n${a!.url}\n`)
  const args = parseServeArgs(["--workers-file", path, "--port", "0", "--interval-ms", "50"]) as ServeArgs
  const records: Array<ServeLogRecord> = []
  const s = await startServe(args, totalRequests, { log: (r) => records.push(r) })
  cleanups.push(() => s.close())
  const ids = () => s.router.ranks().map((r) => r.id)
  await until(
    () => ids().join() === `${a!.url}@0` && s.router.ranks()[0]!.condition === "known",
    5000,
    "a in"
  )
  writeFileSync(path, JSON.stringify([a!.url, b!.url]))
  await until(() => s.router.ranks().filter((r) => r.condition === "known").length === 2, 5000, "b in")
  const post = () =>
    fetch(`${s.url}/v1/completions`, { method: "POST", body: JSON.stringify({ prompt: "hi" }) })
  const ranks = new Set<string | null>()
  for (let i = 0; i < 4; i++) ranks.add((await post()).headers.get("x-loadledger-rank"))
  expect(ranks).toEqual(new Set([`${a!.url}@0`, `${b!.url}@0`]))
  writeFileSync(path, `${b!.url}\n`)
  await until(() => ids().join() === `${b!.url}@0`, 5000, "a out")
  for (let i = 0; i < 3; i++) expect((await post()).headers.get("x-loadledger-rank")).toBe(`${b!.url}@0`)
  expect(records.filter((r) => r.msg.startsWith("worker-")).map((r) => [r.msg, r.worker])).toEqual([
    ["worker-added", a!.url],
    ["worker-added", b!.url],
    ["worker-removed", a!.url]
  ])
  expect(s.router.inflight()).toEqual([0])
})
