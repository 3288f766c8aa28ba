import { type Schema, array, boolean, integer, jsonObject, nullable, number, object, oneOf, optional, string } from '../schema.js';
import { SNAPSHOT_MAX_DEPTH } from '../../engine/index.js';
import { permissionList } from './common.js';
import { DEFAULT_JOURNAL_CAPACITY, MAX_JOURNAL_CAPACITY, MAX_JOURNAL_TAKE } from '../journal.js';

export const emptyRequest = object({});
export const clockView = object({
  nowMs: integer({ description: 'The service clock, Unix ms.' }),
  iso: string({ description: 'The same instant as ISO-8601 UTC.' }),
  mode: string({ description: '"manual" (frozen until moved) or "system" (real time plus an offset).' }),
});
export const clockSetRequest = object({
  to: oneOf(
    string({ minLength: 1, maxLength: 64, description: 'ISO-8601' }),
    integer({ minimum: 0, description: 'Unix ms' }),
    'The new time: ISO-8601 or Unix ms; never earlier than now.',
  ),
});
export const clockAdvanceRequest = object({ byMs: integer({ minimum: 0, description: 'How far to move the clock forward, in ms.' }) });
/** The workspace an admin call acts in; default the operator's. */
const inWorkspace = optional(string({ minLength: 1, maxLength: 255, description: "The workspace to act in (a ws_ id); default the operator's." }));
export const namespaceCreateRequest = object({ name: string({ minLength: 1, maxLength: 255 }), workspaceId: inWorkspace });
export const namespaceDeleteRequest = object({
  namespace: string({ minLength: 1, maxLength: 255, description: 'Name or rlns_ id.' }),
  workspaceId: inWorkspace,
});
export const workspaceCreateRequest = object({ name: optional(string({ minLength: 1, maxLength: 255 })) });
export const rootKeyCreateRequest = object({ permissions: permissionList, workspaceId: inWorkspace });
export const apiConfigureRequest = object({
  apiId: string({ minLength: 1, maxLength: 255 }),
  keyAuth: optional(boolean('Whether the API is set up to handle keys.')),
  encryption: optional(boolean('Whether the API supports key encryption (recoverable keys).')),
  workspaceId: inWorkspace,
});
export const vaultConfigureRequest = object({ enabled: boolean('Whether the workspace vault is set up.'), workspaceId: inWorkspace });
export const apiRateLimitRequest = object({
  limit: nullable(integer({ minimum: 1, description: 'Requests per window per root key; null removes the limit.' })),
  durationMs: optional(integer({ minimum: 1, maximum: 86_400_000, description: 'Window length on the service clock; default 1000.' })),
});
/**
 * Where /_sim/restore reads its body whole (with --workers, or without a JSON content type) it
 * reads up to 256 MiB (other routes: the server's limit, 10 MiB by default); beyond it a JSON text
 * nears the longest string the runtime can hold. Elsewhere the body is read as it arrives, one
 * record at a time, up to the server's restoreMaxBodyBytes (restore-body.ts).
 */
export const RESTORE_MAX_BODY_BYTES = 256 * 1024 * 1024;
export const restoreRequest = object({ snapshot: jsonObject(SNAPSHOT_MAX_DEPTH, 'A snapshot taken by /_sim/snapshot.') });

/** The largest injected latency, in ms (a minute: beyond it every client has given up). */
export const MAX_FAULT_LATENCY_MS = 60_000;
const latencyBound = (description: string) => number({ minimum: 0, maximum: MAX_FAULT_LATENCY_MS, description });
const rate = (description: string) => number({ minimum: 0, maximum: 1, description });
const fixedLatency = latencyBound('A fixed added latency, ms.');
const uniformLatency = object({ min: latencyBound('Uniform: the least added latency, ms.'), max: latencyBound('Uniform: the most, ms (≥ min).') });
const normalLatency = object({
  mean: latencyBound('Normal: the mean added latency, ms.'),
  stddev: latencyBound('Normal: the standard deviation, ms (draws clamped to 0..60000).'),
});
const LATENCY_DESCRIPTION = 'Added latency before the request is executed: ms, { min, max } (uniform) or { mean, stddev } (normal).';
/** A number, or the object form its fields name (so violations point at the right field). */
const latencyMs: Schema<number | { min: number; max: number } | { mean: number; stddev: number }> = {
  check(value, location, errors) {
    if (typeof value === 'number') return fixedLatency.check(value, location, errors);
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
      const normal = Object.hasOwn(value, 'mean') || Object.hasOwn(value, 'stddev');
      return (normal ? normalLatency : uniformLatency).check(value, location, errors);
    }
    errors.push({ location, message: 'must be a number of ms, { min, max } or { mean, stddev }' });
    return false;
  },
  jsonSchema: () => ({ oneOf: [fixedLatency.jsonSchema(), uniformLatency.jsonSchema(), normalLatency.jsonSchema()], description: LATENCY_DESCRIPTION }),
};
const faultFields = {
  errorRate: rate('Share of requests answered 500 unexpected_error without being executed.'),
  dropRate: rate('Share of requests whose connection is closed without an answer, not executed (errorRate + dropRate ≤ 1).'),
  overAdmitRate: rate(
    'Share of refusals answered as admissions: a verification that should be USAGE_EXCEEDED is answered VALID (balance unchanged), and a ratelimit.limit / ratelimit.multiLimit request its window refuses is answered as admitted (nothing counted in the window).',
  ),
  skipRefillRate: rate('Share of due refills skipped (the boundary passes, the balance stays).'),
  lostDecrementRate: rate('Share of VALID verifications whose deduction is reported but not stored.'),
};
const faultOperations = array(string({ minLength: 1, maxLength: 100 }), {
  minItems: 1,
  maxItems: 100,
  description: 'Limit every fault to these operations (e.g. "keys.verifyKey"); omit for all.',
});
export const faultsSetRequest = object({
  latencyMs: optional(latencyMs),
  errorRate: optional(faultFields.errorRate),
  dropRate: optional(faultFields.dropRate),
  overAdmitRate: optional(faultFields.overAdmitRate),
  skipRefillRate: optional(faultFields.skipRefillRate),
  lostDecrementRate: optional(faultFields.lostDecrementRate),
  operations: optional(faultOperations),
});
export const faultsView = object({
  latencyMs,
  ...faultFields,
  operations: optional(faultOperations),
});
export const journalStartRequest = object({
  capacity: optional(
    integer({
      minimum: 1,
      maximum: MAX_JOURNAL_CAPACITY,
      description: `Most undrained entries kept; beyond it nothing more is recorded (default ${DEFAULT_JOURNAL_CAPACITY}).`,
    }),
  ),
});
export const journalTakeRequest = object({
  max: optional(integer({ minimum: 1, maximum: MAX_JOURNAL_TAKE, description: `Most entries to hand out (default and maximum ${MAX_JOURNAL_TAKE}).` })),
});
