/**
 * The prompt length the proxy hands the router for an OpenAI-style request body.
 *
 * @since 0.2.0
 */

/**
 * Approximate prompt tokens of an OpenAI-style body: 1 token per 4 characters of `prompt` or of
 * the messages' text, at least 1.
 *
 * @example
 * ```ts
 * import { estimatePromptTokens } from "@loadledger/live"
 * estimatePromptTokens({ prompt: "hello world!" }) // => 3
 * estimatePromptTokens({ messages: [{ role: "user", content: "hi" }] }) // => 1
 * ```
 *
 * @category getters
 * @since 0.2.0
 */
export const estimatePromptTokens = (body: unknown): number => {
  const b = body as { prompt?: unknown; messages?: unknown }
  const text =
    typeof b?.prompt === "string"
      ? b.prompt
      : Array.isArray(b?.messages)
        ? b.messages
            .map((m: { content?: unknown }) => (typeof m?.content === "string" ? m.content : ""))
            .join("")
        : ""
  return Math.max(1, Math.ceil(text.length / 4))
}
