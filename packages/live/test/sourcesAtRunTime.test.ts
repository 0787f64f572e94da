/**
 * Sources added and removed while the live router runs, against loopback fake engines: an added
 * engine gets traffic after its first poll; a removed one gets none, keeps its streams in flight
 * to their end, and its ranks go once they have; nothing lost, nothing counted twice.
 */
import { totalRequests } from "@loadledger/policies"
import { afterEach, expect, it } from "vitest"
import { type SourceSpec, startLiveRouter } from "../src/index.js"
import { type FakeEngine, startFakeEngine } from "../src/testing/index.js"

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!()
})
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))
const until = async (cond: () => boolean, ms: number, what: string) => {
  const end = Date.now() + ms
  while (!cond()) {
    if (Date.now() > end) throw new Error(`${what}: not within ${ms} ms`)
    await sleep(10)
  }
}
const engine = async (): Promise<FakeEngine> => {
  const e = await startFakeEngine({ dpSize: 2 })
  cleanups.push(() => e.close())
  return e
}
const src = (e: FakeEngine): SourceSpec => ({
  url: e.url,
  dpSize: 2,
  kind: "sglang-v1-loads",
  intervalMs: 30,
  timeoutMs: 500
})

it("an engine added at run time takes traffic after its first poll; one removed takes none and leaves once idle", async () => {
  const [a, b] = [await engine(), await engine()]
  const r = startLiveRouter({ sources: [src(a)], policy: totalRequests, staleAfterSeconds: 5 })
  cleanups.push(() => r.close())
  await r.ready
  expect(r.addSource({ ...src(b), dpSize: 0 })).toMatchObject({ field: "source.dpSize" })
  expect(r.addSource(src(b))).toBeUndefined()
  expect(r.addSource(src(b))).toBeUndefined() // already polled: unchanged
  expect(r.ranks().map((x) => x.id)).toEqual([`${a.url}@0`, `${a.url}@1`, `${b.url}@0`, `${b.url}@1`])
  await until(() => r.ranks().every((x) => x.condition === "known"), 3000, "b known")
  const placed = Array.from({ length: 8 }, (_, i) => r.route({ requestId: `q${i}`, inputLength: 16 }))
  const onB = placed
    .filter((d) => d._tag === "Decision" && d.workerUrl === b.url)
    .map((d) => (d as { requestId: string }).requestId)
  expect(onB.length).toBe(4)
  // b goes while 4 of its requests are in flight
  expect(r.removeSource(b.url)).toBe(true)
  expect(r.removeSource(b.url)).toBe(false)
  expect(r.inflight()).toEqual([2, 2, 2, 2])
  for (let i = 8; i < 12; i++) {
    const d = r.route({ requestId: `q${i}`, inputLength: 16 })
    expect(d._tag === "Decision" && d.workerUrl).toBe(a.url)
  }
  for (const id of onB.slice(0, 3)) expect(r.finish(id)).toBe(true)
  expect(r.ranks().length).toBe(4)
  expect(r.finish(onB[3]!)).toBe(true)
  expect(r.finish(onB[3]!)).toBe(false)
  // idle now: its ranks are gone, a's counts unchanged
  expect(r.ranks().map((x) => x.id)).toEqual([`${a.url}@0`, `${a.url}@1`])
  expect(r.inflight()).toEqual([4, 4])
  for (let i = 0; i < 12; i++) if (!onB.includes(`q${i}`)) expect(r.finish(`q${i}`)).toBe(true)
  expect(r.inflight()).toEqual([0, 0])
  // and it can come back
  expect(r.addSource(src(b))).toBeUndefined()
  await until(() => r.ranks().length === 4 && r.ranks().every((x) => x.condition === "known"), 3000, "b back")
})
