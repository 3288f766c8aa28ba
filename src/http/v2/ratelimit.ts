import type { LimitOutput } from '../../engine/index.js';
import { array } from '../schema.js';
import { asData, defineRoute } from '../route.js';
import { empty } from '../schemas/common.js';
import {
  limitRequest,
  limitResponse,
  listOverridesRequest,
  multiLimitRequest,
  multiLimitResponse,
  overrideRefRequest,
  overrideResponse,
  setOverrideRequest,
  setOverrideResponse,
} from '../schemas/ratelimit.js';

const common = { method: 'POST', style: 'v2', tag: 'ratelimit', input: 'body', auth: 'required' } as const;

export const ratelimitRoutes = [
  defineRoute({
    ...common,
    path: '/v2/ratelimit.limit',
    summary: 'Check and consume a rate limit (sliding window); denial is HTTP 200 with success false.',
    request: limitRequest,
    response: limitResponse,
    handle: ({ engine }, rootKey, input) => asData(engine.ratelimit.limit(rootKey, input)),
    dataText: (data) => limitOutputText(data as LimitOutput),
  }),
  defineRoute({
    ...common,
    path: '/v2/ratelimit.multiLimit',
    summary: 'Several limits at once, all or nothing (the body is a JSON array).',
    request: multiLimitRequest,
    response: multiLimitResponse,
    handle: ({ engine }, rootKey, input) => asData(engine.ratelimit.multiLimit(rootKey, input)),
  }),
  defineRoute({
    ...common,
    path: '/v2/ratelimit.setOverride',
    summary: 'Set a per-identifier override (identifier may contain *); same identifier updates it.',
    request: setOverrideRequest,
    response: setOverrideResponse,
    handle: ({ engine }, rootKey, input) => asData(engine.ratelimit.setOverride(rootKey, input)),
  }),
  defineRoute({
    ...common,
    path: '/v2/ratelimit.getOverride',
    summary: 'Read the override of an identifier (exact match).',
    request: overrideRefRequest,
    response: overrideResponse,
    handle: ({ engine }, rootKey, input) => asData(engine.ratelimit.getOverride(rootKey, input)),
  }),
  defineRoute({
    ...common,
    path: '/v2/ratelimit.listOverrides',
    summary: 'One page of the overrides of a namespace.',
    request: listOverridesRequest,
    response: array(overrideResponse),
    list: true,
    handle: ({ engine }, rootKey, input) => {
      const result = engine.ratelimit.listOverrides(rootKey, input);
      if (!result.ok) return result;
      const { overrides, cursor } = result.value;
      return { ok: true, value: { data: overrides, pagination: cursor === undefined ? { hasMore: false } : { hasMore: true, cursor } } };
    },
  }),
  defineRoute({
    ...common,
    path: '/v2/ratelimit.deleteOverride',
    summary: 'Delete the override of an identifier.',
    request: overrideRefRequest,
    response: empty,
    handle: ({ engine }, rootKey, input) => asData(engine.ratelimit.deleteOverride(rootKey, input)),
  }),
];

/**
 * `JSON.stringify` of a `ratelimit.limit` answer, written without the generic serialiser (the
 * route's hottest step after parsing): the engine sets the fields in this order, the numbers are
 * integers (JSON writes a finite number as its string form) and an override id is a JSON string.
 */
export function limitOutputText(out: LimitOutput): string {
  // JSON writes a number that is not finite as null: never in an answer, but left to JSON itself.
  if (!(Number.isFinite(out.limit) && Number.isFinite(out.remaining) && Number.isFinite(out.reset))) return JSON.stringify(out);
  const text = `{"limit":${out.limit},"remaining":${out.remaining},"reset":${out.reset},"success":${out.success}`;
  return out.overrideId === undefined ? `${text}}` : `${text},"overrideId":${JSON.stringify(out.overrideId)}}`;
}
