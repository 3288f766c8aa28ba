/**
 * Helpers shared by the scenarios: reading answers, making fixtures through the public API (each
 * registered for deletion), rate-limit namespaces, the simulator's clock, and end-of-run figures.
 * Kept in a subfolder so that `scenarios/*.ts` holds scenarios only.
 */
import type { ApiResponse, Operation, ScenarioContext, SimulatorAdmin } from '../../src/load/scenario.js';
import type { CheckResult, OperationStats } from '../../src/report/model.js';

export type Json = Record<string, unknown>;

export function isRecord(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function isInt(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value);
}

/** A short rendering of an answer for check messages. */
export function shown(response: ApiResponse): string {
  const text = JSON.stringify(response.body) ?? 'no body';
  return `${response.status} ${text.length > 240 ? `${text.slice(0, 240)}…` : text}`;
}

/** `data` of a 200 answer that is an object, or a message saying what was wrong. */
export function okData(response: ApiResponse): Json | string {
  if (response.status !== 200) return `expected 200, got ${shown(response)}`;
  if (!isRecord(response.body) || !isRecord(response.body.data)) return `expected {data: {…}}, got ${shown(response)}`;
  return response.body.data;
}

/** `data` of a 200 answer that is an array (list operations), with the body's pagination. */
export function okList(response: ApiResponse): { items: unknown[]; pagination: Json } | string {
  if (response.status !== 200) return `expected 200, got ${shown(response)}`;
  const body = response.body;
  if (!isRecord(body) || !Array.isArray(body.data)) return `expected {data: […]}, got ${shown(response)}`;
  return { items: body.data, pagination: isRecord(body.pagination) ? body.pagination : {} };
}

/** Undefined when the answer is the error `status` whose type ends in `typeSuffix`. */
export function expectError(response: ApiResponse, status: number, typeSuffix: string): string | undefined {
  if (response.status !== status) return `expected ${status} ${typeSuffix}, got ${shown(response)}`;
  const error = isRecord(response.body) ? response.body.error : undefined;
  if (!isRecord(error) || typeof error.type !== 'string' || !error.type.endsWith(`/${typeSuffix}`)) {
    return `expected an error of type …/${typeSuffix}, got ${shown(response)}`;
  }
  return undefined;
}

/** Compares JSON values structurally (key order ignored). */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => sameJson(x, b[i]));
  if (isRecord(a) && isRecord(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => k in b && sameJson(a[k], b[k]));
  }
  return false;
}

/** Identity list items must come in ascending id order (docs/service-model.md#identities). */
export function ascendingIds(items: readonly unknown[]): string | undefined {
  let previous = '';
  for (const [i, item] of items.entries()) {
    if (!isRecord(item) || typeof item.id !== 'string' || typeof item.externalId !== 'string') return `item ${i} is not an identity: ${JSON.stringify(item)}`;
    if (item.id <= previous) return `ids out of order at item ${i}: ${previous} then ${item.id}`;
    previous = item.id;
  }
  return undefined;
}

/** The pagination rules of a list answer: `hasMore` boolean, `cursor` present exactly while more pages exist. */
export function paginationProblem(pagination: Json): string | undefined {
  if (typeof pagination.hasMore !== 'boolean') return `pagination.hasMore is not a boolean: ${JSON.stringify(pagination)}`;
  if (pagination.hasMore && (typeof pagination.cursor !== 'string' || pagination.cursor === '')) return 'hasMore is true but there is no cursor';
  if (!pagination.hasMore && pagination.cursor !== undefined) return 'the last page carries a cursor';
  return undefined;
}

export function checkResult(name: string, passed: boolean, detail: string): CheckResult {
  return { name, passed, detail };
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Runs `fn` over `items` with at most `limit` calls in flight; results in input order. */
export async function inParallel<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      out[index] = await fn(items[index] as T, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/** Fixture calls in flight at once while setting up (well under the service's own limits). */
export const SETUP_CONCURRENCY = 16;

/**
 * Calls an operation whose target may already be gone (deleted by the load, or with its namespace,
 * whatever order the cleanups run in): 200, 404 and 410 are all fine.
 */
export async function deleteQuietly(ctx: ScenarioContext, op: Operation, body: unknown): Promise<void> {
  const response = await ctx.api.call(op, body);
  if (response.status !== 200 && response.status !== 404 && response.status !== 410) throw new Error(`cleanup ${op} ${JSON.stringify(body)} answered ${shown(response)}`);
}

/**
 * An API named after the run. The public operations include no API deletion, so on a live target
 * the (then empty) API stays behind; its name says which run made it.
 */
export async function createTaggedApi(ctx: ScenarioContext, purpose: string): Promise<string> {
  const name = `${ctx.tag}-${purpose}`;
  const { apiId } = await ctx.api.data<{ apiId: string }>('apis.createApi', { name });
  if (ctx.target.kind === 'live') ctx.log(`created API "${name}" (${apiId}); the service has no operation to delete an API, so it stays (empty once its keys are deleted)`);
  return apiId;
}

export interface CreatedKey {
  keyId: string;
  key: string;
}

/** keys.createKey, with its deletion registered. */
export async function createKey(ctx: ScenarioContext, body: Json): Promise<CreatedKey> {
  const created = await ctx.api.data<CreatedKey>('keys.createKey', body);
  ctx.onCleanup(() => deleteQuietly(ctx, 'keys.deleteKey', { keyId: created.keyId }));
  return { keyId: created.keyId, key: created.key };
}

/** identities.createIdentity, with its deletion registered. */
export async function createIdentity(ctx: ScenarioContext, body: Json & { externalId: string }): Promise<string> {
  const { identityId } = await ctx.api.data<{ identityId: string }>('identities.createIdentity', body);
  ctx.onCleanup(() => deleteQuietly(ctx, 'identities.deleteIdentity', { identity: identityId }));
  return identityId;
}

/**
 * A rate-limit namespace for the run. Production has no public operation that creates one, so:
 * - on a simulator (the embedded one, or `keysim serve` reached over a URL), the admin surface
 *   creates `<tag>-<suffix>` and deletes it at the end;
 * - on a live target, the scenario cannot create it. It uses `KEYSIM_NAMESPACE` when set (a
 *   namespace made beforehand, e.g. in the dashboard), else `<tag>-<suffix>`, and probes it with a
 *   cost-0 limit (which consumes nothing). A target that creates namespaces on first use
 *   (production) then works whatever the compat setting; one that follows the interface document
 *   answers 404, and the run stops with a message saying which namespace must exist. This probe
 *   is what makes the scenario independent of `compat`.
 */
export async function ensureNamespace(ctx: ScenarioContext, suffix: string): Promise<string> {
  const own = `${ctx.tag}-${suffix}`;
  const admin = ctx.admin;
  if (admin !== undefined) {
    await admin.createNamespace(own);
    ctx.onCleanup(() => admin.deleteNamespace(own));
    return own;
  }
  const given = process.env.KEYSIM_NAMESPACE;
  const namespace = given !== undefined && given !== '' ? given : own;
  const probe = await ctx.api.call('ratelimit.limit', { namespace, identifier: `${ctx.tag}-probe`, limit: 1, duration: 1000, cost: 0 });
  if (probe.status === 404) {
    const message =
      `the rate-limit namespace "${namespace}" does not exist on the target and the public API cannot create one: ` +
      'create it beforehand and name it in KEYSIM_NAMESPACE';
    ctx.log(message);
    throw new Error(message);
  }
  if (probe.status !== 200) throw new Error(`probing the rate-limit namespace "${namespace}" answered ${shown(probe)}`);
  ctx.log(
    given !== undefined && given !== ''
      ? `using the rate-limit namespace "${namespace}" from KEYSIM_NAMESPACE`
      : `the target created the rate-limit namespace "${namespace}" on first use; there is no public operation to delete it, so it stays`,
  );
  return namespace;
}

/** The admin surface of a scenario that `requires: ['clock']` (the runner skips it on a live target). */
export function requireAdmin(ctx: ScenarioContext, scenario: string): SimulatorAdmin {
  if (ctx.admin === undefined) throw new Error(`${scenario} moves the service clock, which only the simulator allows`);
  return ctx.admin;
}

/** Moves the service clock to `toMs`; fails, saying why, if the clock is already past it. */
export async function moveClockTo(admin: SimulatorAdmin, toMs: number): Promise<number> {
  const nowMs = await admin.clockNow();
  if (toMs < nowMs) {
    throw new Error(`the service clock is at ${new Date(nowMs).toISOString()}, already past the planned ${new Date(toMs).toISOString()} (it never goes back)`);
  }
  return toMs === nowMs ? nowMs : admin.clockSet(toMs);
}

export const iso = (ms: number): string => new Date(ms).toISOString();

/** The number of requests an open-model phase sends (src/load/plan.ts: round(rate × seconds)). */
export function plannedCount(rate: number, durationMs: number): number {
  return rate > 0 && durationMs > 0 ? Math.round((rate * durationMs) / 1000) : 0;
}

export function codeCount(stats: OperationStats | undefined, code: string): number {
  return stats?.codes[code] ?? 0;
}

export function statusCount(stats: OperationStats | undefined, status: number): number {
  return stats?.statuses[String(status)] ?? 0;
}

/** Requests of an operation that got no HTTP answer (their effect on the service is unknown); part of `requests`. */
export function transportErrors(stats: OperationStats | undefined): number {
  if (stats === undefined) return 0;
  const t = stats.transportErrors;
  return t.timeout + t.reset + t.refused + t.other;
}

/**
 * Requests of an operation cut off at the end of a closed-model phase: sent, answer abandoned, so
 * their effect on the service is unknown too. Not part of `requests`, not errors; 0 in the open model.
 */
export function cutOff(stats: OperationStats | undefined): number {
  return stats?.cutOff ?? 0;
}

/** Requests of an operation whose effect on the service is unknown: transport errors and cut off. */
export function withoutAnswer(stats: OperationStats | undefined): number {
  return transportErrors(stats) + cutOff(stats);
}

/** `n requests without answer`, saying how many of them were cut off at a phase's end. */
export function withoutAnswerText(lost: number, cut: number, noun = 'requests without answer'): string {
  return `${lost} ${noun}${cut > 0 ? ` (${cut} cut off at the end of a closed-model phase)` : ''}`;
}

/** Verification codes of an operation other than the listed ones, e.g. "NOT_FOUND×2". */
export function unexpectedCodes(stats: OperationStats | undefined, allowed: readonly string[]): string[] {
  return Object.entries(stats?.codes ?? {})
    .filter(([code, n]) => n > 0 && !allowed.includes(code))
    .map(([code, n]) => `${code}×${n}`);
}
