/**
 * The flags of a benchmark script (`pnpm compare`, `pnpm bench:slow-rank`): `flag("x")` is the
 * value after `--x` (undefined when absent), `has("x")` whether `--x` is given, `quick` whether
 * `--quick` is, and `num("x", full, fast)` the number after `--x`, else `fast` with `--quick`, else
 * `full`.
 */
export const benchArgs = (argv: ReadonlyArray<string> = process.argv.slice(2)) => {
  const flag = (name: string): string | undefined => {
    const i = argv.indexOf(`--${name}`)
    return i >= 0 ? argv[i + 1] : undefined
  }
  const has = (name: string): boolean => argv.includes(`--${name}`)
  const quick = has("quick")
  const num = (name: string, full: number, fast: number): number =>
    Number(flag(name) ?? (quick ? fast : full))
  return { flag, has, quick, num }
}
