import { usePostgresDatabase } from "../../testkit/postgresTestCluster.js";
import { PostgresSearchIndex } from "./postgresSearchIndex.js";
import { searchIndexContract } from "./testSuiteSearchIndex.js";

const database = usePostgresDatabase();
let schemas = 0;

searchIndexContract("PostgreSQL tsvector", async () => {
  const schema = `search_${++schemas}`;
  const url = database().url;
  return { index: await PostgresSearchIndex.open(url, { schema }), reopen: () => PostgresSearchIndex.open(url, { schema }) };
});
