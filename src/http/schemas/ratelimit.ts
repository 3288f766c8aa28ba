import type { LimitInput, LimitOutput, MultiLimitEntry, OverrideRefInput, OverrideView, SetOverrideInput } from '../../engine/index.js';
import { type Schema, array, boolean, integer, object, optional, string } from '../schema.js';
import { durationMs } from './common.js';

const namespace = string({ minLength: 1, maxLength: 255, description: 'The namespace name or its id (rlns_…).' });
const identifier = string({ minLength: 1, maxLength: 255 });

export const limitRequest: Schema<LimitInput> = object({
  namespace,
  identifier,
  limit: integer({ minimum: 1 }),
  duration: durationMs,
  cost: optional(integer({ minimum: 0, description: 'Default 1; 0 checks without consuming.' })),
});
export const limitResponse: Schema<LimitOutput> = object({
  limit: integer(),
  remaining: integer(),
  reset: integer({ description: 'Unix ms at which the current window ends.' }),
  success: boolean(),
  overrideId: optional(string()),
});

export const multiLimitRequest: Schema<LimitInput[]> = array(limitRequest, { minItems: 1, maxItems: 100 });
export const multiLimitResponse: Schema<{ passed: boolean; limits: MultiLimitEntry[] }> = object({
  passed: boolean(),
  limits: array(
    object({
      namespace: string(),
      identifier: string(),
      limit: integer(),
      remaining: integer(),
      reset: integer(),
      passed: boolean(),
      overrideId: optional(string()),
    }),
  ),
});

export const setOverrideRequest: Schema<SetOverrideInput> = object({
  namespace,
  identifier: string({ minLength: 1, maxLength: 255, description: 'May contain * (any run of characters).' }),
  limit: integer({ minimum: 0 }),
  duration: durationMs,
});
export const setOverrideResponse = object({ overrideId: string() });
export const overrideRefRequest: Schema<OverrideRefInput> = object({ namespace, identifier });
export const overrideResponse: Schema<OverrideView> = object({ overrideId: string(), identifier: string(), limit: integer(), duration: integer() });
export const listOverridesRequest = object({
  namespace: optional(namespace),
  namespaceName: optional(namespace),
  cursor: optional(string({ maxLength: 1024 })),
  limit: optional(integer({ minimum: 1, maximum: 100 })),
});
