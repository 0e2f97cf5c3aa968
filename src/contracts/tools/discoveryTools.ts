import { z } from "zod";

/**
 * loom_tools (issue 41): find Loom's tools, and call one, from a credential
 * whose tool profile lists only the core set (docs/mcp.md, "Tool profiles").
 */

/**
 * Which tools a credential's tools/list shows: `core` (delegate, wait, read,
 * send, answer requests, and loom_tools to reach the rest) or `full` (every
 * tool). A provider instance chooses its agents' profile (config
 * `providers[].toolProfile`); the owner is always `full`.
 */
export const ToolProfile = {
  core: "core",
  full: "full",
} as const;
export type ToolProfile = (typeof ToolProfile)[keyof typeof ToolProfile];
export const TOOL_PROFILES: readonly ToolProfile[] = [ToolProfile.core, ToolProfile.full];

/** The most JSON characters a call's arguments may take: the largest tool input (a 200,000-character message) with room to spare. */
export const MAX_CALL_ARGUMENTS_CHARS = 400_000;

export const LoomToolsInput = z
  .object({
    query: z.string().min(1).max(200).optional().describe("Words to match against tool names and descriptions (any word matches); leave out with names to list every tool"),
    names: z.array(z.string().min(1).max(128)).min(1).max(50).optional().describe("Exact tool names to describe"),
    call: z
      .object({
        name: z.string().min(1).max(128).describe("The tool to call, e.g. t3_thread_list"),
        arguments: z
          .unknown()
          .optional()
          .refine((value) => value === undefined || JSON.stringify(value).length <= MAX_CALL_ARGUMENTS_CHARS, { message: `at most ${MAX_CALL_ARGUMENTS_CHARS} characters of JSON` })
          .describe("The tool's arguments object, as its inputSchema says"),
      })
      .strict()
      .optional()
      .describe("Call this tool (listed or not) with these arguments; the answer is its result"),
  })
  .strict();
export type LoomToolsInput = z.infer<typeof LoomToolsInput>;

export const ToolDescriptionSchema = z.object({
  name: z.string(),
  description: z.string(),
  /** The tool's input JSON Schema, as tools/list shows it to a full-profile credential. */
  inputSchema: z.record(z.string(), z.unknown()),
  readOnly: z.boolean(),
  /** False when the caller's tool profile leaves the tool out of tools/list: call it through `call`. */
  listed: z.boolean(),
});
export type ToolDescription = z.infer<typeof ToolDescriptionSchema>;

export const LoomToolsOutput = z.object({
  /** The caller's tool profile. */
  profile: z.enum(ToolProfile),
  /** The matching tools (every tool when neither query nor names was given); empty for a call alone. */
  tools: z.array(ToolDescriptionSchema),
  /** Names asked for that are no tool. */
  unknownNames: z.array(z.string()),
  /** A call's result: the called tool's structuredContent. A failed call fails loom_tools with that tool's failure. */
  call: z.object({ name: z.string(), result: z.record(z.string(), z.unknown()) }).nullable(),
});
export type LoomToolsOutput = z.infer<typeof LoomToolsOutput>;
