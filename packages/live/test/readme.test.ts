/**
 * The README's Usage block, run against a loopback test worker instead of a real SGLang server; and
 * its further ```ts blocks (the pure core), run and type-checked with their `// =>` checks as they
 * stand (the examples test covers the first block only).
 */
import { readFileSync } from "node:fs"
import { findPolicy } from "@loadledger/policies"
import { expect, it } from "vitest"
import { type DocExample, runExample, typecheckExamples } from "../../../test-support/docExamples.js"
import { startLiveRouter } from "../src/index.js"
import { startFakeEngine as startFakeWorker } from "../src/testing/index.js"

it("README usage", async () => {
  const worker = await startFakeWorker({ dpSize: 2 })
  try {
    const router = startLiveRouter({
      sources: [{ url: worker.url, dpSize: 2, kind: "sglang-v1-loads", intervalMs: 200, timeoutMs: 500 }],
      policy: findPolicy("total-requests")!.make({}),
      staleAfterSeconds: 1
    })
    await router.ready
    const d = router.route({ requestId: "req-1", inputLength: 512 })
    expect(d._tag).toBe("Decision")
    if (d._tag === "Decision") {
      expect(d.rankId).toBe(`${worker.url}@0`)
      expect(router.inflight()).toEqual([1, 0])
      router.finish("req-1")
    }
    expect(router.inflight()).toEqual([0, 0])
    const text = await router.metrics()
    expect(text).toContain(`loadledger_router_decisions_total{rank="${worker.url}@0",mode="policy"} 1`)
    expect(text).toContain(`loadledger_router_rank_known{rank="${worker.url}@1"} 1`)
    await router.close()
  } finally {
    await worker.close()
  }
})

it("README pure-core block runs and type-checks", async () => {
  const file = new URL("../README.md", import.meta.url)
  const text = readFileSync(file, "utf8")
  const blocks: Array<DocExample> = [...text.matchAll(/```ts\n([\s\S]*?)```/g)].slice(1).map((m) => ({
    name: "README.md pure core",
    location: `README.md:${text.slice(0, m.index).split("\n").length + 1}`,
    code: m[1]!,
    file
  }))
  expect(blocks.length).toBe(1)
  expect(typecheckExamples(blocks)).toEqual([])
  for (const b of blocks) expect((await runExample(b)).checks).toBe(3)
})
