import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CapabilitiesOutput } from "../../contracts/tools/threadTools.js";
import { toolResults } from "../../testkit/delegationHarness.js";
import { LoomHarness, script } from "../../testkit/loomHarness.js";

/**
 * orchestrator_capabilities' model lists (spec 000): short on purpose, the
 * user's custom and favorite models and the caller's own first, all current
 * models of a curated catalog or the first 8 of another, legacy models only
 * to a search, and omittedModels counting the rest.
 */

const current = Array.from({ length: 12 }, (_, i) => `m${String(i + 1).padStart(2, "0")}`);

let h: LoomHarness;
beforeAll(async () => {
  h = await LoomHarness.start({
    config: {
      providers: [
        {
          id: "big",
          driver: "scripted",
          models: current,
          favoriteModels: ["m10"],
          customModels: ["my-fine-tune"],
          options: { capabilities: { legacyModels: ["old-1", "old-2"] } },
        },
        { id: "curated", driver: "scripted", models: current.slice(0, 10), options: { capabilities: { curatedModels: true } } },
      ],
    },
  });
});
afterAll(async () => {
  await h.close();
});

const provider = (result: CapabilitiesOutput, id: string) => result.providers.find((p) => p.providerInstanceId === id)!;

describe("orchestrator_capabilities models", () => {
  it("lists custom and favorite models first, then the first 8 current ones; legacy models are omitted", async () => {
    const result = await h.owner.ok<CapabilitiesOutput>("orchestrator_capabilities", {});
    expect(provider(result, "big")).toMatchObject({ models: ["my-fine-tune", "m10", ...current.slice(0, 8)], omittedModels: 5 });
  });

  it("lists every current model of a curated catalog", async () => {
    const result = await h.owner.ok<CapabilitiesOutput>("orchestrator_capabilities", {});
    expect(provider(result, "curated")).toMatchObject({ models: current.slice(0, 10), omittedModels: 0 });
  });

  it("puts the caller's own model right after the user's models", async () => {
    const thread = await h.createThread({ target: { providerInstanceId: "big", model: "m11" }, prompt: script({ call: "orchestrator_capabilities", args: {}, as: "c" }) });
    await h.waitForEnd(thread.runId!);
    const [answer] = toolResults<CapabilitiesOutput>(h, thread.threadId, "orchestrator_capabilities");
    expect(answer!.result.inherited).toEqual({ providerInstanceId: "big", model: "m11" });
    expect(provider(answer!.result, "big")).toMatchObject({ models: ["my-fine-tune", "m10", "m11", ...current.slice(0, 8)], omittedModels: 4 });
    // On another provider the caller's model is not that provider's.
    expect(provider(answer!.result, "curated").models).toEqual(current.slice(0, 10));
  });

  it("a search finds models by name in every catalog, legacy ones included", async () => {
    const legacy = await h.owner.ok<CapabilitiesOutput>("orchestrator_capabilities", { search: "OLD" });
    expect(provider(legacy, "big")).toMatchObject({ models: ["old-1", "old-2"], omittedModels: 13 });
    expect(provider(legacy, "curated")).toMatchObject({ models: [], omittedModels: 10 });
    const byName = await h.owner.ok<CapabilitiesOutput>("orchestrator_capabilities", { search: "m1" });
    expect(provider(byName, "big").models).toEqual(["m10", "m11", "m12"]);
    expect(provider(byName, "curated").models).toEqual(["m10"]);
    expect((await h.owner.call("orchestrator_capabilities", { search: "" })).errorCode).toBe("invalid_request");
  });

  it("new work may target any catalog model: current, legacy or custom; others are model_unavailable", async () => {
    for (const model of ["m12", "old-2", "my-fine-tune"]) {
      const created = await h.owner.ok<{ threads: { model: string }[] }>("create_threads", { threads: [{ title: model, target: { providerInstanceId: "big", model } }] });
      expect(created.threads[0]!.model).toBe(model);
    }
    expect((await h.owner.call("create_threads", { threads: [{ target: { providerInstanceId: "big", model: "nope" } }] })).errorCode).toBe("model_unavailable");
  });
});
