/**
 * Version 1 of the identity operations (docs/service-model.md#version-1): reads are GET with query parameters,
 * answers are direct objects, and identity references are separate identityId / externalId
 * fields. Same state as version 2.
 */
import type { IdentityView, Result } from '../../engine/index.js';
import { asData, defineRoute, type Reply } from '../route.js';
import { invalid } from '../../engine/errors.js';
import {
  createIdentityRequest,
  createIdentityResponse,
  v1DeleteIdentityRequest,
  v1GetIdentityQuery,
  v1ListIdentitiesQuery,
  v1UpdateIdentityRequest,
} from '../schemas/identities.js';
import { array, integer, object, optional, string } from '../schema.js';
import { meta } from '../schemas/common.js';

/** v1 shows `meta` and `ratelimits` always, and rate limits without their ids. */
export function v1Identity(view: IdentityView) {
  return {
    id: view.id,
    externalId: view.externalId,
    meta: view.meta ?? {},
    ratelimits: (view.ratelimits ?? []).map(({ name, limit, duration }) => ({ name, limit, duration })),
  };
}

const v1IdentityResponse = object({
  id: string(),
  externalId: string(),
  meta,
  ratelimits: array(object({ name: string(), limit: integer(), duration: integer() })),
});

function v1Data(result: Result<IdentityView>): Result<Reply> {
  return result.ok ? { ok: true, value: { data: v1Identity(result.value) } } : result;
}

const common = { style: 'v1', tag: 'v1 identities', auth: 'required' } as const;

export const v1IdentityRoutes = [
  defineRoute({
    ...common,
    method: 'POST',
    path: '/v1/identities.createIdentity',
    summary: 'Version 1: create an identity → { identityId }.',
    input: 'body',
    request: createIdentityRequest,
    response: createIdentityResponse,
    handle: ({ engine }, rootKey, input) => asData(engine.identities.createIdentity(rootKey, input)),
  }),
  defineRoute({
    ...common,
    method: 'GET',
    path: '/v1/identities.getIdentity',
    summary: 'Version 1: read an identity by ?identityId= or ?externalId=.',
    input: 'query',
    request: v1GetIdentityQuery,
    response: v1IdentityResponse,
    handle: ({ engine }, rootKey, input) => {
      if (input.identityId === undefined && input.externalId === undefined) {
        return invalid('query.identityId', 'Send identityId or externalId as a query parameter.');
      }
      return v1Data(
        engine.identities.getIdentity(rootKey, input.identityId !== undefined ? { identityId: input.identityId } : { externalId: input.externalId ?? '' }),
      );
    },
  }),
  defineRoute({
    ...common,
    method: 'GET',
    path: '/v1/identities.listIdentities',
    summary: 'Version 1: one page of identities → { identities, cursor?, total }.',
    input: 'query',
    request: v1ListIdentitiesQuery,
    response: object({ identities: array(v1IdentityResponse), cursor: optional(string()), total: integer() }),
    handle: ({ engine }, rootKey, input) => {
      const limit = input.limit === undefined ? undefined : Number(input.limit);
      if (limit !== undefined && (limit < 1 || limit > 100)) return invalid('query.limit', 'limit must be an integer from 1 to 100.');
      const result = engine.identities.listIdentities(rootKey, {
        ...(limit === undefined ? {} : { limit }),
        ...(input.cursor === undefined ? {} : { cursor: input.cursor }),
      });
      if (!result.ok) return result;
      const { identities, cursor, total } = result.value;
      const data = { identities: identities.map(v1Identity), total };
      return { ok: true, value: { data: cursor === undefined ? data : { ...data, cursor } } };
    },
  }),
  defineRoute({
    ...common,
    method: 'POST',
    path: '/v1/identities.updateIdentity',
    summary: 'Version 1: update by identityId or externalId → the identity.',
    input: 'body',
    request: v1UpdateIdentityRequest,
    response: v1IdentityResponse,
    handle: ({ engine }, rootKey, input) => {
      if (input.identityId === undefined && input.externalId === undefined) {
        return invalid('body.identityId', 'Send identityId or externalId.');
      }
      // The engine resolves identityId before externalId, as version 1 did.
      return v1Data(engine.identities.updateIdentity(rootKey, input));
    },
  }),
  defineRoute({
    ...common,
    method: 'POST',
    path: '/v1/identities.deleteIdentity',
    summary: 'Version 1: delete by identityId → {}.',
    input: 'body',
    request: v1DeleteIdentityRequest,
    response: object({}),
    handle: ({ engine }, rootKey, input) => asData(engine.identities.deleteIdentity(rootKey, input)),
  }),
];
