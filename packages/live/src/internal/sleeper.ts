/**
 * Timers a router can cut short: `sleep(ms)` resolves after `ms` or at `wakeAll()`, whichever
 * comes first (on close, every poll loop's wait ends at once). @internal
 */
export const makeSleeper = (): { sleep: (ms: number) => Promise<void>; wakeAll: () => void } => {
  const sleeps = new Set<() => void>()
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(t)
        sleeps.delete(done)
        resolve()
      }
      const t = setTimeout(done, ms)
      sleeps.add(done)
    })
  const wakeAll = () => {
    for (const wake of [...sleeps]) wake()
  }
  return { sleep, wakeAll }
}
