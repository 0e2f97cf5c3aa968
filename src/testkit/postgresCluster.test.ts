import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { findPostgresBinaries, PostgresUnavailableError, startPostgresCluster } from "./postgresCluster.js";

describe("findPostgresBinaries", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "loom-pgbin-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  function fakeInstall(bin: string): void {
    mkdirSync(bin, { recursive: true });
    for (const name of ["initdb", "pg_ctl", "postgres"]) writeFileSync(join(bin, name), "");
  }

  it("fails with how to install PostgreSQL when no server binaries exist", () => {
    let thrown: unknown;
    try {
      findPostgresBinaries({ PATH: join(dir, "empty") }, join(dir, "none"));
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(PostgresUnavailableError);
    expect((thrown as Error).message).toContain("apt-get install -y postgresql");
    expect((thrown as Error).message).toContain("LOOM_TEST_POSTGRES_URL");
  });

  it("picks the newest Debian major version", () => {
    fakeInstall(join(dir, "lib", "13", "bin"));
    fakeInstall(join(dir, "lib", "16", "bin"));
    mkdirSync(join(dir, "lib", "17", "bin"), { recursive: true }); // client-only: no server
    expect(findPostgresBinaries({}, join(dir, "lib"))).toBe(join(dir, "lib", "16", "bin"));
  });

  it("honours LOOM_POSTGRES_BIN, and says so when it is wrong", () => {
    fakeInstall(join(dir, "custom"));
    expect(findPostgresBinaries({ LOOM_POSTGRES_BIN: join(dir, "custom") }, join(dir, "none"))).toBe(join(dir, "custom"));
    expect(() => findPostgresBinaries({ LOOM_POSTGRES_BIN: join(dir, "missing") }, join(dir, "none"))).toThrow(/LOOM_POSTGRES_BIN/);
  });
});

describe("startPostgresCluster", () => {
  it("serves databases on 127.0.0.1 with a password, then stops and removes everything", async () => {
    const cluster = await startPostgresCluster();
    const url = new URL(await cluster.createDatabase());
    expect(url.hostname).toBe("127.0.0.1");
    expect(url.password).not.toBe("");

    const client = new pg.Client(url.toString());
    await client.connect();
    const settings = await client.query<{ name: string; setting: string }>(
      "SELECT name, setting FROM pg_settings WHERE name IN ('listen_addresses', 'unix_socket_directories', 'fsync') ORDER BY name",
    );
    expect(settings.rows).toEqual([
      { name: "fsync", setting: "off" },
      { name: "listen_addresses", setting: "127.0.0.1" },
      { name: "unix_socket_directories", setting: "" },
    ]);
    const dataDir = (await client.query<{ setting: string }>("SELECT setting FROM pg_settings WHERE name = 'data_directory'")).rows[0]!.setting;
    await client.end();

    const wrongPassword = new URL(url);
    wrongPassword.password = "wrong";
    await expect(new pg.Client(wrongPassword.toString()).connect()).rejects.toThrow(/password authentication failed/);

    await cluster.dropDatabase(url.toString());
    await cluster.stop();
    await cluster.stop();
    await expect(new pg.Client(url.toString()).connect()).rejects.toThrow(/ECONNREFUSED/);
    expect(existsSync(dataDir)).toBe(false);
  }, 120_000);
});
