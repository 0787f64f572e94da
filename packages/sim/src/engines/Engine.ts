/**
 * The engine-model interface: what makes the SGLang, vLLM (and, next, TensorRT-LLM) DP groups of
 * the simulator differ. The loop (`internal/loop.ts`) is the same for every engine; an engine says
 * how each of its ranks fills a step's batch and what it retracts (`rank`), which `SimConfig`
 * fields are its own and how they are checked (`options`), and, for one run, what load its ranks
 * publish and when the router's front ends see it, and the protocol its ranks step by (`start`:
 * an {@link EngineRun}, e.g. vLLM's DP coordinator and waves). Each engine is a folder of
 * `engines/` with one line in the registry (`engines/index.ts`).
 *
 * @since 0.6.0
 */
import type { RankLoad } from "@loadledger/policies"
import type { Rank, RankRules } from "../internal/rank.js"
import type { Req } from "../internal/req.js"
import type { PublishRecord } from "../Result.js"

/**
 * A config field `checkConfig` refuses, and why.
 *
 * @category config
 * @since 0.4.0
 */
export interface ConfigProblem {
  readonly field: string
  readonly message: string
}

/**
 * A `SimConfig` field that belongs to one engine: its default, the rule its value follows (checked
 * whatever the engine, as every field is), and what happens to it on an engine that does not
 * declare it (`elsewhere`): `kept` (resolved and checked, not read), `forced` to `value`, or
 * `refused` (an `InvalidConfig` naming the field) unless it is `value`.
 *
 * @category engines
 * @since 0.6.0
 */
export interface EngineOption {
  readonly field: string
  readonly defaultValue: unknown
  readonly check: (value: unknown) => ConfigProblem | undefined
  readonly elsewhere:
    | { readonly rule: "kept" }
    | { readonly rule: "forced"; readonly value: unknown }
    | {
        readonly rule: "refused"
        readonly value: unknown
        /** The refusal's message, on `engine`. */
        readonly message: (value: unknown, engine: EngineModel) => string
      }
}

/**
 * What ends a run from inside an engine (a bad protocol message: a simulator bug): the run ends
 * `NoProgress` with these ranks and this message.
 *
 * @category engines
 * @since 0.6.0
 */
export interface EngineFault {
  readonly ranks: ReadonlyArray<number>
  readonly message: string
}

/**
 * What an engine is given for one run: the resolved config (the engine reads its own fields; the
 * config has every registered engine's options), the lockstep groups by index (all ranks under
 * `lockstep`, else one rank each), and `observe`, which hands load rows to every front end's policy
 * (`Policy.observe`).
 *
 * @category engines
 * @since 0.6.0
 */
export interface EngineSetup {
  readonly config: EngineConfig
  readonly groups: ReadonlyArray<ReadonlyArray<Rank>>
  readonly observe: (loads: ReadonlyArray<RankLoad>, now: number) => void
}

/**
 * The resolved config fields every engine may read; its own options are there too, by field name.
 *
 * @category engines
 * @since 0.6.0
 */
export interface EngineConfig {
  readonly dpSize: number
  readonly lockstep: boolean
  readonly dummyBatches: boolean
  readonly kvPoolTokens: number
  readonly recordPublishes: boolean
  /** The per-rank running cap (`--max-running-requests`, vLLM `--max-num-seqs`, TensorRT-LLM max batch size). */
  readonly maxRunningRequests: number
}

/**
 * One run of an engine: the group protocol and the load path, called by the loop at fixed points.
 * Groups are named by index (`EngineSetup.groups`); times are simulation seconds.
 *
 * - `queued(group, rank)`: a routed request joined rank `rank`'s queue (vLLM: a `client_request`
 *   event for the wave model).
 * - `keepsStepping(group)`: a group holding no request steps anyway (vLLM: dummy batches while its
 *   wave runs); `idle(group)`: it holds none and does not step.
 * - `throttlePrefills(group)`: this step's ranks defer their prefills (vLLM's prefill cadence).
 * - `stepStarted(group)`: the group's step was charged and started.
 * - `stepEnding(group)`: the step ends, before its ranks complete it; `stepEnded(group, now,
 *   steps)`: after; the ranks publish or report their load (SGLang: each writes its snapshot and
 *   the front ends observe it; vLLM: stats to the coordinator, which may publish).
 * - `nextPublishSeconds` / `publish(now)`: a publish on the engine's own cadence (vLLM's
 *   coordinator; never for SGLang), an event of the loop.
 * - `fault`: a fault from the start (a coordinator that could not be made), `publishLog`: the
 *   publishes when `recordPublishes`.
 *
 * - `fetch(held, now)` (optional): an engine that routes once per iteration (TensorRT-LLM: the
 *   executor fetches new requests, allgathers its ranks' states and assigns the batch) holds the
 *   arrivals in `held` (arrival order); before an idle group steps the loop calls `fetch`, which
 *   removes from `held` the requests to route now and returns them in the order the router places
 *   them (each one `route`d over the state its predecessors updated). Without it a request is routed
 *   on arrival.
 *
 * - `admitCutoffSeconds(group, previousStartSeconds)` (optional, since 0.7.0): when the group's step
 *   follows its previous one at once, the latest queue time a request may have to be admitted in it
 *   on a rank that has requests running (vLLM's async scheduling: the step was scheduled when the
 *   previous one started); absent or +Infinity: every waiting request.
 *
 * TensorRT-LLM's context-wait balance strategy is `throttlePrefills`, its counters kept by the run.
 *
 * @category engines
 * @since 0.6.0
 */
export interface EngineRun {
  queued(group: number, rank: number): void
  keepsStepping(group: number): boolean
  idle(group: number): void
  throttlePrefills(group: number): boolean
  stepStarted(group: number): void
  stepEnding(group: number): void
  stepEnded(group: number, now: number, steps: number): EngineFault | undefined
  readonly nextPublishSeconds: number
  publish(now: number): EngineFault | undefined
  readonly fault: EngineFault | undefined
  readonly publishLog: ReadonlyArray<PublishRecord> | undefined
  readonly fetch?: ((held: Array<Req>, now: number) => ReadonlyArray<Req>) | undefined
  /** @since 0.7.0 */
  readonly admitCutoffSeconds?: ((group: number, previousStartSeconds: number) => number) | undefined
}

/**
 * An engine model: its name (the `SimConfig.engine` value), its label in messages, its own
 * config fields, what each rank decides (`rank`: how a step's batch is filled, which request is
 * retracted), and `start`, which makes the engine's {@link EngineRun} for one run.
 *
 * **When to use**: to add an engine to the simulator (TensorRT-LLM next): write its folder
 * `engines/<name>/` with a value of this type and add one line to `engines/index.ts`; see the
 * package README, "Adding an engine". The loop never asks which engine it runs.
 *
 * @example
 * ```ts
 * import type { EngineModel } from "@loadledger/sim"
 * import { engines } from "./index.js"
 * const vllm: EngineModel | undefined = engines.find((e) => e.name === "vllm")
 * vllm?.label // => "vLLM"
 * vllm?.options.map((o) => o.field)
 * // => ["coordinatorIntervalSeconds", "vllmWaveProfile", "frontEnds", "prefillIntervalSteps", "coordinatorRows", "asyncScheduling"]
 * ```
 *
 * @category engines
 * @since 0.6.0
 */
export interface EngineModel<Name extends string = string> {
  readonly name: Name
  readonly label: string
  readonly options: ReadonlyArray<EngineOption>
  readonly rank: RankRules
  start(setup: EngineSetup): EngineRun
}
