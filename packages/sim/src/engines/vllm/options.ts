/**
 * The vLLM engine's own `SimConfig` fields, with their defaults and checks (`EngineOption`):
 * the coordinator's publish interval, the wave profile, the front ends (API servers), the prefill
 * schedule interval and the coordinator's row fields. See `SimConfig` for what each models.
 */
import { bad, integerAtLeast, shown } from "../../internal/configChecks.js"
import type { ConfigProblem, EngineOption } from "../Engine.js"
import { type VllmWaveProfile, vllmWaveSnapshotProfile } from "./VllmWaveTypes.js"

/**
 * What the vLLM DP coordinator's publish hands each front end per rank (the rows a vLLM front end's
 * policy `observe`s), by the fields of `RankLoad` it fills:
 *
 * - `"extended"` (the default): vLLM's row `numWaitingReqs`, `numRunningReqs`, `kvCacheUsage`, plus
 *   two fields vLLM does not publish and the simulator carries from the same stats message, as stale
 *   as the row: `numTotalTokens` (the rank's KV tokens in use plus its waiting requests' uncached
 *   prompt tokens) and `timestamp` (when the rank's stats were taken; the publish time for a rank that
 *   never reported). Token-reading policies can run behind vLLM front ends with it.
 * - `"vllm"`: exactly the row of the coordinator at the reference snapshot, vllm
 *   `v1/engine/coordinator.py` @00080ee1 (after vllm PR #49204, which added KV usage):
 *   `[waiting, running, kv_cache_usage]` as `numWaitingReqs`, `numRunningReqs`, `kvCacheUsage`, and
 *   `dpRank`. `numTotalTokens` and `timestamp` are absent (not 0): the message carries neither, and
 *   a front end knows only when it received the publish (`observe`'s `now`).
 * - `"vllm-counts"`: the row of vLLM releases before PR #49204, `[waiting, running]` (vllm
 *   `v1/engine/coordinator.py` `EngineState.request_counts`, e.g. @de4c1fcb): `numWaitingReqs`,
 *   `numRunningReqs` and `dpRank`; `kvCacheUsage` absent too.
 *
 * A row is never `unknown`: every rank's row is in every load publish (a rank that never reported
 * is the coordinator's initial zero row). The publish log (`recordPublishes`) records the same
 * fields. SGLang's rows (the scheduler's load snapshot) always carry every field: `checkConfig`
 * refuses a setting other than `"extended"` on the SGLang engine.
 *
 * @category config
 * @since 0.4.0
 */
export type CoordinatorRows = "extended" | "vllm" | "vllm-counts"

const coordinatorRowsValues: ReadonlyArray<string> = ["extended", "vllm", "vllm-counts"]

/** A vLLM wave profile: `syncInterval` an integer >= 1 (0 or NaN ran until out of memory). */
const checkWaveProfile = (v: unknown): ConfigProblem | undefined => {
  const w = v as VllmWaveProfile
  return typeof w === "object" &&
    w !== null &&
    Number.isSafeInteger(w.syncInterval) &&
    w.syncInterval >= 1 &&
    typeof w.syncFirstStep === "boolean"
    ? undefined
    : {
        field: "vllmWaveProfile",
        message: `vllmWaveProfile must be { name, syncInterval: an integer >= 1, syncFirstStep: boolean }, got ${shown(w)}`
      }
}

/**
 * vLLM's options, in the order `checkConfig` checks them.
 *
 * @example
 * ```ts
 * import { vllmOptions } from "./options.js"
 * vllmOptions.find((o) => o.field === "frontEnds")?.elsewhere.rule // => "refused"
 * ```
 *
 * @category engines
 * @since 0.6.0
 */
export const vllmOptions: ReadonlyArray<EngineOption> = [
  {
    field: "coordinatorIntervalSeconds",
    defaultValue: 0.1,
    check: (v) =>
      typeof v === "number" && Number.isFinite(v) && v > 0
        ? undefined
        : bad("coordinatorIntervalSeconds", "a finite number > 0", v),
    // SGLang's ranks publish their own loads (no DP coordinator): a set interval would be ignored
    elsewhere: {
      rule: "refused",
      value: 0.1,
      message: (v, e) =>
        `coordinatorIntervalSeconds ${shown(v)} needs the vLLM engine (${e.label} has no DP coordinator), got engine ${e.name}`
    }
  },
  {
    field: "vllmWaveProfile",
    defaultValue: vllmWaveSnapshotProfile,
    check: checkWaveProfile,
    // SGLang runs no waves: a profile other than the default would be ignored
    elsewhere: {
      rule: "refused",
      value: vllmWaveSnapshotProfile,
      message: (v, e) =>
        `vllmWaveProfile ${shown((v as VllmWaveProfile).name)} needs the vLLM engine (${e.label} runs no DP waves), got engine ${e.name}`
    }
  },
  {
    // vLLM's API-server processes (`--api-server-count`); SGLang's and TensorRT-LLM's front end is
    // one process (the DP controller, `trtllm-serve`): more would be ignored (it was forced to 1)
    field: "frontEnds",
    defaultValue: 1,
    check: (v) => integerAtLeast("frontEnds", v, 1),
    elsewhere: {
      rule: "refused",
      value: 1,
      message: (v, e) =>
        `frontEnds ${shown(v)} needs the vLLM engine (${e.label} has one front end, no API-server count), got engine ${e.name}`
    }
  },
  {
    field: "prefillIntervalSteps",
    defaultValue: 1,
    check: (v) => integerAtLeast("prefillIntervalSteps", v, 1),
    elsewhere: {
      rule: "refused",
      value: 1,
      message: (v, e) =>
        `prefillIntervalSteps ${shown(v)} needs the vLLM engine (${e.label} has no prefill schedule interval), got engine ${e.name}`
    }
  },
  {
    field: "coordinatorRows",
    defaultValue: "extended",
    check: (v) =>
      typeof v === "string" && coordinatorRowsValues.includes(v)
        ? undefined
        : {
            field: "coordinatorRows",
            message: `coordinatorRows must be one of ${coordinatorRowsValues.join(", ")}, got ${JSON.stringify(v)}`
          },
    elsewhere: {
      rule: "refused",
      value: "extended",
      message: (v, e) =>
        `coordinatorRows "${String(v)}" needs the vLLM engine (${e.label}'s rows carry every field), got engine ${e.name}`
    }
  },
  {
    // vllm `config/scheduler.py` `SchedulerConfig.async_scheduling` (`--async-scheduling`):
    // `Scheduler.schedule` runs one step ahead of the model (AsyncScheduler, vllm PR #19970)
    field: "asyncScheduling",
    defaultValue: false,
    check: (v) => (typeof v === "boolean" ? undefined : bad("asyncScheduling", "a boolean", v)),
    elsewhere: {
      rule: "refused",
      value: false,
      message: (v, e) =>
        `asyncScheduling ${shown(v)} needs the vLLM engine (${e.label}'s scheduler is not modelled one step ahead), got engine ${e.name}`
    }
  }
]
