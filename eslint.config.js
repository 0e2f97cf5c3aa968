import js from "@eslint/js";
import tseslint from "typescript-eslint";
import { importX } from "eslint-plugin-import-x";
import { createTypeScriptImportResolver } from "eslint-import-resolver-typescript";

/**
 * The layers: each folder of src/ and the folders it may import, row by row
 * the folder table of docs/architecture.md (src/testkit/lintGuard.test.ts
 * compares them). A folder not listed may not be imported by the others.
 * Tests, contract suites, testing/ helpers and testkit/ are exempt: they wire
 * layers together on purpose.
 */
export const LAYERS = {
  contracts: [],
  core: ["contracts"],
  config: ["contracts"],
  store: ["contracts"],
  http: [],
  engine: ["contracts", "core", "store"],
  traces: ["contracts", "core"],
  telemetry: ["contracts", "core", "config", "store", "engine", "traces"],
  providers: ["contracts", "core", "config", "engine", "workspaces", "http"],
  app: ["contracts", "core", "config", "store", "engine", "providers", "workspaces", "traces"],
  mcp: ["contracts", "app", "http"],
  api: ["contracts", "app", "http"],
  workspaces: ["contracts"],
  scheduler: ["contracts", "app"],
  modelServer: ["http"],
  client: ["contracts"],
  server: ["contracts", "core", "config", "store", "http", "engine", "traces", "telemetry", "providers", "app", "mcp", "api", "workspaces", "scheduler", "modelServer"],
  cli: ["contracts", "core", "config", "store", "http", "engine", "traces", "telemetry", "providers", "app", "mcp", "api", "workspaces", "scheduler", "modelServer", "client", "server"],
  testkit: null,
};
const FOLDERS = Object.keys(LAYERS);
/**
 * The transports hold the app's bound operations (src/app/app.ts) and never
 * the app's context or its engine facade, so no engine object reaches them.
 */
const TRANSPORTS = ["api", "mcp", "scheduler"];
const layerZones = [
  ...Object.entries(LAYERS)
    .filter(([, allowed]) => allowed !== null)
    .map(([folder, allowed]) => ({
      target: `./src/${folder}`,
      from: FOLDERS.filter((other) => other !== folder && !allowed.includes(other)).map((other) => `./src/${other}`),
      message: `src/${folder}/ may import only ${allowed.length === 0 ? "nothing in src/" : allowed.join(", ")} (docs/architecture.md).`,
    })),
  ...TRANSPORTS.map((folder) => ({
    target: `./src/${folder}`,
    from: ["./src/app/context.ts", "./src/app/engine.ts"],
    message: `src/${folder}/ is a transport: it calls the app's operations (App, src/app/app.ts), never the AppContext or the engine (docs/architecture.md).`,
  })),
];

export default tseslint.config(
  // The lint fixtures break rules on purpose; lintGuard.test.ts lints them with this config.
  { ignores: ["dist/**", "dist-bench/**", "dist-test/**", "node_modules/**", "**/generated/**", "eslint.config.js", "src/testkit/lintFixtures/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { "import-x": importX },
    settings: {
      // Without extensions and parsers import-x parses no .ts file it follows, so no-cycle would see no imports at all.
      "import-x/extensions": [".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs"],
      "import-x/parsers": { "@typescript-eslint/parser": [".ts", ".tsx", ".mts", ".cts"] },
      "import-x/resolver-next": [createTypeScriptImportResolver({ project: "./tsconfig.json" })],
    },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-misused-promises": "error",
      "import-x/no-cycle": ["error", { ignoreExternal: true }],
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-imports": "error",
      "no-restricted-syntax": ["error", { selector: "ExportAllDeclaration", message: "Use named exports (STYLE.md rule 7)." }],
    },
  },
  {
    files: ["src/core/**/*.ts", "src/contracts/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        { patterns: [{ group: ["node:*", "better-sqlite3", "**/store/**", "**/engine/**", "**/providers/**"], message: "core/ and contracts/ stay pure (DESIGN.md §2)." }] },
      ],
    },
  },
  {
    files: ["src/**/*.ts"],
    ignores: ["**/*.test.ts", "src/**/testSuite*.ts", "src/**/testing/**", "src/testkit/**"],
    rules: { "import-x/no-restricted-paths": ["error", { zones: layerZones }] },
  },
  {
    // The web UI (ui/, docs/ui.md) runs in the browser: it may use only the wire contracts and the typed clients.
    files: ["ui/src/**/*.ts", "ui/src/**/*.tsx"],
    rules: {
      "import-x/no-restricted-paths": [
        "error",
        { zones: [{ target: "./ui/src", from: FOLDERS.filter((f) => f !== "contracts" && f !== "client").map((f) => `./src/${f}`), message: "ui/ may import only src/contracts and src/client (docs/ui.md)." }] },
      ],
    },
  },
  {
    // Plain Node scripts (src/providers/codex/generateTypes.mjs) are outside the TS project.
    files: ["**/*.mjs"],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      parserOptions: { projectService: false },
      globals: { process: "readonly", console: "readonly" },
    },
  },
  {
    files: ["**/*.test.ts", "src/testkit/**/*.ts", "bench/**/*.ts"],
    rules: {
      "@typescript-eslint/no-unsafe-assignment": "off",
      "@typescript-eslint/no-unsafe-member-access": "off",
      "@typescript-eslint/no-unsafe-call": "off",
      "@typescript-eslint/no-unsafe-argument": "off",
      "@typescript-eslint/no-non-null-assertion": "off",
    },
  },
);
