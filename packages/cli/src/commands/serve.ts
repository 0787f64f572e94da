/**
 * `loadledger serve`: the live router in front of SGLang or vLLM workers, as a command: a reverse
 * proxy for OpenAI-style completions that places each request with a loadledger policy over a
 * live ledger (`@loadledger/live`'s `startServe`), with `/healthz`, `/readyz`, `/metrics`, JSON
 * logs on stdout, and a graceful drain on SIGTERM / SIGINT.
 *
 * @since 0.4.0
 */
import { readFileSync } from "node:fs"
import type { Command } from "commander"
import { examplesHelp } from "../internal/examples.js"
import { escapeLines } from "../internal/terminalText.js"

const fail = (message: string, code: number): number => {
  // messages quote flag values and config-file values: no raw control character out
  process.stderr.write(`loadledger serve: ${escapeLines(message.replace(/\n/g, "\\n"))}\n`)
  return code
}

/** The config file's values (JSON, or YAML for any other extension), or the message. */
const readConfig = async (path: string): Promise<Record<string, unknown> | string> => {
  let text: string
  try {
    text = readFileSync(path, "utf8")
  } catch (e) {
    return `cannot read --config ${path}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`
  }
  let parsed: unknown
  try {
    parsed = path.endsWith(".json") ? JSON.parse(text) : (await import("yaml")).parse(text)
  } catch (e) {
    return `--config ${path} is not valid ${path.endsWith(".json") ? "JSON" : "YAML"}: ${(e as Error).message.split("\n")[0]}`
  }
  return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)
    ? (parsed as Record<string, unknown>)
    : `--config ${path} must hold an object of flags`
}

/**
 * Run `serve` on its flags (`argv` after `serve`) until SIGTERM or SIGINT; resolves to the exit
 * code: 0 after a drain, 2 on a bad flag or config file, 1 when the port cannot be bound. A second
 * signal during the drain cuts what is left at once. With `--check`, the flags, the config file and
 * the policy are checked and printed as one JSON line (`msg: "checked"`), and it returns 0 at once.
 *
 * @example
 * ```ts
 * import { serve } from "./serve.js"
 * // prints "loadledger serve: at least one --worker URL is required (or --workers-file / --workers-dns / --workers-from / --gateway) (--help for usage)" on stderr
 * await serve([]) // => 2
 * ```
 *
 * @since 0.4.0
 */
export const serve = async (argv: ReadonlyArray<string>): Promise<number> => {
  const live = await import("@loadledger/live")
  const { gpus, models, stepTimeFromAggregates } = await import("@loadledger/step-time")
  const { findPolicy, stepCostFrom } = await import("@loadledger/policies")
  const path = live.serveConfigPath(argv)
  let file: { name: string; values: Record<string, unknown> } | undefined
  if (path !== undefined) {
    const values = await readConfig(path)
    if (typeof values === "string") return fail(values, 2)
    file = { name: path, values }
  }
  const args = live.parseServeArgs(argv, {
    file,
    presets: { models: Object.keys(models), gpus: Object.keys(gpus) }
  })
  if (args === "help") {
    process.stdout.write(`${live.serveUsage}\n${examplesHelp("serve")}`)
    return 0
  }
  if ("error" in args) return fail(`${args.error} (--help for usage)`, 2)
  const served =
    args.model !== undefined && args.gpu !== undefined
      ? { model: models[args.model]!, gpu: gpus[args.gpu]! }
      : undefined
  // with shared bookings the counts are every replica's: no per-replica scaling
  const scaling =
    args.bookings === undefined ? { clientCount: args.replicas, clientIndex: args.replicaIndex } : {}
  // --policy-config: the file's own policy (checked here, before anything starts) instead of --policy
  let entry = findPolicy(args.policy)!
  if (args.policyConfig !== undefined) {
    const { readPolicyConfig } = await import("./policyConfigFile.js")
    const read = readPolicyConfig(args.policyConfig)
    if ("_tag" in read) return fail(`${read.option}: ${read.message}`, 2)
    entry = read.entry
  }
  const policy = entry.make({
    seed: 1,
    ...scaling,
    maxRunningRequests: args.maxRunningRequests,
    stepCost:
      served === undefined
        ? undefined
        : stepCostFrom((ranks) => stepTimeFromAggregates(served, ranks), { dpSize: args.dp })
  })
  if (args.check) {
    // --check: everything above is checked (flags, config file, policy); nothing listens or polls
    const { stringifyJsonSafe } = await import("@loadledger/schema")
    const { check: _, ...checked } = args
    process.stdout.write(`${stringifyJsonSafe({ msg: "checked", ...checked, policy: policy.name })}\n`)
    return 0
  }
  const bookings =
    args.bookings === undefined
      ? undefined
      : live.makeRedisBookings({ url: args.bookings, group: args.bookingsGroup })
  // worker URLs and engine messages are input: no control character of theirs reaches the terminal
  const { stringifyJsonSafe } = await import("@loadledger/schema")
  const log = (record: object) => process.stdout.write(`${stringifyJsonSafe(record)}\n`)
  let running: Awaited<ReturnType<typeof live.startServe>>
  try {
    running = await live.startServe(
      args.bookings === undefined ? args : { ...args, replicas: 1, replicaIndex: 0 },
      policy,
      {
        log,
        bookings
      }
    )
  } catch (e) {
    const err = e as NodeJS.ErrnoException
    const why =
      err.code === "EADDRINUSE"
        ? "the port is in use"
        : err.code === "EACCES"
          ? "the port is not permitted"
          : `failed: ${err.message}`
    return fail(`cannot listen on ${args.host}:${args.port}: ${why} (${err.code ?? "error"})`, 1)
  }
  await new Promise<void>((resolve) => {
    let signals = 0
    const onSignal = (signal: NodeJS.Signals) => {
      if (++signals > 1) {
        log({ time: new Date().toISOString(), level: "warn", msg: "signal", signal, action: "cut" })
        void running.close().then(resolve)
        return
      }
      log({
        time: new Date().toISOString(),
        level: "info",
        msg: "signal",
        signal,
        action: "drain",
        drainMs: args.drainMs
      })
      void running.drain().then(() => {
        process.off("SIGTERM", onSignal)
        process.off("SIGINT", onSignal)
        resolve()
      })
    }
    process.on("SIGTERM", onSignal)
    process.on("SIGINT", onSignal)
  })
  return 0
}

/**
 * Registers `loadledger serve [flags]`: every flag of `serveUsage` (`@loadledger/live`), checked
 * before anything starts; `--help` prints them.
 *
 * @example
 * ```ts
 * import { Command } from "commander"
 * import { register } from "./serve.js"
 * const program = new Command()
 * register(program)
 * program.commands[0]!.name() // => "serve"
 * ```
 *
 * @since 0.4.0
 */
export const register = (program: Command): void => {
  program
    .command("serve")
    .description("run the live router: a load-aware reverse proxy for OpenAI-style completions")
    .allowUnknownOption()
    .allowExcessArguments()
    .helpOption(false)
    .argument("[flags...]", "see --help")
    .action(async (flags: Array<string>) => {
      process.exitCode = await serve(flags)
    })
}
