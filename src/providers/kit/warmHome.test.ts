import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { moveWarmHome } from "./warmHome.js";

describe("moveWarmHome", () => {
  let dir: string;
  let warm: string;
  let home: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "loom-warm-home-"));
    warm = join(dir, ".warm-1");
    home = join(dir, "thread-home");
    mkdirSync(join(warm, "sessions"), { recursive: true });
    writeFileSync(join(warm, "state.db"), "state");
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it("moves the warm folder to the thread's home and leaves the warm path as a link to it", async () => {
    mkdirSync(home);
    writeFileSync(join(home, "leftover"), "old");
    await moveWarmHome(warm, home);
    expect(readFileSync(join(home, "state.db"), "utf8")).toBe("state");
    expect(existsSync(join(home, "leftover"))).toBe(false);
    expect(lstatSync(warm).isSymbolicLink()).toBe(true);
    expect(readlinkSync(warm)).toBe(home);
  });

  it("an agent that writes under the warm path while it moves: what it wrote joins the home and the link is made", async () => {
    await moveWarmHome(warm, home, {
      afterRename: () => {
        // The running agent creates a folder in its home again, under the old path.
        mkdirSync(join(warm, "tmp"), { recursive: true });
        writeFileSync(join(warm, "tmp", "lock"), "agent");
        writeFileSync(join(warm, "state.db"), "stale copy");
        return Promise.resolve();
      },
    });
    expect(lstatSync(warm).isSymbolicLink()).toBe(true);
    expect(readFileSync(join(home, "tmp", "lock"), "utf8")).toBe("agent");
    // The thread's home wins a clash: the moved file is kept.
    expect(readFileSync(join(home, "state.db"), "utf8")).toBe("state");
    expect(existsSync(join(home, "sessions"))).toBe(true);
  });
});
