/**
 * The flags that set one engine's own option (`--front-ends`, `--prefill-interval`,
 * `--coordinator-rows`, `--async-scheduling`), checked before any work: an option the engine a
 * policy runs on does not have is refused with the flag, the option and the engine named, instead
 * of a run that ends `InvalidConfig` (or, before 0.7.0 for `--front-ends`, ignores it).
 *
 * @internal
 */
import { checkConfig, type EngineName, resolveConfig, type SimConfig } from "@loadledger/sim"

/** The simulator's engine-option fields and the CLI flags that set them. */
const FLAGS: Readonly<Record<string, string>> = {
  frontEnds: "--front-ends",
  prefillIntervalSteps: "--prefill-interval",
  coordinatorRows: "--coordinator-rows",
  asyncScheduling: "--async-scheduling"
}

/**
 * The first run whose engine refuses an engine option a flag set: a one-line message naming the
 * flag, the simulator's reason (which names the option and the engine) and the policy, else
 * undefined. Other config problems are left to the run (they are not a flag an engine lacks).
 */
export const engineFlagProblem = (
  runs: ReadonlyArray<{ readonly policy: string; readonly engine: EngineName; readonly config: SimConfig }>
): string | undefined => {
  for (const r of runs) {
    const p = checkConfig(resolveConfig({ ...r.config, engine: r.engine }))
    const flag = p === undefined ? undefined : FLAGS[p.field]
    if (p !== undefined && flag !== undefined)
      return `${flag}: ${p.message} (${r.policy} runs on ${r.engine}; add --engine vllm to run it on vLLM)`
  }
  return undefined
}
