/**
 * The command palette's ranking. An entry's first keyword is what it is called (a path, a page's
 * label); its name is the path's last segment. A query term ranks, best first: the exact name or
 * path, a prefix of either, a substring of either, a substring of another keyword (a summary, a
 * status), then the letters in order anywhere (fuzzy). cmdk's own score weighs word starts over
 * all of this, so a summary mentioning "pipeline" beat the script named pipeline.
 */
const EXACT = 1;
const PREFIX = 0.9;
const NAME_SUBSTRING = 0.75;
const PATH_SUBSTRING = 0.7;
const OTHER_SUBSTRING = 0.5;
/** Fuzzy scores stay below every substring score: (0, FUZZY_CEILING]. */
const FUZZY_CEILING = 0.4;

/** How tightly `term`'s letters appear in order in `text`: 1 when adjacent, 0 when absent. */
function subsequence(text: string, term: string): number {
  let best = 0;
  // Every start point: the tightest window wins (few candidates, short strings).
  for (let start = text.indexOf(term[0]!); start !== -1; start = text.indexOf(term[0]!, start + 1)) {
    let at = start;
    let matched = 1;
    for (; matched < term.length; matched++) {
      at = text.indexOf(term[matched]!, at + 1);
      if (at === -1) break;
    }
    if (matched < term.length) break;
    best = Math.max(best, term.length / (at - start + 1));
  }
  return best;
}

function termScore(term: string, primary: string, name: string, others: string[]): number {
  if (name === term || primary === term) return EXACT;
  if (name.startsWith(term) || primary.startsWith(term)) return PREFIX;
  if (name.includes(term)) return NAME_SUBSTRING;
  if (primary.includes(term)) return PATH_SUBSTRING;
  if (others.some((other) => other.includes(term))) return OTHER_SUBSTRING;
  const own = subsequence(primary, term);
  if (own > 0) return (FUZZY_CEILING / 2) * (1 + own);
  const elsewhere = Math.max(0, ...others.map((other) => subsequence(other, term)));
  return elsewhere > 0 ? (FUZZY_CEILING / 4) * (1 + elsewhere) : 0;
}

/**
 * cmdk's `filter`: 0 hides the entry, higher ranks first. The query counts as one phrase ("audit
 * log") or as terms that must each match, the entry ranking by its weakest ("pal_alpha success"
 * finds that script's successful runs above the script itself), whichever scores higher.
 */
export function paletteScore(_value: string, search: string, keywords: string[] = []): number {
  const phrase = search.toLowerCase().trim().replace(/\s+/g, " ");
  if (!phrase) return 1;
  const [first = "", ...rest] = keywords.map((keyword) => keyword.toLowerCase());
  const name = first.slice(first.lastIndexOf("/") + 1);
  const whole = termScore(phrase, first, name, rest);
  const terms = phrase.split(" ");
  if (terms.length === 1) return whole;
  let each = EXACT;
  for (const term of terms) each = Math.min(each, termScore(term, first, name, rest));
  return Math.max(whole, each);
}

/**
 * The palette's groups with only their matching entries, best first, and the groups in the order
 * of their best entry (ties keep their given order). Done here rather than by cmdk, which sorts
 * the DOM before React has put back the entries an earlier search hid: Enter then opened the
 * first of them in list order, not the best match.
 */
export function rankGroups<E extends { key: string; keywords: string[] }>(
  groups: { heading: string; entries: E[] }[],
  search: string,
): { heading: string; entries: E[] }[] {
  return groups
    .map((group) => {
      const scored = group.entries
        .map((entry) => ({ entry, score: paletteScore(entry.key, search, entry.keywords) }))
        .filter((each) => each.score > 0)
        .sort((a, b) => b.score - a.score);
      return {
        heading: group.heading,
        entries: scored.map((each) => each.entry),
        best: scored[0]?.score ?? 0,
      };
    })
    .filter((group) => group.entries.length > 0)
    .sort((a, b) => b.best - a.best)
    .map(({ heading, entries }) => ({ heading, entries }));
}
