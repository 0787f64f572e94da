/**
 * The simulator steps vLLM's wave model in place on one working copy per group, reusing one
 * output record (internal/waveMachine.ts); `vllmWaveStep` copies per call. Both run the same
 * code: this checks that stepping in place over a whole history gives what the pure function
 * gives step by step, and that the pure function leaves its input state as it was.
 */
import { fc, test } from "@fast-check/vitest"
import {
  type VllmWaveEvent,
  type VllmWaveState,
  vllmWaveInit,
  vllmWaveLaterProfile,
  vllmWaveStep
} from "@loadledger/sim"
import { describe, expect } from "vitest"
import { newOut, stepWave, thaw } from "../src/engines/vllm/internal/waveMachine.js"

const arbHistory = fc.integer({ min: 1, max: 5 }).chain((n) =>
  fc.record({
    n: fc.constant(n),
    later: fc.boolean(),
    steps: fc.array(
      fc.record({
        unfinished: fc.array(fc.boolean(), { minLength: n, maxLength: n }),
        executed: fc.array(fc.boolean(), { minLength: n, maxLength: n }),
        events: fc.array(
          fc.oneof(
            fc.record({ ev: fc.constant("client_request" as const), rank: fc.nat({ max: n - 1 }) }),
            fc.record({
              ev: fc.constant("add_request" as const),
              rank: fc.nat({ max: n - 1 }),
              wave: fc.nat({ max: 4 })
            }),
            fc.constant({ ev: "client_sync" as const }),
            fc.record({ ev: fc.constant("pause" as const), rank: fc.nat({ max: n - 1 }) }),
            fc.record({
              ev: fc.constant("resume_all" as const),
              unfinished: fc.array(fc.boolean(), { minLength: n, maxLength: n })
            }),
            fc.record({
              ev: fc.constant("start_dp_wave" as const),
              wave: fc.nat({ max: 4 }),
              exclude: fc.option(fc.nat({ max: n - 1 }), { nil: null })
            })
          ) as fc.Arbitrary<VllmWaveEvent>,
          { maxLength: 3 }
        )
      }),
      { maxLength: 80, size: "max" }
    )
  })
)

describe("wave model in place (the simulator's) = vllmWaveStep (the public, pure one)", () => {
  test.prop([arbHistory])("same states, actions and messages over a whole history", (h) => {
    let s: VllmWaveState = vllmWaveInit(h.n, h.later ? vllmWaveLaterProfile(4) : undefined)
    const w = thaw(s.profile, s.ranks, s.coord, s.client)
    const o = newOut()
    for (const st of h.steps) {
      const input = { localUnfinished: st.unfinished, executed: st.executed, events: st.events }
      const before = structuredClone(s)
      const pure = vllmWaveStep(s, input)
      expect(s).toEqual(before)
      const err = stepWave(w, input, o)
      if (pure._tag === "VllmWaveError") {
        expect(err).toEqual(pure)
        return
      }
      expect(err).toBeUndefined()
      expect(w.ranks).toEqual(pure.state.ranks)
      expect(w.coord).toEqual(pure.state.coord)
      expect(w.client).toEqual(pure.state.client)
      expect(o.action).toEqual(pure.action)
      expect(o.eventLog).toEqual(pure.eventLog)
      expect(o.emitted).toEqual(pure.emitted)
      expect(o.startDpWave).toEqual(pure.startDpWave)
      expect(o.coordPublishes).toEqual(pure.coordPublishes)
      expect(o.pauseResolved).toEqual(pure.pauseResolved)
      expect([o.stepUsed, o.sync, o.syncResult, o.globalRunning]).toEqual([
        pure.stepUsed,
        pure.sync,
        pure.syncResult,
        pure.globalRunning
      ])
      s = pure.state
    }
  })
})
