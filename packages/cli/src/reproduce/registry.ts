/**
 * The scenarios `loadledger reproduce` knows, by name. Adding a scenario is one entry here: a
 * module exporting a {@link ReproduceScenario} (its `run` loads the simulator only when called,
 * so `reproduce --list` stays light).
 *
 * @since 0.7.0
 */
import type { ReproduceScenario } from "./Scenario.js"
import { sglangLargeEp } from "./sglangLargeEp.js"
import { trtllmAdpBalance } from "./trtllmAdpBalance.js"
import { vllmPrefillInterval } from "./vllmPrefillInterval.js"

const SCENARIOS: ReadonlyArray<ReproduceScenario> = [sglangLargeEp, trtllmAdpBalance, vllmPrefillInterval]

/**
 * Every registered scenario, in `reproduce --list` order.
 *
 * @example
 * ```ts
 * import { scenarios } from "./registry.js"
 * scenarios().every((s) => s.source.citation.length > 0 && s.assumptions.length > 0) // => true
 * ```
 *
 * @category reproduce
 * @since 0.7.0
 */
export const scenarios = (): ReadonlyArray<ReproduceScenario> => SCENARIOS

/**
 * The scenario named `name`, or undefined.
 *
 * @example
 * ```ts
 * import { findScenario } from "./registry.js"
 * findScenario("no-such-result") // => undefined
 * ```
 *
 * @category reproduce
 * @since 0.7.0
 */
export const findScenario = (name: string): ReproduceScenario | undefined =>
  SCENARIOS.find((s) => s.name === name)
