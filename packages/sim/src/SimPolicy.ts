/**
 * What `simulate` needs of a policy (`SimPolicy`), apart from `simulate` so the run's internals can
 * name it without importing `Simulate.ts` back.
 *
 * @since 0.6.0
 */
import type { Policy, PolicyOptions } from "@loadledger/policies"
import type { EngineName } from "./engines/index.js"

/**
 * What `simulate` needs of a policy: its name and a factory (a `PolicyEntry` from
 * `@loadledger/policies` fits). The factory is called once per front end with
 * `{ clientCount, clientIndex, seed }`.
 *
 * @category models
 * @since 0.1.0
 */
export interface SimPolicy {
  readonly name: string
  readonly make: (options: PolicyOptions) => Policy<unknown>
  /**
   * The engine whose router the policy is (a registry entry's `engine`): `simulate` runs it when the
   * config names no `engine` (`"any"` or absent: SGLang). Since 0.4.0.
   */
  readonly engine?: EngineName | "any" | undefined
}
