/**
 * smoke's end-of-run walk-through (scenarios/smoke.ts): every operation of OPERATIONS at least
 * once, on fixtures of its own, each answer checked against the one exact answer it can have.
 */
import {
  type ApiResponse,
  type CheckResult,
  OPERATIONS,
  type Operation,
  type ScenarioContext,
  callOutcome,
  checkResult,
  deleteQuietly,
  expectError,
  isRecord,
  notJudged,
  okData,
  okList,
  sameJson,
  shown,
} from '../../src/index.js';
import { ascendingIds, paginationProblem } from './common.js';
import { convergeBefore } from './promised.js';

/** The rate limit the walk gives the identity it creates (smoke's own identity limit). */
export interface IdentityLimit {
  name: string;
  limit: number;
  duration: number;
}

type Expectation = (response: ApiResponse) => string | undefined;

/** A step of the walk-through whose answer never came (unknown-outcome.ts): the walk stops, not judged. */
class AnswerNeverCame extends Error {
  constructor(
    readonly step: string,
    readonly why: string,
  ) {
    super(`the answer of step "${step}" never came (${why})`);
  }
}

/** Expects a 200 whose `data` passes `fn` (which returns a problem or undefined). */
const withData =
  (fn: (data: Record<string, unknown>) => string | undefined): Expectation =>
  (r) => {
    const d = okData(r);
    return typeof d === 'string' ? d : fn(d);
  };

const is = (what: string, actual: unknown, expected: unknown): string | undefined =>
  sameJson(actual, expected) ? undefined : `${what}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`;

/** The walk so far: its checks, and which operations it called. */
class Walk {
  readonly results: CheckResult[] = [];
  readonly walked = new Set<Operation>();
  constructor(readonly ctx: ScenarioContext) {}

  /** One call and its one check; the answer, for the steps after it. */
  async step(label: string, op: Operation, body: unknown, expectation: Expectation): Promise<ApiResponse> {
    const outcome = await callOutcome(this.ctx, op, body);
    this.walked.add(op);
    // Every step's answer depends on the steps before: past an unknown outcome nothing is determined.
    if (!outcome.answered) throw new AnswerNeverCame(label, outcome.why);
    const response = outcome.response;
    const problem = expectation(response);
    this.results.push(checkResult(`walk: ${label}`, problem === undefined, problem ?? `${op} answered as expected`));
    return response;
  }
}

/** A day-long window: the three ratelimit.limit calls of walkRatelimits cannot straddle a window edge unless run at midnight UTC. */
const DAY_MS = 86_400_000;

/** An API and a key with 3 credits: verified, spent, topped up, updated, deleted, then NOT_FOUND. */
async function walkKeys(walk: Walk): Promise<void> {
  const api = await walk.step(
    'apis.createApi',
    'apis.createApi',
    { name: `${walk.ctx.tag}-smoke-walk` },
    withData((d) => (typeof d.apiId === 'string' && d.apiId.startsWith('api_') ? undefined : `apiId ${String(d.apiId)}`)),
  );
  const apiId = String((okData(api) as Record<string, unknown>).apiId);

  const created = await walk.step(
    'keys.createKey',
    'keys.createKey',
    { apiId, name: `${walk.ctx.tag}-smoke-walk-key`, credits: { remaining: 3 } },
    withData((d) =>
      typeof d.keyId === 'string' && d.keyId.startsWith('key_') && typeof d.key === 'string' && d.key.length > 0
        ? undefined
        : `createKey data ${JSON.stringify(d)}`,
    ),
  );
  const keyData = okData(created);
  if (typeof keyData === 'string') throw new Error(`createKey failed: ${keyData}`);
  const keyId = String(keyData.keyId);
  const key = String(keyData.key);
  walk.ctx.onCleanup(() => deleteQuietly(walk.ctx, 'keys.deleteKey', { keyId }));

  await walk.step(
    'keys.getKey (3 credits)',
    'keys.getKey',
    { keyId },
    withData((d) => is('getKey', { keyId: d.keyId, credits: d.credits }, { keyId, credits: { remaining: 3 } })),
  );
  await walk.step(
    'keys.verifyKey cost 2 → VALID, 1 left',
    'keys.verifyKey',
    { key, credits: { cost: 2 } },
    withData((d) => is('verifyKey', [d.valid, d.code, d.keyId, d.credits], [true, 'VALID', keyId, 1])),
  );
  await walk.step(
    'keys.verifyKey cost 2 → USAGE_EXCEEDED, 1 kept',
    'keys.verifyKey',
    { key, credits: { cost: 2 } },
    withData((d) => is('verifyKey', [d.valid, d.code, d.keyId, d.credits], [false, 'USAGE_EXCEEDED', keyId, 1])),
  );
  // A region replays its debits to the database later, and a top-up adds to the database's
  // balance: under a drifting promise set the walk lets the regions converge first, so that the
  // answer is the one exact figure (under exact it goes on at once).
  await convergeBefore(walk.ctx, 'the walk tops up the key it verified');
  await walk.step(
    'keys.updateCredits increment 4 → 5',
    'keys.updateCredits',
    { keyId, operation: 'increment', value: 4 },
    withData((d) => is('updateCredits', d.remaining, 5)),
  );
  await walk.step(
    'keys.updateKey credits {remaining: 10}',
    'keys.updateKey',
    { keyId, credits: { remaining: 10 } },
    withData((d) => is('updateKey data', d, {})),
  );
  await walk.step(
    'keys.getKey (10 credits)',
    'keys.getKey',
    { keyId },
    withData((d) => is('getKey credits', d.credits, { remaining: 10 })),
  );
  await walk.step(
    'keys.deleteKey',
    'keys.deleteKey',
    { keyId },
    withData((d) => is('deleteKey data', d, {})),
  );
  await walk.step(
    'keys.verifyKey after delete → NOT_FOUND',
    'keys.verifyKey',
    { key },
    withData((d) => is('verifyKey', [d.valid, d.code], [false, 'NOT_FOUND'])),
  );
}

/** An identity with one rate limit: created, read, found by paging, updated, deleted, then 404. */
async function walkIdentities(walk: Walk, identityLimit: IdentityLimit): Promise<void> {
  const externalId = `${walk.ctx.tag}-smoke-walk-user`;
  const createdIdentity = await walk.step(
    'identities.createIdentity',
    'identities.createIdentity',
    { externalId, meta: { plan: 'free' }, ratelimits: [identityLimit] },
    withData((d) => (typeof d.identityId === 'string' && d.identityId.startsWith('id_') ? undefined : `identityId ${String(d.identityId)}`)),
  );
  const identityData = okData(createdIdentity);
  if (typeof identityData === 'string') throw new Error(`createIdentity failed: ${identityData}`);
  const identityId = String(identityData.identityId);
  walk.ctx.onCleanup(() => deleteQuietly(walk.ctx, 'identities.deleteIdentity', { identity: identityId }));

  await walk.step(
    'identities.getIdentity',
    'identities.getIdentity',
    { identity: externalId },
    withData((d) => {
      const limits = Array.isArray(d.ratelimits) ? d.ratelimits : [];
      const rl: unknown = limits[0];
      return (
        is('identity', { id: d.id, externalId: d.externalId, meta: d.meta }, { id: identityId, externalId, meta: { plan: 'free' } }) ??
        (limits.length === 1 && isRecord(rl) && typeof rl.id === 'string' && rl.id.startsWith('rl_')
          ? is('ratelimit', { name: rl.name, limit: rl.limit, duration: rl.duration }, identityLimit)
          : `ratelimits ${JSON.stringify(d.ratelimits)}`)
      );
    }),
  );

  const found = await pageToIdentity(walk, identityId, externalId);
  walk.results.push(
    checkResult('walk: listIdentities contains the new identity', found, found ? `${identityId} listed` : `${identityId} not found in any page`),
  );

  await walk.step(
    'identities.updateIdentity',
    'identities.updateIdentity',
    { identity: identityId, meta: { plan: 'pro' }, ratelimits: [] },
    withData((d) =>
      is(
        'updated identity',
        { id: d.id, externalId: d.externalId, meta: d.meta, ratelimits: d.ratelimits ?? [] },
        { id: identityId, externalId, meta: { plan: 'pro' }, ratelimits: [] },
      ),
    ),
  );
  await walk.step('identities.deleteIdentity', 'identities.deleteIdentity', { identity: identityId }, (r) =>
    r.status === 200 && isRecord(r.body) && isRecord(r.body.meta) && !('data' in r.body) ? undefined : `expected 200 with only meta, got ${shown(r)}`,
  );
  await walk.step('identities.getIdentity after delete → 404', 'identities.getIdentity', { identity: identityId }, (r) =>
    expectError(r, 404, 'identity_not_found'),
  );
}

/** Page through every identity until the new one shows up (bounded: a live workspace may be large). */
async function pageToIdentity(walk: Walk, identityId: string, externalId: string): Promise<boolean> {
  let cursor: string | undefined;
  let found = false;
  for (let page = 0; page < 100 && !found; page++) {
    const response = await walk.step(
      `identities.listIdentities page ${page + 1}`,
      'identities.listIdentities',
      cursor === undefined ? { limit: 100 } : { limit: 100, cursor },
      (r) => {
        const list = okList(r);
        return typeof list === 'string' ? list : (ascendingIds(list.items) ?? paginationProblem(list.pagination));
      },
    );
    const list = okList(response);
    if (typeof list === 'string') break;
    found = list.items.some((item) => isRecord(item) && item.id === identityId && item.externalId === externalId);
    cursor = typeof list.pagination.cursor === 'string' ? list.pagination.cursor : undefined;
    if (cursor === undefined) break;
  }
  return found;
}

/** An override of 2 a day: set, read, listed, spent by ratelimit.limit; a multiLimit; the override deleted, then 404. */
async function walkRatelimits(walk: Walk, namespace: string): Promise<void> {
  const identifier = `${walk.ctx.tag}-smoke-walk-limited`;
  const override = await walk.step(
    'ratelimit.setOverride',
    'ratelimit.setOverride',
    { namespace: namespace, identifier, limit: 2, duration: DAY_MS },
    withData((d) => (typeof d.overrideId === 'string' && d.overrideId.startsWith('rlor_') ? undefined : `overrideId ${String(d.overrideId)}`)),
  );
  const overrideId = String((okData(override) as Record<string, unknown>).overrideId);
  walk.ctx.onCleanup(() => deleteQuietly(walk.ctx, 'ratelimit.deleteOverride', { namespace: namespace, identifier }));
  const expectedOverride = { overrideId, identifier, limit: 2, duration: DAY_MS };
  await walk.step(
    'ratelimit.getOverride',
    'ratelimit.getOverride',
    { namespace: namespace, identifier },
    withData((d) => is('override', d, expectedOverride)),
  );
  await walk.step('ratelimit.listOverrides', 'ratelimit.listOverrides', { namespace: namespace, limit: 100 }, (r) => {
    const list = okList(r);
    if (typeof list === 'string') return list;
    return list.items.some((item) => sameJson(item, expectedOverride)) ? undefined : `${overrideId} not listed: ${shown(r)}`;
  });
  const request = { namespace: namespace, identifier, limit: 100, duration: 60_000 };
  for (const [i, expected] of [
    [true, 1],
    [true, 0],
    [false, 0],
  ].entries()) {
    await walk.step(
      `ratelimit.limit #${i + 1} (override 2/day)`,
      'ratelimit.limit',
      request,
      withData((d) => is('limit', [d.success, d.remaining, d.limit, d.overrideId], [expected[0], expected[1], 2, overrideId])),
    );
  }
  const multi = [{ namespace: namespace, identifier: `${walk.ctx.tag}-smoke-walk-multi`, limit: 1, duration: DAY_MS }];
  await walk.step(
    'ratelimit.multiLimit #1 → passed',
    'ratelimit.multiLimit',
    multi,
    withData((d) => is('multiLimit passed', d.passed, true)),
  );
  await walk.step(
    'ratelimit.multiLimit #2 → refused',
    'ratelimit.multiLimit',
    multi,
    withData((d) => is('multiLimit passed', d.passed, false)),
  );
  await walk.step(
    'ratelimit.deleteOverride',
    'ratelimit.deleteOverride',
    { namespace: namespace, identifier },
    withData((d) => is('deleteOverride data', d, {})),
  );
  await walk.step('ratelimit.getOverride after delete → 404', 'ratelimit.getOverride', { namespace: namespace, identifier }, (r) =>
    expectError(r, 404, 'ratelimit_override_not_found'),
  );
}

/**
 * The walk-through: every operation of OPERATIONS at least once, in an order whose answers are
 * all determined, on fixtures of its own. One check per step; a step that throws ends the walk
 * with a failed check instead of aborting the run. A step whose answer never came (a dropped
 * connection, a gateway's 504) ends it too, as not judged: what follows depends on its outcome.
 */
export async function walkThrough(ctx: ScenarioContext, namespace: string, identityLimit: IdentityLimit): Promise<CheckResult[]> {
  const walk = new Walk(ctx);
  const { results } = walk;
  try {
    await walkKeys(walk);
    await walkIdentities(walk, identityLimit);
    await walkRatelimits(walk, namespace);
  } catch (error) {
    if (error instanceof AnswerNeverCame) {
      results.push(notJudged('walk: completed', 1, `${error.why}, at step "${error.step}"; the steps after it depend on its outcome and were not run`));
      results.push(checkResult('walk: every operation called', true, `not judged: the walk-through stopped at step "${error.step}"`));
      return results;
    }
    results.push(checkResult('walk: completed', false, `the walk-through stopped: ${error instanceof Error ? error.message : String(error)}`));
  }
  const missing = OPERATIONS.filter((op) => !walk.walked.has(op));
  results.push(
    checkResult(
      'walk: every operation called',
      missing.length === 0,
      missing.length === 0 ? `all ${OPERATIONS.length} operations` : `not called: ${missing.join(', ')}`,
    ),
  );
  return results;
}
