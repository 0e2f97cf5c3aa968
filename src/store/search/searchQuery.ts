/**
 * The query language of t3_thread_search, the same on every backend: words
 * separated by spaces must all match, in any order; "double quotes" match an
 * exact phrase; a trailing `*` matches a prefix (`deploy*`). Case, accents
 * and punctuation are ignored. Nothing else is syntax, so no input is a
 * syntax error: the parsed terms are rendered as a safe backend query.
 */
export interface SearchTerm {
  readonly text: string;
  /** Quoted: the words must appear in this order, next to each other. */
  readonly phrase: boolean;
  /** The last word may be the start of a longer word. */
  readonly prefix: boolean;
}

export const MAX_SEARCH_QUERY_LENGTH = 500;
export const MAX_SEARCH_TERMS = 16;

/** A query with nothing to search for; the caller reports it as invalid_request. */
export class SearchQueryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SearchQueryError";
  }
}

const WORD = /[\p{L}\p{N}]/u;

/** Split a query into terms; throws SearchQueryError when no term has a word in it. */
export function parseSearchQuery(query: string): SearchTerm[] {
  if (query.length > MAX_SEARCH_QUERY_LENGTH) throw new SearchQueryError(`a query is at most ${MAX_SEARCH_QUERY_LENGTH} characters`);
  const terms: SearchTerm[] = [];
  for (const match of query.matchAll(/"([^"]*)"?|(\S+)/g)) {
    const quoted = match[1];
    let text = (quoted ?? match[2] ?? "").trim();
    let prefix = false;
    if (text.endsWith("*")) {
      text = text.replace(/\*+$/, "").trim();
      prefix = true;
    }
    if (!WORD.test(text)) continue;
    terms.push({ text, phrase: quoted !== undefined, prefix });
  }
  if (terms.length === 0) throw new SearchQueryError("the query has no words to search for");
  if (terms.length > MAX_SEARCH_TERMS) throw new SearchQueryError(`a query has at most ${MAX_SEARCH_TERMS} terms`);
  return terms;
}

/** The terms as an FTS5 MATCH expression: each a quoted string (a phrase), all ANDed. */
export function toFts5Match(terms: readonly SearchTerm[]): string {
  return terms.map((term) => `"${term.text.replaceAll('"', '""')}"${term.prefix ? " *" : ""}`).join(" AND ");
}

/** The words of a term as PostgreSQL lexemes for to_tsquery: letters and digits only, lower case. */
export function termWords(term: SearchTerm): string[] {
  return (term.text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((word) => word.length > 0);
}
