/**
 * Paths named in git's refusals to update a working tree (read-tree,
 * checkout, merge), with LC_ALL=C messages. Used as the fallback when a
 * refusal was not foreseen by our own checks; the files it names were not written.
 */
const SINGLE_PATH_PATTERNS = [
  /Entry '(.+)' not uptodate\. Cannot merge\./g,
  /Entry '(.+)' would be overwritten by merge\. Cannot merge\./g,
  /Untracked working tree file '(.+)' would be (?:overwritten|removed) by merge\./g,
  /Updating '(.+)' would lose untracked files in it/g,
] as const;

/** The tab-indented path lines after "...would be overwritten by merge:" style headers. */
const LIST_HEADER = /following (?:untracked working tree )?files would be (?:overwritten|removed)/i;

export function parseFilesInTheWay(message: string): string[] {
  const files = new Set<string>();
  for (const pattern of SINGLE_PATH_PATTERNS) {
    for (const match of message.matchAll(pattern)) if (match[1]) files.add(match[1]);
  }
  let inList = false;
  for (const line of message.split("\n")) {
    if (LIST_HEADER.test(line)) inList = true;
    else if (inList && line.startsWith("\t")) files.add(line.slice(1));
    else inList = false;
  }
  return [...files];
}
