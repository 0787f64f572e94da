// Synthetic token ids (issue #27 item 7): a trace without prompt tokens still gives token-keyed
// policies ids to route on. Laws: equal leading block hashes -> equal leading ids (and the same
// smg/prefix-hash key); requests without hashes -> distinct ids; the same request -> the same ids;
// every id a token id, at most 256 of them.
import { fc, test } from "@fast-check/vitest"
import { checkRequestFields, isTokenId, type Policy, Smg } from "@loadledger/policies"
import { describe, expect, it } from "vitest"
import {
  MAX_SYNTHETIC_TOKEN_IDS,
  parseTrace,
  simulate,
  type TraceRequest,
  tokenIdsOf,
  traceTokenIds
} from "../src/index.js"
import { fixedStep, req } from "./helpers.js"

const BLOCK = 512
const hashArb = fc.integer({ min: -(2 ** 40), max: 2 ** 40 })
const lengthArb = fc.integer({ min: 1, max: 3000 })

describe("tokenIdsOf", () => {
  test.prop([
    fc.array(hashArb, { minLength: 1, maxLength: 4 }),
    fc.array(hashArb, { maxLength: 3 }),
    fc.array(hashArb, { maxLength: 3 }),
    lengthArb,
    lengthArb
  ])(
    "requests with equal leading block hashes get equal ids over those blocks, and the same prefix-hash key",
    (shared, tailA, tailB, inA, inB) => {
      const a = tokenIdsOf(req(0, 0, inA, 1, { hashIds: [...shared, ...tailA] })).tokenIds
      const b = tokenIdsOf(req(1, 0, inB, 1, { hashIds: [...shared, ...tailB] })).tokenIds
      const n = Math.min(shared.length * BLOCK, a.length, b.length)
      expect(a.slice(0, n)).toEqual(b.slice(0, n))
      // SMG's key reads the first 256 tokens: inside the first (shared) block
      if (n >= 256) expect(Smg.smgPrefixHashKey(a, 256)).toBe(Smg.smgPrefixHashKey(b, 256))
    }
  )

  test.prop([hashArb, hashArb, lengthArb])(
    "a different first block hash gives different first ids (another key)",
    (h1, h2, input) => {
      fc.pre(h1 !== h2)
      const a = tokenIdsOf(req(0, 0, input, 1, { hashIds: [h1] })).tokenIds
      const b = tokenIdsOf(req(0, 0, input, 1, { hashIds: [h2] })).tokenIds
      const n = Math.min(256, input)
      expect(a.slice(0, n)).not.toEqual(b.slice(0, n))
      if (n >= 8) expect(Smg.smgPrefixHashKey(a, 256)).not.toBe(Smg.smgPrefixHashKey(b, 256))
    }
  )

  test.prop([fc.uniqueArray(fc.string({ maxLength: 12 }), { minLength: 2, maxLength: 40 }), lengthArb])(
    "requests without hashes get ids of their own: no two share a prefix-hash key",
    (ids, input) => {
      const keys = ids.map((id) =>
        Smg.smgPrefixHashKey(tokenIdsOf(req(0, 0, input, 1, { requestId: id })).tokenIds, 256)
      )
      expect(new Set(keys).size).toBe(ids.length)
      // and no two share even their first id (2^-32 per pair)
      const firsts = ids.map((id) => tokenIdsOf(req(0, 0, input, 1, { requestId: id })).tokenIds[0])
      expect(new Set(firsts).size).toBe(ids.length)
    }
  )

  test.prop([
    fc.string({ maxLength: 12 }),
    lengthArb,
    fc.option(fc.array(hashArb, { maxLength: 8 }), { nil: undefined })
  ])(
    "deterministic, min(inputLength, 256) token ids that every policy accepts",
    (requestId, input, hashIds) => {
      const r: TraceRequest = { ...req(0, 0, input, 1, { hashIds }), requestId }
      const once = tokenIdsOf(r)
      expect(tokenIdsOf({ ...r })).toEqual(once)
      expect(once.origin).toBe(hashIds === undefined ? "synthetic" : "block-hashes")
      expect(once.tokenIds).toHaveLength(Math.min(input, MAX_SYNTHETIC_TOKEN_IDS))
      expect(once.tokenIds.every(isTokenId)).toBe(true)
      // within one key's sequence no id repeats (the sequence is injective in the position)
      const firstBlock = once.tokenIds.slice(0, BLOCK)
      expect(new Set(firstBlock).size).toBe(firstBlock.length)
      expect(checkRequestFields({ requestId, inputLength: input, tokenIds: once.tokenIds })).toBeUndefined()
    }
  )

  it("pinned values: the same ids in every run and on every machine", () => {
    const first = (r: TraceRequest) => tokenIdsOf(r).tokenIds.slice(0, 3)
    expect(first(req(0, 0, 10, 1))).toEqual(first(req(0, 5, 10, 9)))
    // XXH3-64("request:0") = 6c6856b6cb3f0154, XXH3-64("block:0") = faad54e590d18c50; the ids
    // recomputed from those keys by a separate Python transcription of the finaliser over the Weyl sequence
    expect(first(req(0, 0, 10, 1))).toEqual([1372079364, 3141574670, 615703972])
    expect(first(req(0, 0, 10, 1, { hashIds: [0] }))).toEqual([1234750925, 4013148185, 3002761323])
    // a request id outside ASCII: keyed by its UTF-8 bytes (pinned when the key was taken from
    // TextEncoder's bytes; the addon now takes the string)
    expect(first({ ...req(0, 0, 300, 1), requestId: "é中😀" })).toEqual([863836080, 2219567997, 4113702107])
    // a block key seen before (the key cache) gives the same ids
    const twice = () => tokenIdsOf(req(7, 0, 700, 1, { hashIds: [46, 47] })).tokenIds.slice(254, 256)
    expect([twice(), twice()]).toEqual([
      [3933185152, 332615477],
      [3933185152, 332615477]
    ])
    // tokens past the hashed blocks come from the request's own key
    const a = tokenIdsOf(req(0, 0, 100, 1, { hashIds: [] })).tokenIds
    expect(a).toEqual(tokenIdsOf(req(0, 0, 100, 1)).tokenIds)
    expect(a[0]).not.toBe(tokenIdsOf(req(1, 0, 100, 1, { hashIds: [] })).tokenIds[0])
  })

  it("the trace's own ids are kept as they are, uncapped", () => {
    const ids = Array.from({ length: 2000 }, (_, i) => i)
    expect(tokenIdsOf(req(0, 0, 2000, 1, { tokenIds: ids, hashIds: [1] }))).toEqual({
      origin: "trace",
      tokenIds: ids
    })
  })
})

describe("traceTokenIds", () => {
  it("one origin for the whole trace, mixed with the counts, trace for an empty trace", () => {
    const count = (trace: ReadonlyArray<TraceRequest>) => {
      const t = traceTokenIds(trace)
      return [t.origin, t.requests.trace, t.requests.blockHashes, t.requests.synthetic]
    }
    expect(count([])).toEqual(["trace", 0, 0, 0])
    expect(count([req(0, 0, 5, 1, { hashIds: [1] })])).toEqual(["block-hashes", 0, 1, 0])
    expect(count([req(0, 0, 5, 1), req(1, 0, 5, 1)])).toEqual(["synthetic", 0, 0, 2])
    expect(
      count([req(0, 0, 5, 1, { tokenIds: [1] }), req(1, 0, 5, 1, { hashIds: [] }), req(2, 0, 5, 1)])
    ).toEqual(["mixed", 1, 1, 1])
  })
})

describe("simulate hands the ids to the policy", () => {
  // a policy that records the ids it was given and routes to rank 0
  const recorder = (seen: Array<ReadonlyArray<number> | undefined>): Policy<null> => ({
    name: "recorder",
    init: () => null,
    observe: (s) => s,
    finish: (s) => s,
    setStatus: (s) => s,
    route: (s, r) => {
      seen.push(r.tokenIds)
      return { _tag: "Routed", rank: 0, state: s, explanation: {} }
    }
  })
  it("as RouteRequest.tokenIds, and says where they came from in the result", () => {
    const csv =
      "arrival_seconds,input_length,output_length,hash_ids,token_ids\n0,600,1,3 4,\n1,600,1,3 9,\n2,5,1,,7 8 9\n3,20,1,,\n4,600,1,8 4,\n"
    const trace = parseTrace(csv)
    if (!Array.isArray(trace)) throw new Error("trace")
    const seen: Array<ReadonlyArray<number> | undefined> = []
    const result = simulate({ dpSize: 1, stepModel: fixedStep(0.01) }, trace, {
      name: "recorder",
      make: () => recorder(seen) as Policy<unknown>
    })
    expect(result.requests.finished).toBe(5)
    expect(seen.map((ids) => ids?.length)).toEqual([256, 256, 3, 20, 256])
    // the first block is shared by the first two, not by the last (another first hash)
    expect(seen[0]).toEqual(seen[1])
    expect(seen[4]![0]).not.toBe(seen[0]![0])
    expect(seen[2]).toEqual([7, 8, 9])
    expect(seen[3]).toEqual(tokenIdsOf(trace[3]!).tokenIds)
    expect(result.tokenIds).toEqual({
      origin: "mixed",
      requests: { trace: 1, blockHashes: 3, synthetic: 1 },
      maxSynthesisedTokens: 256
    })
  })

  it("a hand-built trace with bad token ids is an InvalidConfig naming the request's field", () => {
    const run = (tokenIds: unknown) =>
      simulate(
        { dpSize: 1, stepModel: fixedStep(0.01) },
        [req(0, 0, 3, 1), req(1, 0, 3, 1, { tokenIds } as never)],
        {
          name: "recorder",
          make: () => recorder([]) as Policy<unknown>
        }
      ).status
    expect(run([1, -1])).toMatchObject({ _tag: "InvalidConfig", field: "trace[1].tokenIds" })
    expect(run([1, 2, 3, 4])).toMatchObject({ _tag: "InvalidConfig", field: "trace[1].tokenIds" })
    expect(run("abc")).toMatchObject({ _tag: "InvalidConfig", field: "trace[1].tokenIds" })
    expect(run([0, 4294967295])._tag).toBe("Completed")
  })
})
