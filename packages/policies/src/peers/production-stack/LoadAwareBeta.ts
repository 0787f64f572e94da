/**
 * production-stack `loadaware`'s one tunable, beta, and how the router resolves it (PR
 * vllm-project/production-stack#1035: `routing_logic.py` `DEFAULT_LOADAWARE_BETA`, `_loadaware_beta`;
 * `src/tests/test_loadaware_router.py` at 0aed3a001af099f2c3919d00ad57b390a928fa45).
 *
 * @since 0.9.0
 */

/**
 * upstream `DEFAULT_LOADAWARE_BETA`: an endpoint 100% above the fleet's mean load is docked one full
 * cache hit.
 *
 * @example
 * ```ts
 * import { ProductionStack } from "@loadledger/policies"
 * ProductionStack.PS_LOADAWARE_DEFAULT_BETA // => 1
 * ```
 *
 * @category production-stack
 * @since 0.9.0
 */
export const PS_LOADAWARE_DEFAULT_BETA = 1.0

const PY_FLOAT = /^[+-]?(?:(?:\d(?:_?\d)*)?\.?\d(?:_?\d)*|\d(?:_?\d)*\.)(?:[eE][+-]?\d(?:_?\d)*)?$/
const PY_SPECIAL = /^[+-]?(?:inf|infinity|nan)$/i

/**
 * upstream `_loadaware_beta(override)`: `override` when given, else the `LOADAWARE_BETA` environment
 * string (`env`, passed in: this package reads no environment) parsed as Python `float()` (surrounding
 * whitespace, `_` between digits, `inf` / `nan` accepted), else {@link PS_LOADAWARE_DEFAULT_BETA}; an
 * empty or non-numeric string also gives the default (upstream logs a warning).
 *
 * **When to use**: to resolve beta as the router would from its flag and environment.
 *
 * @example
 * ```ts
 * import { ProductionStack } from "@loadledger/policies"
 * ProductionStack.psLoadAwareBeta(undefined, " 0.25 ") // => 0.25
 * ProductionStack.psLoadAwareBeta(2, "0.25") // => 2
 * ProductionStack.psLoadAwareBeta(undefined, "fast") // => 1
 * ProductionStack.psLoadAwareBeta(undefined, undefined) // => 1
 * ```
 *
 * @category production-stack
 * @since 0.9.0
 */
export const psLoadAwareBeta = (override: number | undefined, env: string | undefined): number => {
  if (override !== undefined) return override
  const raw = env?.trim()
  if (raw === undefined || raw === "") return PS_LOADAWARE_DEFAULT_BETA
  if (PY_SPECIAL.test(raw)) {
    const neg = raw.startsWith("-")
    return /nan/i.test(raw) ? Number.NaN : neg ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY
  }
  return PY_FLOAT.test(raw) ? Number(raw.replaceAll("_", "")) : PS_LOADAWARE_DEFAULT_BETA
}
