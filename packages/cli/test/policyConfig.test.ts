// `--policy-config FILE` end to end: an own policy given as JSON runs in `simulate` and `goodput`
// beside the registered ones, and decides as the registered policy it copies.
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { ownPolicyConfigs } from "@loadledger/policies"
import { describe, expect, it } from "vitest"
import { mooncake, runCaptured } from "./runCli.js"

const dir = mkdtempSync(join(tmpdir(), "loadledger-policy-config-"))
const writeTemp = (name: string, text: string): string => {
  const file = join(dir, name)
  writeFileSync(file, text)
  return file
}

describe("--policy-config", () => {
  it("simulate runs a configured policy, deciding as the registered one it copies", async () => {
    // ledger-balanced's own configuration under another name: the same routes, request for request
    const copy = writeTemp(
      "copy.json",
      JSON.stringify({ ...ownPolicyConfigs["ledger-balanced"], name: "my-ledger" }, null, 2)
    )
    const { code, out } = await runCaptured(
      "simulate",
      "--trace",
      mooncake,
      "--limit",
      "200",
      "--policies",
      "ledger-balanced",
      "--policy-config",
      copy,
      "--json",
      "--quiet"
    )
    expect(code).toBe(0)
    const doc = JSON.parse(out)
    expect(doc.results.map((r: { policy: string }) => r.policy)).toEqual(["ledger-balanced", "my-ledger"])
    expect(doc.results[1].requestsPerRank).toEqual(doc.results[0].requestsPerRank)
    expect(doc.results[1].ttftSeconds).toEqual(doc.results[0].ttftSeconds)
  })

  it("a hand-written configuration with plain-number weights runs, and a bad one names its field", async () => {
    const mine = writeTemp(
      "mine.json",
      '{ "kind": "scored", "name": "tokens-and-queue", "terms": [{ "term": "tokens", "weight": 1 }, { "term": "waiting", "weight": 0.5 }] }'
    )
    const ok = await runCaptured(
      "simulate",
      "--trace",
      mooncake,
      "--limit",
      "100",
      "--policies",
      "round-robin",
      "--policy-config",
      mine,
      "--json",
      "--quiet"
    )
    expect(ok.code).toBe(0)
    const results = JSON.parse(ok.out).results as Array<{ policy: string; requestsPerRank: Array<number> }>
    expect(results[1]!.policy).toBe("tokens-and-queue")
    expect(results[1]!.requestsPerRank.reduce((a, b) => a + b, 0)).toBe(100)
    const typo = writeTemp("typo.json", '{ "kind": "scored", "terms": [{ "term": "tokenz", "weight": 1 }] }')
    const bad = await runCaptured("simulate", "--trace", mooncake, "--policy-config", typo)
    expect(bad.code).toBe(1)
    expect(bad.err).toContain("terms[0].term")
    expect(bad.err).toContain('unknown term "tokenz"')
    const notJson = await runCaptured(
      "simulate",
      "--trace",
      mooncake,
      "--policy-config",
      writeTemp("x.json", "{")
    )
    expect(notJson.code).toBe(1)
    expect(notJson.err).toContain("is not JSON")
  })

  it("goodput ranks a configured policy beside the registered ones (worker threads rebuild it)", async () => {
    const copy = writeTemp(
      "gp.json",
      JSON.stringify({ ...ownPolicyConfigs["ledger-balanced"], name: "my-ledger" })
    )
    const args = [
      "goodput",
      "--trace",
      mooncake,
      "--limit",
      "200",
      "--windows",
      "2",
      "--slo",
      "ttft=10s,tpot=200ms,attain=0.9",
      "--policies",
      "ledger-balanced",
      "--policy-config",
      copy,
      "--json",
      "--quiet",
      "--jobs",
      "2"
    ]
    const { code, out } = await runCaptured(...args)
    expect(code).toBe(0)
    // every row object that names a policy, wherever the board nests it
    const rows: Array<{ policy: string; goodput?: unknown }> = []
    const walk = (x: unknown): void => {
      if (Array.isArray(x)) for (const y of x) walk(y)
      else if (typeof x === "object" && x !== null) {
        if (typeof (x as { policy?: unknown }).policy === "string" && "goodput" in x) rows.push(x as never)
        for (const y of Object.values(x)) walk(y)
      }
    }
    walk(JSON.parse(out))
    const mine = rows.find((r) => r.policy === "my-ledger")
    const registered = rows.find((r) => r.policy === "ledger-balanced")
    expect(mine?.goodput).toBeDefined()
    expect(mine?.goodput).toEqual(registered?.goodput)
  }, 120_000)
})
