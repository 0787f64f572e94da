/**
 * The engine registry: one line per engine (`SimConfig.engine` names them). The loop, the config
 * and the router look engines up here and never branch on a name.
 */
import type { EngineModel } from "./Engine.js"
import { sglangEngine } from "./sglang/index.js"
import { vllmEngine } from "./vllm/index.js"

/**
 * Every engine the simulator models, the default (SGLang) first.
 *
 * @example
 * ```ts
 * import { engines } from "./index.js"
 * engines.map((e) => e.label) // => ["SGLang", "vLLM"]
 * ```
 *
 * @category engines
 * @since 0.6.0
 */
export const engines = [sglangEngine, vllmEngine] as const satisfies ReadonlyArray<EngineModel>

/**
 * A registered engine's name: the values `SimConfig.engine` takes.
 *
 * @category engines
 * @since 0.6.0
 */
export type EngineName = (typeof engines)[number]["name"]

/**
 * The names of the registered engines, in registry order.
 *
 * **When to use**: to check an `--engine` flag or list the engines in help text.
 *
 * @example
 * ```ts
 * import { engineNames } from "@loadledger/sim"
 * engineNames // => ["sglang", "vllm"]
 * ```
 *
 * @category engines
 * @since 0.6.0
 */
export const engineNames: ReadonlyArray<EngineName> = engines.map((e) => e.name)

/**
 * The engine named `name`, or undefined when none is registered under it.
 *
 * @example
 * ```ts
 * import { findEngine } from "./index.js"
 * findEngine("vllm")?.label // => "vLLM"
 * findEngine("tgi") // => undefined
 * ```
 *
 * @category engines
 * @since 0.6.0
 */
export const findEngine = (name: unknown): EngineModel | undefined => engines.find((e) => e.name === name)
