// Every engine option the simulator offers (`EngineModel.options` of every registered engine),
// crossed with every engine: on an engine that declares it, a non-default value runs; on one that
// does not, it is refused before any step with an `InvalidConfig` naming the option and the engine.
// The matrix comes from the registry, so a new option or engine cannot skip it (its sample value
// below must be added, or the first test fails).
import { describe, expect, it } from "vitest"
import { engines } from "../src/engines/index.js"
import { vllmWaveLaterProfile } from "../src/engines/vllm/VllmWaveTypes.js"
import type { SimConfig } from "../src/index.js"
import { simulate } from "../src/index.js"
import { asSimPolicy, fixedStep, req } from "./helpers.js"

/** A valid value other than the option's default, per option field. */
const SAMPLE: Readonly<Record<string, unknown>> = {
  coordinatorIntervalSeconds: 0.05,
  vllmWaveProfile: vllmWaveLaterProfile(16),
  frontEnds: 2,
  prefillIntervalSteps: 2,
  coordinatorRows: "vllm",
  asyncScheduling: true,
  attentionDpEnableBalance: true,
  attentionDpTimeoutIters: 30,
  attentionDpBatchingWaitIters: 0
}

const rankZero = asSimPolicy<null>({
  name: "rank-zero",
  init: () => null,
  observe: (s) => s,
  finish: (s) => s,
  setStatus: (s) => s,
  route: (s) => ({ _tag: "Routed", rank: 0, state: s, explanation: {} })
})
const trace = [req(0, 0, 100, 3), req(1, 0.001, 50, 2)]
const run = (config: Partial<SimConfig>) =>
  simulate({ dpSize: 2, stepModel: fixedStep(0.01), ...config }, trace, rankZero)

const options = engines.flatMap((owner) => owner.options.map((o) => ({ owner, option: o })))
const cells = engines.flatMap((engine) =>
  options.map(({ owner, option }) => ({ engine, owner, option, declared: engine.options.includes(option) }))
)

describe("engine options over the engine registry", () => {
  it("every option has a sample value other than its default, and the fields are distinct", () => {
    const fields = options.map((o) => o.option.field)
    expect(new Set(fields).size).toBe(fields.length)
    for (const { option } of options) {
      expect(SAMPLE, option.field).toHaveProperty(option.field)
      expect(SAMPLE[option.field]).not.toEqual(option.defaultValue)
      expect(option.check(SAMPLE[option.field])).toBeUndefined()
    }
    // 6 vLLM options and 3 TensorRT-LLM options, crossed with 3 engines
    expect(options.length).toBe(9)
    expect(cells.filter((c) => !c.declared).length).toBe(18)
  })

  it.each(
    cells.filter((c) => !c.declared).map((c) => [c.engine.name, c.option.field, c.owner.label] as const)
  )(
    "%s refuses %s (an option of %s) with an InvalidConfig naming it, before any step",
    (engine, field, owner) => {
      const r = run({ engine, [field]: SAMPLE[field] } as Partial<SimConfig>)
      expect(r.status._tag).toBe("InvalidConfig")
      if (r.status._tag !== "InvalidConfig") return
      expect(r.status.field).toBe(field)
      expect(r.status.message).toMatch(
        new RegExp(`^${field} .* needs the ${owner} engine \\(.*\\), got engine ${engine}$`)
      )
      expect(r.steps).toBe(0)
      expect(r.requests.finished).toBe(0)
      // at its default the same engine runs
      const fine = run({
        engine,
        [field]: engines.find((e) => e.label === owner)!.options.find((o) => o.field === field)!.defaultValue
      } as Partial<SimConfig>)
      expect(fine.status._tag).toBe("Completed")
    }
  )

  it.each(cells.filter((c) => c.declared).map((c) => [c.engine.name, c.option.field] as const))(
    "%s runs %s at its sample value",
    (engine, field) => {
      const r = run({ engine, [field]: SAMPLE[field] } as Partial<SimConfig>)
      expect(r.status._tag).toBe("Completed")
      expect(r.requests.finished).toBe(2)
    }
  )
})
