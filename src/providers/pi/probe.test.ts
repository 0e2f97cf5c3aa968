import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { PI_PACKAGE, installedCli, resolveExecutable } from "./probe.js";
import { piOptions } from "./options.js";

const instance = (options: Record<string, unknown>) => piOptions.parse({ id: "pi", driver: "pi", enabled: true, displayName: null, models: [], options });

describe("where pi is", () => {
  it("finds the installed package's CLI although the package's exports hide it", () => {
    const cli = installedCli();
    expect(cli).not.toBeNull();
    expect(cli!.endsWith(`node_modules/${PI_PACKAGE}/dist/cli.js`)).toBe(true);
    expect(existsSync(cli!)).toBe(true);
  });

  it("answers null when no node_modules folder holds it", () => {
    expect(installedCli(() => false)).toBeNull();
  });

  it("runs the package CLI with this Node, a configured binary as is, else pi on PATH", () => {
    expect(resolveExecutable(instance({}), () => "/pkg/dist/cli.js")).toEqual({ command: process.execPath, prefixArgs: ["/pkg/dist/cli.js"], display: "/pkg/dist/cli.js" });
    expect(resolveExecutable(instance({ binaryPath: "/opt/pi" }), () => "/pkg/dist/cli.js")).toEqual({ command: "/opt/pi", prefixArgs: [], display: "/opt/pi" });
    expect(resolveExecutable(instance({}), () => null)).toEqual({ command: "pi", prefixArgs: [], display: "pi (on PATH)" });
  });
});
