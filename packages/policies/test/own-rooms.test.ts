import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { followBootstrapRoom, rankAwareBootstrapRoom } from "../src/index.js"

describe("rankAwareBootstrapRoom", () => {
  it("every room lands on its intended rank under follow-bootstrap-room, and stays in [0, 2^63)", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1024 }).chain((n) => fc.tuple(fc.constant(n), fc.nat({ max: n - 1 }))),
        fc.bigInt({ min: 0n, max: 2n ** 63n - 1n }),
        ([n, rank], draw) => {
          const room = rankAwareBootstrapRoom(rank, n, draw)
          if (typeof room !== "string") return false
          const r = followBootstrapRoom.route(
            followBootstrapRoom.init(n),
            { requestId: "q", inputLength: 1, bootstrapRoom: room },
            0
          )
          return r._tag === "Routed" && r.rank === rank && BigInt(room) >= 0n && BigInt(room) < 2n ** 63n
        }
      )
    )
  })
  it("a planned spread 3/3/2 over 3 ranks is exactly what follow-bootstrap-room does (random rooms: not)", () => {
    const plan = [0, 1, 2, 0, 1, 2, 0, 1]
    const counts = [0, 0, 0]
    plan.forEach((rank, i) => {
      const room = rankAwareBootstrapRoom(rank, 3, BigInt(i) * 7919n + 2n ** 62n)
      if (typeof room !== "string") throw new Error("room")
      const r = followBootstrapRoom.route(
        followBootstrapRoom.init(3),
        { requestId: `${i}`, inputLength: 1, bootstrapRoom: room },
        0
      )
      if (r._tag === "Routed") counts[r.rank]! += 1
    })
    expect(counts).toEqual([3, 3, 2])
  })
  it("the largest draw stays below 2^63; bad input is a typed error naming the field", () => {
    expect(rankAwareBootstrapRoom(6, 7, 2n ** 63n - 1n)).toBe(
      (2n ** 63n - 1n - ((2n ** 63n - 1n) % 7n) + 6n - 7n).toString()
    )
    const f = (x: ReturnType<typeof rankAwareBootstrapRoom>) => (typeof x === "string" ? x : x.field)
    expect(f(rankAwareBootstrapRoom(0, 0, 1n))).toBe("dpSize")
    expect(f(rankAwareBootstrapRoom(-1, 4, 1n))).toBe("dpRank")
    expect(f(rankAwareBootstrapRoom(0, 4, -1n))).toBe("draw")
    expect(f(rankAwareBootstrapRoom(0, 4, 2n ** 63n))).toBe("draw")
  })
})
