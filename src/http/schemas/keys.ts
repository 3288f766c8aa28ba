import {
  MAX_VERIFY_COST,
  VERIFICATION_CODES,
  type CreateKeyInput,
  type CreateKeyOutput,
  type DeleteKeyInput,
  type GetKeyInput,
  type KeyView,
  type UpdateCreditsInput,
  type UpdateCreditsOutput,
  type UpdateKeyInput,
  type VerifyKeyInput,
  type VerifyKeyOutput,
} from '../../engine/index.js';
import { type Schema, array, boolean, integer, literals, nullable, object, optional, string } from '../schema.js';
import { clearable, durationMs, id, identityResponse, meta, permissionList, rateLimitRequest, rateLimitResponse, refill } from './common.js';

const credits = object({
  remaining: optional(nullable(integer({ minimum: 0, description: 'Credits left; null = unlimited.' }))),
  refill: optional(nullable(refill)),
});

export const createKeyRequest: Schema<CreateKeyInput> = object({
  apiId: id('The API the key belongs to (api_…).'),
  prefix: optional(string({ minLength: 1, maxLength: 16, pattern: /^[A-Za-z0-9_]+$/, patternHint: 'letters, digits and "_"' })),
  name: optional(string({ minLength: 1, maxLength: 255 })),
  byteLength: optional(integer({ minimum: 16, maximum: 255 })),
  externalId: optional(string({ minLength: 1, maxLength: 255 })),
  meta: optional(meta),
  roles: optional(permissionList),
  permissions: optional(permissionList),
  expires: optional(integer({ minimum: 0, description: 'Unix ms.' })),
  credits: optional(nullable(credits)),
  ratelimits: optional(array(rateLimitRequest, { maxItems: 100 })),
  enabled: optional(boolean()),
  recoverable: optional(boolean()),
});
export const createKeyResponse: Schema<CreateKeyOutput> = object({ keyId: string(), key: string() });

const refillView = object({
  interval: literals(['daily', 'monthly'] as const),
  amount: integer(),
  refillDay: optional(integer()),
});

export const getKeyRequest: Schema<GetKeyInput> = object({ keyId: id('key_…'), decrypt: optional(boolean()) });
export const keyResponse: Schema<KeyView> = object({
  keyId: string(),
  start: string(),
  enabled: boolean(),
  createdAt: integer(),
  name: optional(string()),
  meta: optional(meta),
  expires: optional(integer()),
  permissions: optional(array(string())),
  roles: optional(array(string())),
  credits: optional(object({ remaining: nullable(integer()), refill: optional(refillView) })),
  identity: optional(identityResponse),
  ratelimits: optional(array(rateLimitResponse)),
  plaintext: optional(string()),
});

export const updateKeyRequest: Schema<UpdateKeyInput> = object({
  keyId: id('key_…'),
  name: clearable(string({ minLength: 1, maxLength: 255 })),
  externalId: clearable(string({ minLength: 1, maxLength: 255 })),
  meta: clearable(meta),
  expires: clearable(integer({ minimum: 0 })),
  credits: clearable(credits),
  ratelimits: clearable(array(rateLimitRequest, { maxItems: 100 })),
  enabled: optional(boolean()),
  roles: clearable(permissionList),
  permissions: clearable(permissionList),
});

export const deleteKeyRequest: Schema<DeleteKeyInput> = object({ keyId: id('key_…'), permanent: optional(boolean()) });

export const verifyKeyRequest: Schema<VerifyKeyInput & { migrationId?: string }> = object({
  key: string({ minLength: 1, maxLength: 1024, description: 'The key to verify.' }),
  tags: optional(array(string({ minLength: 1, maxLength: 128 }), { maxItems: 20 })),
  permissions: optional(string({ minLength: 1, maxLength: 4096, description: 'A permission query: names joined with AND / OR, parentheses.' })),
  credits: optional(object({ cost: optional(integer({ minimum: 0, maximum: MAX_VERIFY_COST })) })),
  ratelimits: optional(
    array(
      object({
        name: string({ minLength: 1, maxLength: 128 }),
        cost: optional(integer({ minimum: 0 })),
        limit: optional(integer({ minimum: 1 })),
        duration: optional(durationMs),
      }),
      { maxItems: 100 },
    ),
  ),
  migrationId: optional(string({ maxLength: 255 })),
});

export const verifyKeyResponse: Schema<VerifyKeyOutput> = object({
  valid: boolean(),
  code: literals(VERIFICATION_CODES),
  keyId: optional(string()),
  enabled: optional(boolean()),
  name: optional(string()),
  meta: optional(meta),
  expires: optional(integer()),
  credits: optional(integer()),
  permissions: optional(array(string())),
  roles: optional(array(string())),
  identity: optional(identityResponse),
  ratelimits: optional(
    array(
      object({
        id: string(),
        name: string(),
        limit: integer(),
        duration: integer(),
        reset: integer(),
        remaining: integer(),
        exceeded: boolean(),
        autoApply: boolean(),
      }),
    ),
  ),
});

export const updateCreditsRequest: Schema<UpdateCreditsInput> = object({
  keyId: id('key_…'),
  operation: literals(['set', 'increment', 'decrement'] as const),
  value: optional(nullable(integer({ minimum: 0 }))),
});
export const updateCreditsResponse: Schema<UpdateCreditsOutput> = object({
  remaining: nullable(integer()),
  refill: optional(refillView),
});
