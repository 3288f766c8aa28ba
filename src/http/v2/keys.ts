import { asData, defineRoute } from '../route.js';
import { empty } from '../schemas/common.js';
import {
  createKeyRequest,
  createKeyResponse,
  deleteKeyRequest,
  getKeyRequest,
  keyResponse,
  updateCreditsRequest,
  updateCreditsResponse,
  updateKeyRequest,
  verifyKeyRequest,
  verifyKeyResponse,
} from '../schemas/keys.js';
import type { VerifyKeyOutput } from '../../engine/index.js';
import { verifyKeyOutputText } from './verify-answer.js';

const common = { method: 'POST', style: 'v2', tag: 'keys', input: 'body' } as const;

export const keyRoutes = [
  defineRoute({
    ...common,
    path: '/v2/keys.createKey',
    summary: 'Create a key; the plaintext is returned once.',
    auth: 'required',
    request: createKeyRequest,
    response: createKeyResponse,
    handle: ({ engine }, rootKey, input) => asData(engine.keys.createKey(rootKey, input)),
  }),
  defineRoute({
    ...common,
    path: '/v2/keys.getKey',
    summary: 'Read a key (never its plaintext unless recoverable and decrypt is set).',
    auth: 'required',
    request: getKeyRequest,
    response: keyResponse,
    handle: ({ engine }, rootKey, input) => asData(engine.keys.getKey(rootKey, input)),
  }),
  defineRoute({
    ...common,
    path: '/v2/keys.updateKey',
    summary: 'Update a key: omitted = unchanged, null = cleared, value = set.',
    auth: 'required',
    request: updateKeyRequest,
    response: empty,
    handle: ({ engine }, rootKey, input) => asData(engine.keys.updateKey(rootKey, input)),
  }),
  defineRoute({
    ...common,
    path: '/v2/keys.deleteKey',
    summary: 'Delete a key; it then verifies NOT_FOUND.',
    auth: 'required',
    request: deleteKeyRequest,
    response: empty,
    handle: ({ engine }, rootKey, input) => asData(engine.keys.deleteKey(rootKey, input)),
  }),
  defineRoute({
    ...common,
    path: '/v2/keys.verifyKey',
    summary: 'Verify a key: a refusal is HTTP 200 with valid false and a code.',
    auth: 'optional',
    request: verifyKeyRequest,
    response: verifyKeyResponse,
    // The engine ignores migrationId: pass the input as it is unless it must be stripped (no copy per call).
    handle: ({ engine }, rootKey, input) => asData(engine.keys.verifyKey(rootKey, input.migrationId === undefined ? input : withoutMigrationId(input))),
    dataText: (data) => verifyKeyOutputText(data as VerifyKeyOutput),
  }),
  defineRoute({
    ...common,
    path: '/v2/keys.updateCredits',
    summary: 'Set, increment or decrement (never below 0) the credits of a key.',
    auth: 'required',
    request: updateCreditsRequest,
    response: updateCreditsResponse,
    handle: ({ engine }, rootKey, input) => asData(engine.keys.updateCredits(rootKey, input)),
  }),
];

function withoutMigrationId<T extends { migrationId?: string }>({ migrationId: _ignored, ...rest }: T): Omit<T, 'migrationId'> {
  return rest;
}
