/**
 * Shared timing helpers for `pnpm bench` (figures only; nothing here is a timed test).
 *
 * @since 0.1.0
 */
import { execFileSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import type { RankLoad } from "@loadledger/policies"
import { mulberry32 } from "../test-support/rng.js"

/** A benchmark module: `run` prints its own table to stdout. */
export interface Benchmark {
  readonly name: string
  readonly run: () => void
}

/** Keeps results observable so the JIT cannot drop the measured work. */
export let sink = 0
export const consume = (x: number): void => {
  sink = (sink + x) | 0
}

/**
 * Nanoseconds per call of `step`: the fastest of `rounds` timed rounds of `iterations` calls each,
 * after one untimed warm-up round (the minimum is the figure least disturbed by other processes on
 * a shared machine). `step(i)` receives the call index.
 */
export const nsPerOp = (step: (i: number) => void, iterations: number, rounds = 9): number => {
  for (let i = 0; i < iterations; i++) step(i)
  const samples: Array<number> = []
  for (let r = 0; r < rounds; r++) {
    const t0 = process.hrtime.bigint()
    for (let i = 0; i < iterations; i++) step(i)
    samples.push(Number(process.hrtime.bigint() - t0) / iterations)
  }
  return Math.min(...samples)
}

/** One thing to time: `step(i)` is one operation; `iterations` calls make a round. */
export interface Candidate {
  readonly step: (i: number) => void
  readonly iterations: number
}

/**
 * Counts compiled copies: each source is made unique, because V8 caches `new Function` by source
 * and the cached copies would share one type feedback vector.
 */
let compiled = 0

/**
 * A timing loop of its own for `step`: each call compiles a fresh function, so every candidate's
 * loop keeps its own type feedback (monomorphic, `step` inlinable) instead of sharing one call site
 * with the other candidates, as a router running a single policy would.
 */
const ownLoop = (step: (i: number) => void): ((from: number, to: number) => void) =>
  new Function(
    "step",
    `// copy ${++compiled}\nreturn function loop(from, to) { for (let i = from; i < to; i++) step(i) }`
  )(step)

/**
 * Nanoseconds per operation for each candidate, timed in interleaved passes (each pass times one
 * round of every candidate, each in its own loop) after 3 interleaved warm-up passes, keeping each
 * candidate's fastest round, so that load from other processes hits all candidates alike. The call
 * index keeps counting across rounds, so every round sees the same mix of inputs (index mod 1024).
 */
export const nsPerOpInterleaved = (cands: ReadonlyArray<Candidate>, passes = 12): Array<number> => {
  const best = cands.map(() => Number.POSITIVE_INFINITY)
  const loops = cands.map((c) => ownLoop(c.step))
  const at = cands.map(() => 0)
  for (let w = 0; w < 3; w++)
    for (let k = 0; k < cands.length; k++) {
      const n = cands[k]!.iterations
      loops[k]!(at[k]!, at[k]! + n)
      at[k] = at[k]! + n
    }
  for (let p = 0; p < passes; p++) {
    for (let k = 0; k < cands.length; k++) {
      const n = cands[k]!.iterations
      const from = at[k]!
      const t0 = process.hrtime.bigint()
      loops[k]!(from, from + n)
      const ns = Number(process.hrtime.bigint() - t0) / n
      at[k] = from + n
      if (ns < best[k]!) best[k] = ns
    }
  }
  return best
}

/** The parts of a policy a route step drives (structural, so any `Policy<S>` fits). */
export interface Routable<S> {
  readonly route: (
    state: S,
    request: never,
    now: number
  ) => { readonly _tag: string; readonly rank?: number; readonly state?: unknown }
  readonly finish: (state: S, requestIds: ReadonlyArray<string>, now: number) => S
}

/**
 * One immutable `route` per step from `state0`, threading the returned state: request
 * `reqs[k & 1023]` at `now0 + (k + 1) us`, and when `finishLists` is given, `finish` of
 * `finishLists[(k + lag) & 1023]` after it (so about `1024 - lag` requests stay in flight). The
 * step is compiled fresh for each call (`new Function`), so each policy's step keeps its own type
 * feedback, as in a router running that one policy.
 */
export const routeStep = <S>(
  policy: Routable<S>,
  state0: S,
  reqs: ReadonlyArray<unknown>,
  now0: number,
  finishLists?: ReadonlyArray<ReadonlyArray<string>>,
  lag = 512
): ((k: number) => void) =>
  new Function(
    "policy",
    "state0",
    "reqs",
    "now0",
    "finishLists",
    "lag",
    "consume",
    `// copy ${++compiled}
    let s = state0
    return finishLists === undefined
      ? function step(k) {
          const out = policy.route(s, reqs[k & 1023], now0 + (k + 1) * 1e-6)
          if (out._tag === "Routed") {
            s = out.state
            consume(out.rank)
          }
        }
      : function stepFinish(k) {
          const now = now0 + (k + 1) * 1e-6
          const out = policy.route(s, reqs[k & 1023], now)
          if (out._tag === "Routed") {
            s = policy.finish(out.state, finishLists[(k + lag) & 1023], now)
            consume(out.rank)
          }
        }`
  )(policy, state0, reqs, now0, finishLists, lag, consume)

/** Iterations for a round of roughly `targetMs` given a rough cost per op in ns. */
export const iterationsFor = (roughNs: number, targetMs = 5): number =>
  Math.max(1000, Math.round((targetMs * 1e6) / Math.max(roughNs, 1)))

/** The rank counts every policy benchmark measures (the 8, 64 and 1024). */
export const sizes = [8, 64, 1024] as const

/** A generated row: a `RankLoad` with every count present (what the floors below read). */
export type BenchLoad = RankLoad & {
  readonly timestamp: number
  readonly numRunningReqs: number
  readonly numWaitingReqs: number
  readonly numTotalTokens: number
}

/**
 * `n` ranks of seeded random load: running and waiting in [0, 64), `numTotalTokens` in [0, 200000)
 * (or 0 with `tokens: false`), and `kvCacheUsage` in [0, kvMax) when `kvMax` is given.
 */
export const randomLoads = (
  n: number,
  options: { readonly tokens?: boolean; readonly kvMax?: number } = {}
): ReadonlyArray<BenchLoad> => {
  const rnd = prng(n)
  return Array.from({ length: n }, (_, dpRank) => {
    const numRunningReqs = Math.floor(rnd() * 64)
    const numWaitingReqs = Math.floor(rnd() * 64)
    const numTotalTokens = options.tokens === false ? 0 : Math.floor(rnd() * 200_000)
    const load = { dpRank, timestamp: 1, numRunningReqs, numWaitingReqs, numTotalTokens }
    return options.kvMax === undefined ? load : { ...load, kvCacheUsage: options.kvMax * rnd() }
  })
}

/** A fixed-seed PRNG (the shared mulberry32 of `test-support/rng.ts`) so every run benches the same inputs. */
export const prng = mulberry32

/**
 * What a policy table measures: the packages' sources under tsx (`"tsx"`, the `@loadledger/source`
 * export condition), or their built `dist` (`"built"`, what users run: resolved without that
 * condition, so `pnpm build` first). `pnpm bench` measures tsx; `pnpm bench --built` the build;
 * `pnpm bench --compare` both, side by side (set by `bench/index.ts` through `LOADLEDGER_BENCH_MODES`).
 */
export type Mode = "tsx" | "built"

/** The modes of this run, from `LOADLEDGER_BENCH_MODES` (default: tsx only). */
export const benchModes = (): ReadonlyArray<Mode> => {
  const raw = process.env.LOADLEDGER_BENCH_MODES ?? "tsx"
  return raw.split(",").filter((m): m is Mode => m === "tsx" || m === "built")
}

const sourceCondition = "--conditions=@loadledger/source"

/**
 * `module[exportName](arg)` run in a fresh Node process, its result parsed from JSON. The child
 * gets the same flags (tsx carries over), with the source condition for `"tsx"` and without it for
 * `"built"` (the packages then resolve to `dist`; the bench's own files are still loaded by tsx).
 * Each policy is then measured in a process of its own, next to its floor, as a router running
 * that one policy would run it: code shared by several policies (object shapes, helpers) is not
 * polluted by the others' type feedback.
 */
export const inChild = <T>(moduleUrl: string, exportName: string, arg: string, mode: Mode = "tsx"): T => {
  const flags = process.execArgv.filter((f) => f !== sourceCondition)
  return JSON.parse(
    execFileSync(
      process.execPath,
      [
        ...flags,
        ...(mode === "tsx" ? [sourceCondition] : []),
        fileURLToPath(new URL("./child.ts", import.meta.url)),
        moduleUrl,
        exportName,
        arg
      ],
      { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] }
    )
  ) as T
}
