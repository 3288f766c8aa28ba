/**
 * What only the built-in scenarios share (identity list order and pagination, the planned count of
 * a phase). The helpers any scenario needs live in src/load/scenario/ and are exported from
 * keysim's package.
 */
import { type Json, isRecord } from '../../src/index.js';

/** Identity list items must come in ascending id order (docs/service-model.md#identities). */
export function ascendingIds(items: readonly unknown[]): string | undefined {
  let previous = '';
  for (const [i, item] of items.entries()) {
    if (!isRecord(item) || typeof item.id !== 'string' || typeof item.externalId !== 'string') return `item ${i} is not an identity: ${JSON.stringify(item)}`;
    if (item.id <= previous) return `ids out of order at item ${i}: ${previous} then ${item.id}`;
    previous = item.id;
  }
  return undefined;
}

/** The pagination rules of a list answer: `hasMore` boolean, `cursor` present exactly while more pages exist. */
export function paginationProblem(pagination: Json): string | undefined {
  if (typeof pagination.hasMore !== 'boolean') return `pagination.hasMore is not a boolean: ${JSON.stringify(pagination)}`;
  if (pagination.hasMore && (typeof pagination.cursor !== 'string' || pagination.cursor === '')) return 'hasMore is true but there is no cursor';
  if (!pagination.hasMore && pagination.cursor !== undefined) return 'the last page carries a cursor';
  return undefined;
}

/** The number of requests an open-model phase sends (src/load/plan/plan.ts: round(rate × seconds)). */
export function plannedCount(rate: number, durationMs: number): number {
  return rate > 0 && durationMs > 0 ? Math.round((rate * durationMs) / 1000) : 0;
}
