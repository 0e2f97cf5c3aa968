/** Model lists for `GET /v1/models` and `GET /v1beta/models`. Any model name is accepted in requests. */

export const LISTED_MODELS = ["scripted", "gpt-5", "claude-sonnet-4-5", "gemini-2.5-flash", "gemini-2.5-pro"] as const;

/** One model, for `GET /v1/models/ID` (any id exists). */
export function modelEntry(id: string): Record<string, unknown> {
  return { id, object: "model", type: "model", display_name: id, created: 0, created_at: "1970-01-01T00:00:00Z", owned_by: "loom" };
}

/** OpenAI's list shape; each entry also has Anthropic's `type`/`display_name` so either SDK can read it. */
export function openAiModelList(): Record<string, unknown> {
  const data = LISTED_MODELS.map(modelEntry);
  return { object: "list", data, has_more: false, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null };
}

export function geminiModelList(): Record<string, unknown> {
  return {
    models: LISTED_MODELS.map((id) => ({
      name: `models/${id}`,
      displayName: id,
      inputTokenLimit: 1_000_000,
      outputTokenLimit: 65_536,
      supportedGenerationMethods: ["generateContent", "streamGenerateContent", "countTokens"],
    })),
  };
}
