import { callerOfScope } from "../../callerOfScope.js";
import { McpCapability } from "../../credentialRegistry.js";
import { contractTool, defineToolkit, type McpToolkit } from "../../toolkit.js";
import type { App } from "../../../app/app.js";

/** Durable workflow scripts (spec 004's t3_workflow_* family; docs/workflows.md). */
export function workflowsToolkit(app: App): McpToolkit {
  return defineToolkit("workflows", [
    contractTool("t3_workflow_start", {
      description:
        "Run a workflow script (Claude Code's workflow API) whose agent() calls are durable child threads on any provider: agent(prompt, { label, phase, schema, target: { providerInstanceId, model }, role, budget }), parallel(thunks), pipeline(items, ...stages), phase(title), args, and the library bestOfN({ task, n, targets, judges }), verify({ work, verifier, rounds }), loopUntil({ task, until, maxIterations }). Or a named workflow (.loom/workflows/<name>.js, or bestOfN, verify, loopUntil with args). It survives a server restart without repeating agent work. mode async returns the workflowId at once (you are notified with the result when it ends); mode wait returns on its end or the wait cap.",
      capability: McpCapability.orchestration,
      handler: (input, tool) => app.startWorkflow(callerOfScope(tool.scope), input, tool),
    }),
    contractTool("t3_workflow_status", {
      description: "A workflow's status, phases, each agent() step (label, phase, status, child thread, result) and its result, read from its durable journal.",
      capability: McpCapability.orchestration,
      handler: (input, tool) => Promise.resolve(app.workflowStatus(callerOfScope(tool.scope), input)),
    }),
    contractTool("t3_workflow_stop", {
      description: "Stop a workflow: it ends `stopped` and its running agent() children are stopped.",
      capability: McpCapability.orchestration,
      handler: (input, tool) => app.stopWorkflow(callerOfScope(tool.scope), input),
    }),
  ]);
}
