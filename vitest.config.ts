import { defaultServerConditions } from "vite"
import { defineConfig } from "vitest/config"

export default defineConfig({
  resolve: { conditions: ["@loadledger/source", ...defaultServerConditions] },
  ssr: { resolve: { conditions: ["@loadledger/source", ...defaultServerConditions] } },
  test: {
    include: ["packages/*/test/**/*.test.ts", "examples/**/*.test.ts", "test-support/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000
  }
})
