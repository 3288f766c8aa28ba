/** Named rate limits attached to keys and identities (`rl_…`), as configured on create/update. */
import { type EngineContext, newId } from './context.js';
import { type Result, invalid, ok } from './errors.js';
import { MAX_LIMIT_DURATION_MS, MIN_LIMIT_DURATION_MS } from './ratelimit.js';
import type { RateLimitRecord } from './state.js';

export interface RateLimitInput {
  name: string;
  limit: number;
  /** Window length in ms. */
  duration: number;
  /** Checked on every verification (cost 1) without being named. Default false. */
  autoApply?: boolean;
}

export interface RateLimitView {
  id: string;
  name: string;
  limit: number;
  duration: number;
  autoApply: boolean;
}

/** The empty list shared by every key and identity without rate limits (records replace their lists, never mutate them). */
export const NO_RATE_LIMITS: RateLimitRecord[] = [];

/** Checks a list of limits (names unique, limit ≥ 1, duration 1000..2 592 000 000 ms). */
export function checkRateLimits(inputs: readonly RateLimitInput[], location: string): Result<void> {
  const seen = new Set<string>();
  for (const [i, input] of inputs.entries()) {
    const at = `${location}[${i}]`;
    if (input.name.length < 1 || input.name.length > 128) return invalid(`${at}.name`, 'A rate limit name must be 1 to 128 characters.');
    if (seen.has(input.name)) return invalid(`${at}.name`, `The rate limit name "${input.name}" appears twice; names must be unique.`);
    seen.add(input.name);
    if (!Number.isSafeInteger(input.limit) || input.limit < 1) return invalid(`${at}.limit`, 'The limit must be an integer ≥ 1.');
    if (!Number.isInteger(input.duration) || input.duration < MIN_LIMIT_DURATION_MS || input.duration > MAX_LIMIT_DURATION_MS) {
      return invalid(`${at}.duration`, `The duration is in milliseconds: an integer from ${MIN_LIMIT_DURATION_MS} to ${MAX_LIMIT_DURATION_MS}.`);
    }
  }
  return ok(undefined);
}

/**
 * Builds the new set of limits from checked inputs; a name that stays keeps its `rl_` id, so
 * clients holding the id keep working across updates.
 */
export function buildRateLimits(ctx: EngineContext, inputs: readonly RateLimitInput[], previous: readonly RateLimitRecord[]): RateLimitRecord[] {
  // Most keys have none: share one empty list (records replace their lists, never mutate them).
  if (inputs.length === 0) return NO_RATE_LIMITS;
  return inputs.map((input) => ({
    id: previous.find((r) => r.name === input.name)?.id ?? newId(ctx, 'rl'),
    name: input.name,
    limit: input.limit,
    durationMs: input.duration,
    autoApply: input.autoApply ?? false,
  }));
}

export function viewRateLimit(record: RateLimitRecord): RateLimitView {
  return { id: record.id, name: record.name, limit: record.limit, duration: record.durationMs, autoApply: record.autoApply };
}
