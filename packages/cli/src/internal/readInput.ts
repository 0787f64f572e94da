/**
 * Reads a command's input file (or stdin for `-`), turning a file-system error code into a message a user can act on.
 *
 * @internal
 */
import { readFileSync } from "node:fs"

const reasons: Record<string, string> = {
  ENOENT: "file not found",
  EISDIR: "is a directory, expected a file",
  EACCES: "permission denied"
}

/**
 * Read a file named on the command line (`-` is stdin). Fails with an `Error` whose message is one
 * line naming the file and the reason (`x.json: file not found`), never Node's raw errno text.
 */
export const readInput = (file: string): Buffer => {
  try {
    return readFileSync(file === "-" ? 0 : file)
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code
    throw new Error(`${file}: ${(code && reasons[code]) ?? `cannot read (${code ?? String(e)})`}`)
  }
}

/** {@link readInput} as UTF-8 text. */
export const readText = (file: string): string => readInput(file).toString("utf8")
