export {}

/**
 * Runs one measurement in its own process for `inChild` (`bench/harness.ts`): imports the module,
 * calls the named export with the argument and prints the result as JSON.
 *
 * @since 0.1.0
 */
const [moduleUrl, exportName, arg] = process.argv.slice(2)
const m = (await import(moduleUrl!)) as Record<string, (arg: string) => unknown>
process.stdout.write(JSON.stringify(m[exportName!]!(arg!)))
