/**
 * An instant as people read it in a message: Unix ms as ISO-8601 UTC, `2028-02-29T00:00:00.000Z`.
 * The one such helper of keysim (the engine's clock errors, the load runner's clock messages, the
 * checkers' witnesses and the scenarios all use it), kept in the engine because every layer may
 * import the engine. A number that is no instant (NaN, an open bound ±Infinity, or beyond
 * ±8.64e15 ms) is written as the number it is: `toISOString` would throw, and a message that
 * throws while it explains another problem hides that problem.
 */
export function iso(ms: number): string {
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? String(ms) : date.toISOString();
}
