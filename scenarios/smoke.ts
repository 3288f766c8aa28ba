/**
 * smoke: every operation once, in a fixed order, with its exact expected answer (end-of-run
 * walk-through), after a short load of read-only calls whose answers are also exact — nothing in
 * the load changes state, so concurrency cannot make any answer uncertain.
 */
import {
  type MixEntry,
  type ScenarioContext,
  createIdentity,
  createKey,
  createTaggedApi,
  defineScenario,
  deleteQuietly,
  ensureNamespace,
  expectError,
  isInt,
  isRecord,
  okData,
  okList,
  sameJson,
  shown,
} from '../src/index.js';
import { ascendingIds, paginationProblem } from './support/common.js';
import { walkThrough } from './support/smoke-walk.js';

const KEY_CREDITS = 100;
const OVERRIDE = { limit: 7, duration: 60_000 };
const PLAIN_LIMIT = { limit: 50, duration: 60_000 };
const IDENTITY_LIMIT = { name: 'requests', limit: 100, duration: 60_000 };

interface SmokeFixtures {
  apiId: string;
  keyId: string;
  key: string;
  unlimitedKeyId: string;
  unlimitedKey: string;
  identityId: string;
  externalId: string;
  identityMeta: { plan: string; purpose: string };
  namespace: string;
  overrideIdentifier: string;
  overrideId: string;
  plainIdentifier: string;
  missingExternalId: string;
}

/** Checks a cost-0 limit answer: nothing consumed, so remaining is the whole limit. */
function untouchedLimit(data: Record<string, unknown>, limit: number, overrideId: string | undefined): string | undefined {
  if (data.limit !== limit || data.remaining !== limit || data.success !== true)
    return `expected limit ${limit}, remaining ${limit}, success: got ${JSON.stringify(data)}`;
  if (data.overrideId !== overrideId) return `expected overrideId ${overrideId ?? 'absent'}, got ${String(data.overrideId)}`;
  if (!isInt(data.reset)) return `reset is not an integer: ${JSON.stringify(data)}`;
  return undefined;
}

function identityProblem(data: unknown, f: SmokeFixtures): string | undefined {
  if (!isRecord(data)) return `expected an identity, got ${JSON.stringify(data)}`;
  if (data.id !== f.identityId || data.externalId !== f.externalId)
    return `expected ${f.identityId}/${f.externalId}, got ${String(data.id)}/${String(data.externalId)}`;
  if (!sameJson(data.meta, f.identityMeta)) return `meta ${JSON.stringify(data.meta)} is not ${JSON.stringify(f.identityMeta)}`;
  const limits = data.ratelimits;
  const only: unknown = Array.isArray(limits) && limits.length === 1 ? limits[0] : undefined;
  if (
    !isRecord(only) ||
    typeof only.id !== 'string' ||
    !only.id.startsWith('rl_') ||
    only.name !== IDENTITY_LIMIT.name ||
    only.limit !== IDENTITY_LIMIT.limit ||
    only.duration !== IDENTITY_LIMIT.duration
  ) {
    return `ratelimits ${JSON.stringify(limits)} are not the one created`;
  }
  return undefined;
}

const mix: ReadonlyArray<MixEntry<SmokeFixtures>> = [
  {
    name: 'getKey',
    weight: 2,
    build: (f) => ({ op: 'keys.getKey', body: { keyId: f.keyId } }),
    check(r, f) {
      const d = okData(r);
      if (typeof d === 'string') return d;
      if (d.keyId !== f.keyId) return `keyId ${String(d.keyId)}, expected ${f.keyId}`;
      if (!isRecord(d.credits) || d.credits.remaining !== KEY_CREDITS || d.credits.refill !== undefined)
        return `credits ${JSON.stringify(d.credits)}, expected {remaining: ${KEY_CREDITS}}`;
      return undefined;
    },
  },
  {
    name: 'verifyKey cost 0',
    weight: 3,
    build: (f) => ({ op: 'keys.verifyKey', body: { key: f.key, credits: { cost: 0 } } }),
    check(r, f) {
      const d = okData(r);
      if (typeof d === 'string') return d;
      if (d.valid !== true || d.code !== 'VALID' || d.keyId !== f.keyId || d.credits !== KEY_CREDITS)
        return `expected VALID with ${KEY_CREDITS} credits left, got ${shown(r)}`;
      return undefined;
    },
  },
  {
    name: 'verifyKey unlimited',
    weight: 3,
    build: (f) => ({ op: 'keys.verifyKey', body: { key: f.unlimitedKey } }),
    check(r, f) {
      const d = okData(r);
      if (typeof d === 'string') return d;
      if (d.valid !== true || d.code !== 'VALID' || d.keyId !== f.unlimitedKeyId || 'credits' in d) return `expected VALID without credits, got ${shown(r)}`;
      return undefined;
    },
  },
  {
    name: 'verifyKey unknown',
    weight: 1,
    build: (f) => ({ op: 'keys.verifyKey', body: { key: `${f.key}x` } }),
    check(r) {
      const d = okData(r);
      if (typeof d === 'string') return d;
      return d.valid === false && d.code === 'NOT_FOUND' ? undefined : `expected NOT_FOUND, got ${shown(r)}`;
    },
  },
  {
    name: 'getIdentity by externalId',
    weight: 2,
    build: (f) => ({ op: 'identities.getIdentity', body: { identity: f.externalId } }),
    check: (r, f) => {
      const d = okData(r);
      return typeof d === 'string' ? d : identityProblem(d, f);
    },
  },
  {
    name: 'getIdentity by id',
    weight: 1,
    build: (f) => ({ op: 'identities.getIdentity', body: { identity: f.identityId } }),
    check: (r, f) => {
      const d = okData(r);
      return typeof d === 'string' ? d : identityProblem(d, f);
    },
  },
  {
    name: 'getIdentity missing',
    weight: 1,
    build: (f) => ({ op: 'identities.getIdentity', body: { identity: f.missingExternalId } }),
    check: (r) => expectError(r, 404, 'identity_not_found'),
  },
  {
    name: 'listIdentities',
    weight: 1,
    build: () => ({ op: 'identities.listIdentities', body: { limit: 100 } }),
    check(r) {
      const list = okList(r);
      if (typeof list === 'string') return list;
      return list.items.length > 100 ? `${list.items.length} items for limit 100` : (ascendingIds(list.items) ?? paginationProblem(list.pagination));
    },
  },
  {
    name: 'limit override cost 0',
    weight: 2,
    build: (f) => ({ op: 'ratelimit.limit', body: { namespace: f.namespace, identifier: f.overrideIdentifier, ...PLAIN_LIMIT, cost: 0 } }),
    check(r, f) {
      const d = okData(r);
      return typeof d === 'string' ? d : untouchedLimit(d, OVERRIDE.limit, f.overrideId);
    },
  },
  {
    name: 'limit plain cost 0',
    weight: 2,
    build: (f) => ({ op: 'ratelimit.limit', body: { namespace: f.namespace, identifier: f.plainIdentifier, ...PLAIN_LIMIT, cost: 0 } }),
    check(r) {
      const d = okData(r);
      return typeof d === 'string' ? d : untouchedLimit(d, PLAIN_LIMIT.limit, undefined);
    },
  },
  {
    name: 'multiLimit cost 0',
    weight: 1,
    build: (f) => ({
      op: 'ratelimit.multiLimit',
      body: [
        { namespace: f.namespace, identifier: f.overrideIdentifier, ...PLAIN_LIMIT, cost: 0 },
        { namespace: f.namespace, identifier: f.plainIdentifier, ...PLAIN_LIMIT, cost: 0 },
      ],
    }),
    check(r, f) {
      const d = okData(r);
      if (typeof d === 'string') return d;
      const limits: unknown[] = Array.isArray(d.limits) ? d.limits : [];
      const [first, second] = limits;
      if (d.passed !== true || limits.length !== 2 || !isRecord(first) || !isRecord(second)) return `expected passed with two limits, got ${shown(r)}`;
      if (first.limit !== OVERRIDE.limit || first.remaining !== OVERRIDE.limit || first.passed !== true || first.overrideId !== f.overrideId)
        return `first limit ${JSON.stringify(first)}`;
      if (second.limit !== PLAIN_LIMIT.limit || second.remaining !== PLAIN_LIMIT.limit || second.passed !== true || 'overrideId' in second)
        return `second limit ${JSON.stringify(second)}`;
      return undefined;
    },
  },
  {
    name: 'getOverride',
    weight: 1,
    build: (f) => ({ op: 'ratelimit.getOverride', body: { namespace: f.namespace, identifier: f.overrideIdentifier } }),
    check(r, f) {
      const d = okData(r);
      if (typeof d === 'string') return d;
      const expected = { overrideId: f.overrideId, identifier: f.overrideIdentifier, ...OVERRIDE };
      return sameJson(d, expected) ? undefined : `expected ${JSON.stringify(expected)}, got ${JSON.stringify(d)}`;
    },
  },
  {
    name: 'listOverrides',
    weight: 1,
    build: (f) => ({ op: 'ratelimit.listOverrides', body: { namespace: f.namespace } }),
    check(r, f) {
      const list = okList(r);
      if (typeof list === 'string') return list;
      const expected = { overrideId: f.overrideId, identifier: f.overrideIdentifier, ...OVERRIDE };
      return list.items.some((item) => sameJson(item, expected)) ? undefined : `the override ${f.overrideId} is not listed: ${shown(r)}`;
    },
  },
];

async function setup(ctx: ScenarioContext): Promise<SmokeFixtures> {
  // The namespace first: on a live target without it the run stops before making anything.
  const namespace = await ensureNamespace(ctx, 'smoke');
  const apiId = await createTaggedApi(ctx, 'smoke');
  const limited = await createKey(ctx, { apiId, name: `${ctx.tag}-smoke-limited`, credits: { remaining: KEY_CREDITS } });
  const unlimited = await createKey(ctx, { apiId, name: `${ctx.tag}-smoke-unlimited` });
  const externalId = `${ctx.tag}-smoke-user`;
  const identityMeta = { plan: 'free', purpose: 'smoke' };
  const identityId = await createIdentity(ctx, { externalId, meta: identityMeta, ratelimits: [IDENTITY_LIMIT] });
  const overrideIdentifier = `${ctx.tag}-smoke-vip`;
  const { overrideId } = await ctx.api.data<{ overrideId: string }>('ratelimit.setOverride', { namespace, identifier: overrideIdentifier, ...OVERRIDE });
  ctx.onCleanup(() => deleteQuietly(ctx, 'ratelimit.deleteOverride', { namespace, identifier: overrideIdentifier }));
  return {
    apiId,
    keyId: limited.keyId,
    key: limited.key,
    unlimitedKeyId: unlimited.keyId,
    unlimitedKey: unlimited.key,
    identityId,
    externalId,
    identityMeta,
    namespace,
    overrideIdentifier,
    overrideId,
    plainIdentifier: `${ctx.tag}-smoke-plain`,
    missingExternalId: `${ctx.tag}-smoke-nobody`,
  };
}

export default defineScenario<SmokeFixtures>({
  name: 'smoke',
  // The service rules it exercises and judges (src/load/rules/rules.ts).
  rules: [
    'verify.not-found',
    'credits.valid-decrements',
    'credits.exceeded-keeps-balance',
    'credits.cost-many',
    'credits.cost-zero',
    'credits.unlimited',
    'credits.update-credits',
    'keys.update-allocation',
    'keys.delete',
    'ratelimit.cost-zero',
    'ratelimit.limit-exact',
    'ratelimit.override-exact',
    'identities.lifecycle',
  ],
  description: 'Every operation once with its exact expected answer, after a short load of exact read-only calls',
  defaults: { rate: 50, durationMs: 3_000, warmupMs: 500 },
  setup,
  mix,
  finish: (ctx, fixtures) => walkThrough(ctx, fixtures.namespace, IDENTITY_LIMIT),
  thresholds: ['errors == 0', 'checks == 0'],
});
