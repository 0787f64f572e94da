/**
 * Build the policy a checked `PolicyConfig` describes (`policyFromConfig` checks, then calls this.
 *
 * @internal
 */
import type { Policy } from "../../Policy.js"
import { makeVllmLb } from "../../vllm/VllmLbPolicy.js"
import { makeCacheAffinity } from "../CacheAffinity.js"
import type { ConfigOptions, PolicyConfig } from "../PolicyConfig.js"
import { makePowerOfChoices } from "../PowerOfChoices.js"
import { makeScored } from "../Scored.js"
import { makeStepTimeAware } from "../StepTimeAware.js"
import { ledgerTerms, stepTimeTerms } from "../Terms.js"
import { withKvAdmission } from "../WithKvAdmission.js"
import { withSpeed } from "../WithSpeed.js"
import { withStaleness } from "../WithStaleness.js"

const scoredOf = (c: PolicyConfig, o: ConfigOptions): Policy<unknown> => {
  const shared = {
    name: c.name,
    scorers: (c.terms ?? []).map((t) => ({
      scorer: ledgerTerms[t.term]!(t),
      weight: t.weight,
      normalise: t.normalise
    })),
    tieBreakers: c.tieBreakers?.map((name) => ledgerTerms[name]!({})),
    kvFeasible: c.kvFeasible,
    clientCount: o.clientCount,
    clientIndex: o.clientIndex,
    staleAfterSeconds: c.staleAfterSeconds,
    inclusionMarginSeconds: c.inclusionMarginSeconds,
    maxIndexedBlocks: c.maxIndexedBlocks
  }
  return (
    c.kind === "scored"
      ? makeScored(shared)
      : makePowerOfChoices({ ...shared, choices: c.choices ?? 2, seed: o.seed })
  ) as Policy<unknown>
}

const stepTimeOf = (c: PolicyConfig, o: ConfigOptions): Policy<unknown> => {
  const weights: Record<string, number> = {}
  for (const t of c.terms ?? []) {
    const option = stepTimeTerms[t.term]
    if (option !== undefined) weights[option] = t.weight
  }
  return makeStepTimeAware({
    ...weights,
    clientCount: o.clientCount,
    clientIndex: o.clientIndex,
    maxRunningRequests: o.maxRunningRequests,
    cost: o.stepCost,
    staleAfterSeconds: c.staleAfterSeconds,
    inclusionMarginSeconds: c.inclusionMarginSeconds,
    maxIndexedBlocks: c.maxIndexedBlocks
  }) as Policy<unknown>
}

const baseOf = (c: PolicyConfig, o: ConfigOptions): Policy<unknown> => {
  if (c.kind === "scored" || c.kind === "power-of-choices") return scoredOf(c, o)
  if (c.kind === "step-time") return stepTimeOf(c, o)
  if (c.kind === "cache-affinity") return makeCacheAffinity() as Policy<unknown>
  return makeVllmLb({
    clientCount: o.clientCount,
    clientIndex: o.clientIndex,
    unknownLosesTies: true
  }) as Policy<unknown>
}

/** The configured policy, wrappers applied in order (the first innermost). */
export const buildPolicy = (c: PolicyConfig, options: ConfigOptions): Policy<unknown> => {
  let p = baseOf(c, options)
  for (const w of c.wrappers ?? [])
    p = (
      w === "staleness"
        ? withStaleness(p, { clientCount: options.clientCount })
        : w === "speed"
          ? withSpeed(p, { name: c.name ?? p.name })
          : withKvAdmission(p, { clientCount: options.clientCount })
    ) as Policy<unknown>
  return p
}
