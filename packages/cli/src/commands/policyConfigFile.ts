/**
 * `--policy-config FILE` of `simulate` and `goodput`: an own policy given as a JSON configuration
 * (`PolicyConfig`, the schema in the policies README), run beside the registered policies.
 *
 * @since 0.6.0
 */
import { readFileSync } from "node:fs"
import { type PolicyEntry, policyFromConfig } from "@loadledger/policies"
import type { ArgError } from "./simulateArgs.js"

/**
 * The registry-shaped entry of a checked configuration `config` (parsed JSON): named by its
 * `name` (default `"policy-config"`), engine `"any"`, built per run with the run's front ends, seed,
 * running-request cap and step cost (`PolicyOptions`). `undefined` when `policyFromConfig` refuses
 * it (check it first with {@link readPolicyConfig}).
 *
 * @example
 * ```ts
 * import { configEntry } from "./policyConfigFile.js"
 * const e = configEntry({ kind: "scored", name: "mine", terms: [{ term: "tokens", weight: 1 }] }, "mine.json")
 * e?.name // => "mine"
 * e?.make({}).name // => "mine"
 * configEntry({ kind: "step-time", name: "my-step-time", terms: [{ term: "slotWait", weight: 0.5 }] }, "s.json")?.make({}).name
 * // => "my-step-time"
 * configEntry({ kind: "scored" }, "x.json") // => undefined
 * ```
 *
 * @category simulate
 * @since 0.6.0
 */
export const configEntry = (config: unknown, source: string): PolicyEntry | undefined => {
  const built = policyFromConfig(config)
  if ("_tag" in built) return undefined
  // the configuration's name wins: a "step-time" or "upstream" one would otherwise carry its
  // builder's name (step-time-aware, vllm-kv-pressure) and collide with the registered policy
  const name = (config as { name?: unknown }).name
  const named = <P extends { readonly name: string }>(p: P): P =>
    typeof name === "string" && name !== p.name ? { ...p, name } : p
  const probe = named(built)
  return {
    name: probe.name,
    engine: "any",
    reference: false,
    description: `own policy configured in ${source}`,
    make: (options) => {
      const p = policyFromConfig(config, options)
      return "_tag" in p ? probe : named(p)
    }
  }
}

/**
 * Read `--policy-config FILE`: the file's JSON as a policy entry plus the parsed configuration
 * (what a worker thread rebuilds the entry from), or an `ArgError` for `--policy-config` saying
 * what is wrong: the file cannot be read, is not JSON, or `policyFromConfig` refuses it (the field
 * at fault and why).
 *
 * @example
 * ```ts
 * import { readPolicyConfig } from "./policyConfigFile.js"
 * const bad = readPolicyConfig("no-such-file.json")
 * "_tag" in bad && bad.option // => "--policy-config"
 * ```
 *
 * @category simulate
 * @since 0.6.0
 */
export const readPolicyConfig = (
  file: string
): { readonly entry: PolicyEntry; readonly config: unknown } | ArgError => {
  const fault = (message: string): ArgError => ({ _tag: "ArgError", option: "--policy-config", message })
  let text: string
  try {
    text = readFileSync(file, "utf8")
  } catch (e) {
    return fault(`cannot read ${file}: ${(e as Error).message}`)
  }
  let config: unknown
  try {
    config = JSON.parse(text)
  } catch (e) {
    return fault(`${file} is not JSON: ${(e as Error).message}`)
  }
  const p = policyFromConfig(config)
  if ("_tag" in p) return fault(`${file}: ${p.field}: ${p.message}`)
  return { entry: configEntry(config, file)!, config }
}
