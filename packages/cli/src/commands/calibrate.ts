import type { Command } from "commander"

/** Registers the `calibrate` subcommand. @since 0.1.0 */
export const register = (_program: Command): void => {}
