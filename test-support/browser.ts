/**
 * Headless Chromium for tests, from the system's package (Debian `chromium`), driven by
 * playwright-core (which downloads no browser). `chromiumPath()` is undefined when it is absent.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type BrowserContext, chromium } from "playwright-core"

const CANDIDATES = [process.env.LOADLEDGER_CHROMIUM, "/usr/bin/chromium", "/usr/bin/chromium-browser"]

/** The Chromium executable to test with, or undefined when none is installed. */
export const chromiumPath = (): string | undefined =>
  CANDIDATES.find((p): p is string => p !== undefined && p !== "" && existsSync(p))

/**
 * Launch headless Chromium with a fresh profile (`--user-data-dir`, passed the way playwright
 * wants it) and no network side-traffic; `close()` removes the profile.
 */
export const launchChromium = async (viewport: {
  width: number
  height: number
}): Promise<{ context: BrowserContext; close: () => Promise<void> }> => {
  const executablePath = chromiumPath()
  if (executablePath === undefined) throw new Error("no chromium: apt-get install -y chromium")
  const profile = mkdtempSync(join(tmpdir(), "loadledger-chromium-"))
  const context = await chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    viewport,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync"
    ]
  })
  return {
    context,
    close: async () => {
      await context.close()
      rmSync(profile, { recursive: true, force: true })
    }
  }
}
