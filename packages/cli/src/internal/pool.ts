/**
 * The worker threads of `goodput`, `capacity` and `sweep`: a pool of tinypool threads running one
 * command's worker entry (whose default export runs one job, plain data in and out), or, with no
 * threads, the same job function in this thread. A command's entry is `worker.ts` in its folder
 * (`worker.dev.mjs` beside it registers tsx when the CLI runs from its sources) and
 * `dist/<name>-worker.js` once built.
 *
 * @internal
 */

/** Where a command's worker entry is and the node flags its threads need. */
export interface WorkerEntry {
  readonly url: URL
  readonly execArgv: ReadonlyArray<string>
}

/**
 * The worker entry beside the module at `here` (its `import.meta.url`): from sources (tsx, vitest)
 * `./worker.dev.mjs`, which loads the TypeScript entry through tsx, with the workspace packages
 * resolved to their sources; built, `./<built>` in dist/ (`goodput-worker.js`).
 */
export const workerEntry = (here: string, built: string): WorkerEntry =>
  here.endsWith(".ts")
    ? { url: new URL("./worker.dev.mjs", here), execArgv: ["--conditions=@loadledger/source"] }
    : { url: new URL(`./${built}`, here), execArgv: [] }

/** Jobs run as they are handed in, on the pool's threads or here; `destroy` ends the threads. */
export interface JobPool<J, R> {
  readonly run: (job: J) => Promise<R>
  readonly destroy: () => Promise<void>
}

/**
 * How to run a command's jobs: `threads` worker threads on `entry` (0: in this thread, by
 * `inThread`, which must be the function the entry's default export calls).
 */
export interface PoolOptions<J, R> {
  readonly entry: WorkerEntry
  readonly threads: number
  readonly inThread: (job: J) => R
}

/**
 * Open a pool of `o.threads` threads (all started at once, each loading the entry), or, for 0
 * threads, one that runs each job in this thread when it is handed in. A job's answer crosses
 * back by structured clone: plain data only.
 */
export const openPool = async <J, R>(o: PoolOptions<J, R>): Promise<JobPool<J, R>> => {
  if (o.threads <= 0)
    return {
      run: async (job) => o.inThread(job),
      destroy: async () => {}
    }
  const { Tinypool } = await import("tinypool")
  const pool = new Tinypool({
    filename: o.entry.url.href,
    minThreads: o.threads,
    maxThreads: o.threads,
    execArgv: [...o.entry.execArgv]
  })
  return {
    run: (job) => pool.run(job) as Promise<R>,
    destroy: () => pool.destroy()
  }
}

/**
 * Run every job and resolve to the answers in job order, calling `onDone` with each answer as it
 * comes (on threads: in finishing order; in this thread: one job after another, so `onDone` runs
 * between jobs). At most as many threads as jobs are started; the pool is destroyed at the end.
 */
export const runJobs = async <J, R>(
  o: PoolOptions<J, R>,
  jobs: ReadonlyArray<J>,
  onDone?: (answer: R, job: J) => void
): Promise<ReadonlyArray<R>> => {
  const threads = Math.min(o.threads, jobs.length)
  if (threads <= 0)
    return jobs.map((job) => {
      const r = o.inThread(job)
      onDone?.(r, job)
      return r
    })
  const pool = await openPool({ ...o, threads })
  try {
    return await Promise.all(
      jobs.map((job) =>
        pool.run(job).then((r) => {
          onDone?.(r, job)
          return r
        })
      )
    )
  } finally {
    await pool.destroy()
  }
}
