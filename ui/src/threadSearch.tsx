import { useState } from "react";
import type { LoomWsClient } from "../../src/client/loomWsClient.js";
import type { SearchHitView } from "../../src/contracts/tools/searchTools.js";
import { SearchResults } from "./searchResults.js";

/**
 * Search inside the open thread only (orchestration.searchThread): its hits
 * listed under the field, each jumping to its item in the timeline (older
 * pages load until it is there); `Enter` jumps to the best, `Escape` clears.
 */
export function ThreadSearch(props: { readonly client: LoomWsClient; readonly threadId: string; readonly jump: (hit: SearchHitView) => void }) {
  const [query, setQuery] = useState("");
  const [hits, setHits] = useState<readonly SearchHitView[]>([]);
  return (
    <div className="thread-search">
      <input
        className="search"
        type="search"
        placeholder="Search this thread"
        aria-label="Search this thread"
        value={query}
        onChange={(e) => setQuery(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === "Enter" && hits[0] !== undefined) props.jump(hits[0]);
          else if (e.key === "Escape") setQuery("");
        }}
      />
      <SearchResults client={props.client} query={query} includeArchived threadId={props.threadId} jump={props.jump} onHits={setHits} />
    </div>
  );
}
