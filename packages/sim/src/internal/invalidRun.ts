/**
 * What a run that cannot start is built with (an `InvalidConfig` result comes from a run that never
 * started, not from a throw): the config with each refused field at its default, and a policy that
 * is never asked to route.
 */
import { type Policy, policyError } from "@loadledger/policies"
import type { ResolvedSimConfig } from "../Config.js"
import { checkConfig, resolveConfig } from "../Config.js"

/**
 * `c` with each field `checkConfig` refuses replaced by its default (`dpSize` 1, a constant step
 * model), so an `InvalidConfig` result is built from a run that never started, not from a throw.
 */
export const withDefaultsForInvalid = (c: ResolvedSimConfig): ResolvedSimConfig => {
  const defaults = resolveConfig({
    dpSize: 1,
    stepModel: () => ({ stepSeconds: 0, tokenImbalanceRatio: 1, ranks: [] })
  })
  let safe = c
  // every default passes the check: one pass per bad field (bounded all the same)
  for (let i = 0, p = checkConfig(safe); p !== undefined && i < 64; i++, p = checkConfig(safe))
    safe = { ...safe, [p.field]: defaults[p.field as keyof ResolvedSimConfig] }
  return safe
}

/** A policy that is never asked to route: what a run that does not start is built with. */
export const neverRoutes: Policy<null> = {
  name: "none",
  init: () => null,
  observe: (s) => s,
  route: () => policyError("NoRanks", "the run did not start"),
  finish: (s) => s,
  setStatus: (s) => s
}
