import { join } from "node:path";
import { MergeQueueReactor } from "../app/workspaces/mergeQueueReactor.js";
import { BudgetReactor } from "../engine/budgetReactor.js";
import { DelegationReactor } from "../engine/delegationReactor.js";
import { SearchProjection } from "../engine/searchProjection.js";
import { SqliteSearchIndex } from "../store/search/sqliteSearchIndex.js";
import type { ServerConfig } from "./serverConfig.js";
import type { ServerEngine } from "./serverEngine.js";
import type { StateDir } from "./stateDir.js";

/** The engine's followers of the log: delegation, budgets, the merge queue's waits, the search index. */
export interface ServerReactors {
  readonly reactor: DelegationReactor;
  readonly budgets: BudgetReactor;
  readonly mergeQueue: MergeQueueReactor;
  /** The search index projection (t3_thread_search), kept in `<state-dir>/search.db`. */
  readonly search: SearchProjection;
}

/** Built here, started once the server listens. */
export function buildReactors(dir: StateDir, setup: ServerConfig, engine: ServerEngine): ServerReactors {
  const { orchestrator } = engine;
  return {
    reactor: new DelegationReactor(orchestrator, setup.log),
    budgets: new BudgetReactor(orchestrator, Date.now, setup.log),
    mergeQueue: new MergeQueueReactor({ orchestrator }, setup.log),
    search: new SearchProjection(orchestrator, SqliteSearchIndex.open(join(dir.root, "search.db")), setup.log),
  };
}
