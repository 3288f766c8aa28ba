import { boolean, integer, jsonObject, nullable, object, oneOf, optional, string } from '../schema.js';
import { permissionList } from './common.js';

export const emptyRequest = object({});
export const clockView = object({
  nowMs: integer({ description: 'The service clock, Unix ms.' }),
  iso: string({ description: 'The same instant as ISO-8601 UTC.' }),
  mode: string({ description: '"manual" (frozen until moved) or "system" (real time plus an offset).' }),
});
export const clockSetRequest = object({
  to: oneOf(string({ minLength: 1, maxLength: 64, description: 'ISO-8601' }), integer({ minimum: 0, description: 'Unix ms' }), 'The new time: ISO-8601 or Unix ms; never earlier than now.'),
});
export const clockAdvanceRequest = object({ byMs: integer({ minimum: 0, description: 'How far to move the clock forward, in ms.' }) });
export const namespaceCreateRequest = object({ name: string({ minLength: 1, maxLength: 255 }) });
export const namespaceDeleteRequest = object({ namespace: string({ minLength: 1, maxLength: 255, description: 'Name or rlns_ id.' }) });
export const workspaceCreateRequest = object({ name: optional(string({ minLength: 1, maxLength: 255 })) });
export const rootKeyCreateRequest = object({ permissions: permissionList });
export const apiConfigureRequest = object({
  apiId: string({ minLength: 1, maxLength: 255 }),
  keyAuth: optional(boolean('Whether the API is set up to handle keys.')),
  encryption: optional(boolean('Whether the API supports key encryption (recoverable keys).')),
});
export const vaultConfigureRequest = object({ enabled: boolean('Whether the workspace vault is set up.') });
export const apiRateLimitRequest = object({
  limit: nullable(integer({ minimum: 1, description: 'Requests per window per root key; null removes the limit.' })),
  durationMs: optional(integer({ minimum: 1, maximum: 86_400_000, description: 'Window length on the service clock; default 1000.' })),
});
export const restoreRequest = object({ snapshot: jsonObject(16, 'A snapshot taken by /_sim/snapshot.') });
