import { type Result, invalid, ok } from './errors.js';

export interface Page<T> {
  items: T[];
  /** Present only while more items follow. */
  cursor?: string;
}

/** Checks a page size: 1..100, default 100. */
export function pageSize(limit: number | undefined, location = 'body.limit'): Result<number> {
  if (limit === undefined) return ok(100);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) return invalid(location, 'The page size must be an integer from 1 to 100.');
  return ok(limit);
}

/**
 * One page of records ordered by id. The cursor is the last id of the page, so pages stay
 * stable while records are added or removed elsewhere in the order.
 */
export function pageById<T extends { id: string }>(sortedById: readonly T[], limit: number, cursor: string | undefined): Page<T> {
  let start = 0;
  if (cursor !== undefined && cursor !== '') {
    // Binary search for the first id after the cursor.
    let lo = 0;
    let hi = sortedById.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((sortedById[mid] as T).id <= cursor) lo = mid + 1;
      else hi = mid;
    }
    start = lo;
  }
  const items = sortedById.slice(start, start + limit);
  const last = items[items.length - 1];
  return start + limit < sortedById.length && last !== undefined ? { items, cursor: last.id } : { items };
}

export function byId(a: { id: string }, b: { id: string }): number {
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}
