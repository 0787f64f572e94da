/**
 * The example router: `loadledger serve` (the CLI's command, `@loadledger/live`'s `startServe`)
 * run from the sources. Every flag of `loadledger serve --help` applies.
 *
 *   pnpm exec tsx --conditions=@loadledger/source examples/router/main.ts \
 *     --worker http://127.0.0.1:9001 --worker http://127.0.0.1:9002 --dp 2 --policy total-requests
 *
 * Bad arguments, or a port that cannot be bound, end with one line on stderr (exit 2 / 1); SIGTERM
 * or SIGINT drains the requests in flight and exits 0.
 */
import { main } from "@loadledger/cli"

process.exitCode = await main(["node", "loadledger", "serve", ...process.argv.slice(2)])
