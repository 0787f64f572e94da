/**
 * The policy flags every command takes the same way: `--policies LIST` and `--policy LIST` are one
 * flag under two names (whichever a user types; both at once is a usage error), with the demo's
 * five reference policies as the default set where a list is taken.
 *
 * @internal
 */
import type { EngineName } from "@loadledger/sim"
import { type Command, Option } from "commander"

/** The demo's five reference policies (`pnpm demo`): the default of simulate, goodput and compare. */
export const DEFAULT_POLICIES =
  "round-robin,total-requests,total-tokens,vllm-kv-pressure,follow-bootstrap-room"

/**
 * Add `--<main> <list>` (shown in the help, with `fallback` as its default when given) and
 * `--<alias> <list>` (hidden; the help of `--<main>` says it works too) to `cmd`, both landing in
 * the option value `main`.
 */
export const addPolicyFlags = (
  cmd: Command,
  o: {
    readonly main: "policies" | "policy"
    readonly description: string
    readonly fallback?: string | undefined
  }
): Command => {
  const alias = o.main === "policies" ? "policy" : "policies"
  const flag = new Option(
    `--${o.main} <${o.main === "policies" ? "list" : "name"}>`,
    `${o.description} (--${alias} works too)`
  )
  if (o.fallback !== undefined) flag.default(o.fallback)
  cmd.addOption(flag)
  cmd.addOption(new Option(`--${alias} <list>`, `alias of --${o.main}`).hideHelp())
  // the alias's value lands in `main` as it is parsed; both at once is a usage error, whichever first
  const both = () => cmd.error(`error: --${alias} is --${o.main} under another name: give one of them`)
  cmd.on(`option:${alias}`, (list: string) => {
    if (cmd.getOptionValueSource(o.main) === "cli") both()
    cmd.setOptionValueWithSource(o.main, list, "cli")
  })
  cmd.on(`option:${o.main}`, () => {
    if (cmd.getOptionValue(alias) !== undefined) both()
  })
  return cmd
}

/**
 * The engine a policy runs on: `forced` (`--engine`) when given, else the entry's own engine
 * (`PolicyEntry.engine`: the engine whose router it reproduces; SGLang's, vLLM's and
 * TensorRT-LLM's run on theirs), SGLang for an entry of `"any"` engine (the peers' and the own).
 */
export const engineOf = (
  entry: { readonly engine: "sglang" | "vllm" | "trtllm" | "any" },
  forced: EngineName | undefined
): EngineName => forced ?? (entry.engine === "any" ? "sglang" : entry.engine)
