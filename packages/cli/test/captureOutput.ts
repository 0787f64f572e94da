// Capture what a CLI run writes to stdout and stderr (reset before each test, restored after).
import { afterEach, beforeEach, vi } from "vitest"

export interface Captured {
  out: string
  err: string
}

/** Install the capture for the surrounding describe block (or file); read `.out` / `.err`. */
export const captureOutput = (): Captured => {
  const io: Captured = { out: "", err: "" }
  beforeEach(() => {
    io.out = ""
    io.err = ""
    process.exitCode = undefined
    vi.spyOn(process.stdout, "write").mockImplementation((s: string | Uint8Array) => {
      io.out += String(s)
      return true
    })
    vi.spyOn(process.stderr, "write").mockImplementation((s: string | Uint8Array) => {
      io.err += String(s)
      return true
    })
  })
  afterEach(() => {
    vi.restoreAllMocks()
    process.exitCode = undefined
  })
  return io
}
