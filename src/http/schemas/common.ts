/** Schemas shared by several groups. */
import {
  type JsonObject,
  MAX_LIMIT_DURATION_MS,
  MAX_META_BYTES,
  MAX_META_DEPTH,
  MAX_META_PROPERTIES,
  MIN_LIMIT_DURATION_MS,
  metaProblem,
} from '../../engine/index.js';
import { type Schema, array, boolean, integer, literals, nullable, object, optional, string } from '../schema.js';

export const id = (description: string) => string({ minLength: 1, maxLength: 255, description });
/** Free-form metadata, bounded as the engine bounds it (depth, properties, bytes). */
export const meta: Schema<JsonObject> = {
  test: (value) => 'bytes' in metaProblem(value),
  check(value, location, errors) {
    const found = metaProblem(value);
    if ('bytes' in found) return true;
    errors.push(found.fix === undefined ? { location, message: found.problem } : { location, message: found.problem, fix: found.fix });
    return false;
  },
  jsonSchema: () => ({
    type: 'object',
    additionalProperties: true,
    maxProperties: MAX_META_PROPERTIES,
    description: `Free-form JSON metadata: at most ${MAX_META_BYTES} bytes of JSON, ${MAX_META_PROPERTIES} top-level properties, ${MAX_META_DEPTH} levels deep.`,
  }),
};
export const durationMs = integer({ minimum: MIN_LIMIT_DURATION_MS, maximum: MAX_LIMIT_DURATION_MS, description: 'Window length in milliseconds.' });
export const permissionList = array(string({ minLength: 1, maxLength: 512 }), { maxItems: 1000 });

/** A named rate limit attached to a key or identity, as sent. */
export const rateLimitRequest = object({
  name: string({ minLength: 1, maxLength: 128 }),
  limit: integer({ minimum: 1 }),
  duration: durationMs,
  autoApply: optional(boolean('Checked on every verification (cost 1) without being named.')),
});

/** The same, as answered (with its `rl_` id). */
export const rateLimitResponse = object({
  id: string(),
  name: string(),
  limit: integer(),
  duration: integer(),
  autoApply: boolean(),
});

export const refill = object({
  interval: literals(['daily', 'monthly'] as const),
  amount: integer({ minimum: 1, description: 'The balance the key is set to at each refill.' }),
  refillDay: optional(integer({ minimum: 1, maximum: 31, description: 'Monthly only; default 1; the last day of shorter months.' })),
});

export const identityResponse = object({
  id: string(),
  externalId: string(),
  meta: optional(meta),
  ratelimits: optional(array(rateLimitResponse)),
});

export const empty = object({});

/** A nullable field that may also be omitted (updateKey's three states). */
export const clearable = <T>(inner: Parameters<typeof nullable<T>>[0]) => optional(nullable(inner));
