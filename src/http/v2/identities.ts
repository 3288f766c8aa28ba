import { array } from '../schema.js';
import { asData, asMetaOnly, defineRoute } from '../route.js';
import {
  createIdentityRequest,
  createIdentityResponse,
  identityRequest,
  identityView,
  listIdentitiesRequest,
  updateIdentityRequest,
} from '../schemas/identities.js';

const common = { method: 'POST', style: 'v2', tag: 'identities', input: 'body', auth: 'required' } as const;

export const identityRoutes = [
  defineRoute({
    ...common,
    path: '/v2/identities.createIdentity',
    summary: 'Create an identity; 409 if a live one has the same externalId.',
    request: createIdentityRequest,
    response: createIdentityResponse,
    handle: ({ engine }, rootKey, input) => asData(engine.identities.createIdentity(rootKey, input)),
  }),
  defineRoute({
    ...common,
    path: '/v2/identities.getIdentity',
    summary: 'Read an identity by id or externalId.',
    request: identityRequest,
    response: identityView,
    handle: ({ engine }, rootKey, input) => asData(engine.identities.getIdentity(rootKey, input)),
  }),
  defineRoute({
    ...common,
    path: '/v2/identities.listIdentities',
    summary: 'One page of identities, ordered by id; pass pagination.cursor for the next.',
    request: listIdentitiesRequest,
    response: array(identityView),
    list: true,
    handle: ({ engine }, rootKey, { search: _unsupported, ...input }) => {
      const result = engine.identities.listIdentities(rootKey, input);
      if (!result.ok) return result;
      const { identities, cursor } = result.value;
      return { ok: true, value: { data: identities, pagination: cursor === undefined ? { hasMore: false } : { hasMore: true, cursor } } };
    },
  }),
  defineRoute({
    ...common,
    path: '/v2/identities.updateIdentity',
    summary: 'Replace the meta and/or rate limits of an identity.',
    request: updateIdentityRequest,
    response: identityView,
    handle: ({ engine }, rootKey, input) => asData(engine.identities.updateIdentity(rootKey, input)),
  }),
  defineRoute({
    ...common,
    path: '/v2/identities.deleteIdentity',
    summary: 'Delete an identity permanently (answers only meta).',
    request: identityRequest,
    problemJsonErrors: true,
    handle: ({ engine }, rootKey, input) => asMetaOnly(engine.identities.deleteIdentity(rootKey, input)),
  }),
];
