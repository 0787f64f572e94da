/**
 * `DecodeSet` keeps its members' sums lazily; this replays random histories (joins, leaves,
 * decode steps, decode allocations) against a plain list of requests advanced eagerly, and checks
 * the sums a rank reads when it forms a decode batch: `decodePairs` (Σ ctx + 1) and, under a
 * sparse-attention top-k, `cappedReadPairs` (Σ min(ctx + 1, k)).
 */
import { fc, test } from "@fast-check/vitest"
import { describe, expect, it } from "vitest"
import { CountedSamples } from "../src/internal/countedSamples.js"
import { type Decoder, DecodeSet } from "../src/internal/decodeSet.js"

interface Member extends Decoder {
  readonly id: number
}

// steps outnumber the rest, so members cross the cap between two reads and leave later
const arbOp = fc.oneof(
  {
    arbitrary: fc.record({
      op: fc.constant("join" as const),
      ctx: fc.nat({ max: 40 }),
      out: fc.integer({ min: 2, max: 80 })
    }),
    weight: 2
  },
  { arbitrary: fc.record({ op: fc.constant("leave" as const), which: fc.nat() }), weight: 1 },
  { arbitrary: fc.record({ op: fc.constant("step" as const), allocs: fc.boolean() }), weight: 4 },
  { arbitrary: fc.record({ op: fc.constant("read" as const) }), weight: 1 }
)

describe("DecodeSet sums = the sums over its members advanced eagerly", () => {
  test.prop([
    fc.option(fc.integer({ min: 1, max: 48 }), { nil: undefined }),
    fc.array(arbOp, { maxLength: 300, size: "max" })
  ])("decodePairs and cappedReadPairs", (capK, ops) => {
    const set = new DecodeSet<Member>(capK)
    const itl = new CountedSamples()
    // the model: each member's true ctx
    const members: Array<{ m: Member; ctx: number; left: number }> = []
    let id = 0
    let now = 0
    for (const o of ops) {
      if (o.op === "join") {
        const m: Member = {
          worstGapSeconds: 0,
          sharedFrom: Number.POSITIVE_INFINITY,
          id: id++,
          ctx: o.ctx,
          generated: 1,
          kvTokens: 0,
          lastTokenSeconds: now,
          outputTarget: o.out,
          doneAt: 0,
          allocAt: 0,
          decodeEpoch: 0
        }
        set.join(m)
        members.push({ m, ctx: o.ctx, left: o.out - 1 })
      } else if (o.op === "leave") {
        if (members.length === 0) continue
        const [x] = members.splice(o.which % members.length, 1)
        set.leave(x!.m)
        expect(x!.m.ctx).toBe(x!.ctx)
      } else if (o.op === "step") {
        if (o.allocs) set.allocs++
        now += 1
        const finished = set.decodeStep(now, itl)
        for (const x of members) {
          x.ctx++
          x.left--
        }
        // members that reached their output length are reported, and leave (as a rank does)
        const due = members.filter((x) => x.left <= 0).map((x) => x.m.id)
        expect(finished.map((m) => m.id).sort((a, b) => a - b)).toEqual(due.sort((a, b) => a - b))
        for (const m of [...finished]) {
          set.leave(m)
          members.splice(
            members.findIndex((x) => x.m === m),
            1
          )
        }
      }
      expect(set.count).toBe(members.length)
      // read only now and then: the lazy sums must hold whenever they are read
      if (o.op !== "read") continue
      expect(set.decodePairs).toBe(members.reduce((a, x) => a + x.ctx + 1, 0))
      if (capK !== undefined)
        expect(set.cappedReadPairs).toBe(members.reduce((a, x) => a + Math.min(x.ctx + 1, capK), 0))
    }
  })
})

describe("DecodeSet under a cap", () => {
  it("a member lifted to the cap by steps no read saw, then leaving, leaves nothing behind", () => {
    const set = new DecodeSet<Member>(3)
    const m: Member = {
      worstGapSeconds: 0,
      sharedFrom: Number.POSITIVE_INFINITY,
      id: 0,
      ctx: 0,
      generated: 1,
      kvTokens: 0,
      lastTokenSeconds: 0,
      outputTarget: 40,
      doneAt: 0,
      allocAt: 0,
      decodeEpoch: 0
    }
    set.join(m)
    expect(set.cappedReadPairs).toBe(1)
    const itl = new CountedSamples()
    for (let t = 1; t <= 3; t++) set.decodeStep(t, itl)
    set.leave(m)
    expect(m.ctx).toBe(3)
    expect(set.cappedReadPairs).toBe(0)
    set.join(m)
    // ctx 3: its next read is capped at 3
    expect(set.cappedReadPairs).toBe(3)
  })
})
