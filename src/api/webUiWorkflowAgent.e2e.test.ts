import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type ModelServer, startModelServer } from "../modelServer/server.js";
import { ServedLoom, UI_WAIT, collectPageErrors, launchChromium, launchFromUi, reportFailedPage, screenshotDir, signIn } from "../testkit/browser.js";
import { script } from "../testkit/loomHarness.js";

/**
 * The workflow panel driven by a real agent: a parent thread on the real
 * Claude Code (bundled with the Agent SDK, its model the scripted model
 * server) is launched from the web UI in chromium, calls t3_workflow_start
 * over Loom's MCP endpoint with a two-phase script whose agent() steps run on
 * the scripted driver, and the panel on the parent's page and the sidebar's
 * marker follow the workflow from running to done. Success is read from the
 * page and from the model server's requests.
 */

const TURN_MS = 90_000;
const js = (value: unknown) => JSON.stringify(value);

const PLAN_THEN_BUILD = `
export const meta = { name: "plan-then-build", description: "Plan the change, then build it.", phases: [{ title: "Plan" }, { title: "Build" }] };
phase("Plan");
const plan = await agent(${js(script({ sleep: 1_500 }, { say: "plan: two steps" }))}, { label: "plan the change", target: { providerInstanceId: "scripted" } });
phase("Build");
const built = await agent(${js(script({ sleep: 1_500 }, { say: "built it" }))}, { label: "build the change", target: { providerInstanceId: "scripted" } });
return { plan, built };
`;

let model: ModelServer;
let loom: ServedLoom;
let browser: Browser;
let page: Page;
let errors: string[];
const shots = screenshotDir();

beforeAll(async () => {
  model = await startModelServer();
  model.setRules([
    { when: { toolAvailable: "t3_workflow_start", lastIsToolResult: false }, reply: { toolCall: { tool: "t3_workflow_start", arguments: { script: PLAN_THEN_BUILD } } }, times: 1 },
    { when: { lastIsToolResult: true }, reply: { text: "Started the workflow." } },
  ]);
  loom = await ServedLoom.start({
    providers: [
      { id: "claude", driver: "claude", options: { env: { ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: "dummy" } } },
      { id: "scripted", driver: "scripted" },
    ],
  });
  browser = await launchChromium();
  page = await (await browser.newContext({ viewport: { width: 1440, height: 900 }, colorScheme: "light" })).newPage();
  errors = collectPageErrors(page);
  await signIn(page, loom);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await loom?.stop();
  await model?.close();
});

afterEach((ctx) => reportFailedPage(ctx.task.result?.state === "fail", page, () => loom.stderr()));

describe("a workflow started by a real Claude Code, in chromium", () => {
  it(
    "shows the panel and the sidebar marker following the workflow from its first step to done",
    async () => {
      const parent = await launchFromUi(page, "Plan and build the change as a workflow.", { title: "Claude runs a workflow", provider: "claude" });
      const panel = page.locator('.timeline [data-kind="workflow"]');
      await panel.locator(".item-title", { hasText: "Workflow: plan-then-build" }).waitFor({ timeout: TURN_MS });
      await panel.getByText("Plan the change, then build it.").waitFor({ timeout: UI_WAIT });
      const mark = page.locator(`.sidebar .tree-row[data-thread-id="${parent}"] [data-testid="workflow-mark"]`);
      await panel.locator('.workflow-step[data-status="running"]', { hasText: "plan the change" }).waitFor({ timeout: UI_WAIT });
      await mark.filter({ hasText: "⚙ 0/1" }).waitFor({ timeout: UI_WAIT });
      await panel.locator('.workflow-phase[data-phase="Build"][data-status="active"]').waitFor({ timeout: UI_WAIT });
      await panel.locator('.workflow-step[data-status="running"]', { hasText: "build the change" }).waitFor({ timeout: UI_WAIT });
      await page.locator('.timeline [data-kind="workflow"][data-status="completed"]').waitFor({ timeout: UI_WAIT });
      expect(await panel.locator('.workflow-step[data-status="completed"]').count()).toBe(2);
      expect(await panel.locator(".step-provider").allInnerTexts()).toEqual(["scripted", "scripted"]);
      await mark.filter({ hasText: "⚙ done" }).waitFor({ timeout: UI_WAIT });
      await panel.scrollIntoViewIfNeeded();
      await page.screenshot({ path: join(shots, "workflow-panel-claude.png") });

      // It was the real Claude Code that started it: its model request offered Loom's tool, and its call carried the script.
      const offered = model.requests.flatMap((request) => request.normalized?.tools ?? []);
      expect(offered).toContain("mcp__t3-code__t3_workflow_start");
      await page.locator(".timeline").getByText("Started the workflow.").waitFor({ timeout: UI_WAIT });
      expect(errors).toEqual([]);
    },
    TURN_MS + 60_000,
  );
});
