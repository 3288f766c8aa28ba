/** The known name nearest to a mistyped one: for "did you mean …?" after a usage error. */
import { editDistance } from '../load/scenario/index.js';

/**
 * The candidate nearest to `word`, if near enough to be a typo (a third of the word's length, at
 * least 2 edits), or one that begins with it (a flag cut short: --max-late for --max-late-share).
 */
export function nearest(word: string, candidates: readonly string[]): string | undefined {
  const w = word.toLowerCase();
  let best: { name: string; distance: number } | undefined;
  for (const name of candidates) {
    const distance = name.startsWith(w) && w.length >= 3 ? 1 : editDistance(w, name.toLowerCase());
    if (best === undefined || distance < best.distance) best = { name, distance };
  }
  return best !== undefined && best.distance <= Math.max(2, Math.floor(w.length / 3)) ? best.name : undefined;
}
