import { describe, expect, expectTypeOf, it } from "vitest";
import type { OrchestrationState } from "../core/state.js";
import type { Orchestrator } from "../engine/orchestrator.js";
import { type App, bindApp } from "./app.js";
import type { AppContext } from "./context.js";
import type { Engine } from "./engine.js";
import type { WorkflowRunner } from "./workflows/runner.js";

/**
 * What transports hold (docs/architecture.md): the app's operations bound to
 * its context, and a few plain settings. No engine object is reachable
 * through it, by its type (tsc checks the assertions below) or at run time.
 */

type Member = App[keyof App];
type Results = Awaited<ReturnType<Extract<Member, (...args: never[]) => unknown>>>;

describe("the App transports hold", () => {
  it("has no engine, context or state member, and no operation hands one back", () => {
    expectTypeOf<App>().not.toHaveProperty("orchestrator");
    expectTypeOf<App>().not.toHaveProperty("registry");
    expectTypeOf<App>().not.toHaveProperty("state");
    expectTypeOf<Extract<Member, Engine | Orchestrator | AppContext>>().toBeNever();
    expectTypeOf<Extract<Results, Engine | Orchestrator | AppContext | Readonly<OrchestrationState>>>().toBeNever();
  });

  it("holds only bound functions and plain values, never the context's objects", () => {
    const engine = { state: {} };
    const ctx = { orchestrator: engine, environmentId: "env", clock: () => 0, schedules: { webhookMaxBodyBytes: 1024 } } as unknown as AppContext;
    const app = bindApp(ctx, {} as WorkflowRunner);
    const values = Object.values(app);
    expect(values.length).toBeGreaterThan(50);
    for (const value of values) expect(["function", "string", "number"]).toContain(typeof value);
    expect(values).not.toContain(engine);
    expect(app).toMatchObject({ environmentId: "env", webhookMaxBodyBytes: 1024 });
  });
});
