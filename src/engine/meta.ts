/**
 * The bounds of free-form metadata (`meta` of keys and identities), in one place: requests,
 * the engine and restored snapshots all check the same limits, so whatever the service accepts
 * can be snapshotted and restored, and no stored record can make an answer unbounded.
 *
 * - depth: at most MAX_META_DEPTH levels (the object itself is level 1), so that no value can
 *   exhaust the stack of a recursive walk (serialising, cloning, comparing);
 * - size: at most MAX_META_BYTES of UTF-8 JSON per record — the production service's cap
 *   (1 MiB, enforced by its dashboard on identity metadata; its documentation asks to keep
 *   metadata under 10 KB);
 * - properties: at most MAX_META_PROPERTIES at the top level (the production schema's
 *   maxProperties for identity metadata; keysim applies it to keys too);
 * - in all: at most MAX_TOTAL_META_BYTES over every record the simulator holds, so that a
 *   snapshot or a journal start stays far below what one JSON string can hold;
 * - per list page: a page ends early once its records' metadata passes MAX_PAGE_META_BYTES.
 */
import { type Result, invalid, ok } from './errors.js';
import type { EngineState, JsonObject } from './state.js';

export const MAX_META_DEPTH = 32;
export const MAX_META_BYTES = 1_048_576;
export const MAX_META_PROPERTIES = 100;
/**
 * keysim's own bound (the production service documents none): 128 MiB of metadata in all, so a
 * snapshot stays well within what one restore request read whole (256 MiB) can carry.
 */
export const MAX_TOTAL_META_BYTES = 128 * 1_048_576;

/** A list page ends early once the metadata of its records passes this (keysim's own bound). */
export const MAX_PAGE_META_BYTES = 8 * 1_048_576;

/** UTF-8 length of a string, without encoding it. */
export function utf8Length(text: string): number {
  let bytes = text.length;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) continue;
    if (unit < 0x800) bytes += 1;
    else if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      // A surrogate pair is 4 bytes for 2 units; a lone surrogate serialises as \uXXXX.
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 2;
        i++;
      } else bytes += 2;
    } else bytes += 2;
  }
  return bytes;
}

/** How deep `value` nests, counting stops once past `limit` (so it never walks a deep value). */
export function nestingDepth(value: unknown, limit: number, depth = 1): number {
  if (depth > limit || typeof value !== 'object' || value === null) return depth;
  let deepest = depth;
  for (const child of Array.isArray(value) ? value : Object.values(value)) {
    if (typeof child !== 'object' || child === null) continue;
    deepest = Math.max(deepest, nestingDepth(child, limit, depth + 1));
    if (deepest > limit) break;
  }
  return deepest;
}

/** The stored size of a record's metadata (0 for none). Call only on checked metadata. */
export function metaBytes(meta: JsonObject | null): number {
  return meta === null ? 0 : utf8Length(JSON.stringify(meta));
}

/** What is wrong with a record's metadata, as a fragment after "meta" ("is nested …"), or its size. */
export function metaProblem(value: unknown): { problem: string; fix?: string } | { bytes: number } {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { problem: 'must be a JSON object' };
  if (nestingDepth(value, MAX_META_DEPTH) > MAX_META_DEPTH) return { problem: `is nested deeper than ${MAX_META_DEPTH} levels`, fix: 'Flatten the metadata.' };
  const properties = Object.keys(value).length;
  if (properties > MAX_META_PROPERTIES) {
    return {
      problem: `has ${properties} properties; at most ${MAX_META_PROPERTIES} are allowed at its top level`,
      fix: 'Group related values under fewer properties.',
    };
  }
  let bytes: number;
  try {
    bytes = utf8Length(JSON.stringify(value));
  } catch {
    return { problem: 'must be plain JSON' };
  }
  if (bytes > MAX_META_BYTES) {
    return {
      problem: `is ${bytes} bytes of JSON; at most ${MAX_META_BYTES} (1 MiB) are allowed per record`,
      fix: 'Keep large data elsewhere and store a reference in meta.',
    };
  }
  return { bytes };
}

/**
 * Checks one record's metadata against the per-record bounds; answers its size in bytes.
 * Messages name the bound and the size, never the content.
 */
export function checkMeta(value: unknown, location: string): Result<number> {
  const found = metaProblem(value);
  if ('bytes' in found) return ok(found.bytes);
  return invalid(location, `meta ${found.problem}.`, found.fix);
}

/**
 * Checks new metadata for a record whose current metadata is `previous` and books the change
 * in the state's total. Nothing is booked when it is refused.
 */
export function bookMeta(state: EngineState, previous: JsonObject | null, next: unknown, location: string): Result<void> {
  const checked = next === null ? ok(0) : checkMeta(next, location);
  if (!checked.ok) return checked;
  const total = state.metaBytes - metaBytes(previous) + checked.value;
  if (total > MAX_TOTAL_META_BYTES) {
    return invalid(
      location,
      `The simulator holds at most ${MAX_TOTAL_META_BYTES} bytes of metadata over all keys and identities; this meta (${checked.value} bytes) would exceed it.`,
      'Delete records you no longer need, or keep metadata smaller.',
    );
  }
  state.metaBytes = total;
  return ok(undefined);
}

/** Releases a deleted record's metadata from the state's total. */
export function releaseMeta(state: EngineState, meta: JsonObject | null): void {
  if (meta !== null) state.metaBytes = Math.max(0, state.metaBytes - metaBytes(meta));
}
