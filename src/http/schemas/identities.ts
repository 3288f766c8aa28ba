import type { CreateIdentityInput, IdentityView, UpdateIdentityInput } from '../../engine/index.js';
import { type Schema, array, integer, nullable, object, optional, string } from '../schema.js';
import { identityResponse, meta, rateLimitRequest } from './common.js';

const externalId = string({ minLength: 1, maxLength: 255, pattern: /^[A-Za-z0-9_.-]+$/, patternHint: 'letters, digits, "_", "." and "-"' });
const ratelimits = array(rateLimitRequest, { maxItems: 100 });
const identityRef = string({ minLength: 1, maxLength: 255, description: 'The identity id (id_…) or its externalId.' });

export const createIdentityRequest: Schema<CreateIdentityInput> = object({ externalId, meta: optional(meta), ratelimits: optional(ratelimits) });
export const createIdentityResponse = object({ identityId: string() });
export const identityRequest = object({ identity: identityRef });
export const identityView: Schema<IdentityView> = identityResponse;
export const updateIdentityRequest: Schema<UpdateIdentityInput> = object({
  identity: identityRef,
  meta: optional(nullable(meta)),
  ratelimits: optional(ratelimits),
});
export const listIdentitiesRequest = object({
  limit: optional(integer({ minimum: 1, maximum: 100 })),
  cursor: optional(string({ maxLength: 1024 })),
  search: optional(string({ maxLength: 255 })),
});

// Version 1 (docs/service-model.md#version-1): separate identityId / externalId references.
export const v1UpdateIdentityRequest = object({
  identityId: optional(string({ minLength: 1, maxLength: 255 })),
  externalId: optional(string({ minLength: 1, maxLength: 255 })),
  meta: optional(nullable(meta)),
  ratelimits: optional(ratelimits),
});
export const v1DeleteIdentityRequest = object({ identityId: string({ minLength: 1, maxLength: 255 }) });
export const v1GetIdentityQuery = object({
  identityId: optional(string({ minLength: 1, maxLength: 255 })),
  externalId: optional(string({ minLength: 1, maxLength: 255 })),
});
// Query parameters arrive as strings; the handler turns the digits into a number (1..100).
export const v1ListIdentitiesQuery = object({
  limit: optional(string({ minLength: 1, maxLength: 3, pattern: /^[0-9]+$/, patternHint: 'an integer from 1 to 100' })),
  cursor: optional(string({ maxLength: 1024 })),
});
