/**
 * mixed: a production-like blend — mostly verifications (Zipf-skewed over the keys, each key
 * owned by an identity), some rate-limit checks per user, credit top-ups, identity reads and the
 * odd page of identities. A few of the hottest keys have small balances, so USAGE_EXCEEDED occurs
 * (only for them); the others have balances no run can spend.
 *
 * The answers cannot all be predicted under concurrency, so the checks are invariants: the right
 * key and owner, VALID or (small keys only) USAGE_EXCEEDED, consistent rate-limit figures. At the
 * end the credits are accounted for exactly: what all keys lost, less the top-ups, is the number of
 * VALID answers. The warm-up verifies at cost 0 and makes no top-ups, so that holds for the
 * measured figures alone. Requests without answer (transport errors, or cut off at the end of a
 * closed-model phase) may or may not have taken effect: each widens the tolerance.
 *
 * Under a promise set whose regions drift (`--consistency production`) the final reads wait for
 * the regions to converge (support/promised.ts), and the small keys may grant more than their
 * credits by what the regions could over-spend — (regions − 1) × their balance and top-ups per
 * counter period the load spans — which their balances, never below 0, do not show.
 *
 * On the embedded simulator it runs on a running clock (clockMode: 'running'): the per-user
 * windows roll every second as they would in production.
 *
 * The default scenario of `keysim run`: its default run (2 s warm-up + 12 s at 300 requests/s)
 * takes about 15 s with setup and cleanup.
 */
import {
  type CheckResult,
  type CreatedKey,
  type MixEntry,
  type OperationStats,
  type PhaseSpec,
  type Random,
  SETUP_CONCURRENCY,
  type ScenarioContext,
  checkResult,
  codeCount,
  createIdentity,
  createKey,
  createTaggedApi,
  cutOff,
  defineScenario,
  ensureNamespace,
  inParallel,
  isInt,
  isRecord,
  notJudged,
  okData,
  okList,
  sameJson,
  serverErrors,
  shown,
  statusCount,
  transportErrors,
  unexpectedCodes,
  withoutAnswer,
  withoutAnswerText,
  zipfSampler,
} from '../src/index.js';
import { ascendingIds, paginationProblem } from './support/common.js';
import { lostReadsReason, readKeys, remainingOf } from './support/final-reads.js';
import { convergeBeforeFinalReads, exactly, overSpendAllowance, regionsCounted } from './support/promised.js';

const KEYS = 300;
const USERS = 100;
/** Ranks (by popularity) of the keys with a small balance. */
const SMALL_RANKS = new Set([1, 4, 9]);
const SMALL_BALANCE = 40;
const LARGE_BALANCE = 10_000_000;
const TOP_UP = 5;
const USER_LIMIT = { limit: 50, duration: 1_000 };

interface MixedKey extends CreatedKey {
  initial: number;
  owner: string;
}

interface MixedFixtures {
  /** Index = popularity rank. */
  keys: MixedKey[];
  byId: Map<string, MixedKey>;
  smallKeys: MixedKey[];
  users: Array<{ id: string; externalId: string; n: number }>;
  namespace: string;
  pickKey: (random: Random) => number;
  pickUser: (random: Random) => number;
  /** The regions that answered the verifications (x-keysim-region), for the over-spend bound. */
  regions: Set<string>;
}

function verifyEntry(cost: number): MixEntry<MixedFixtures> {
  return {
    name: cost === 0 ? 'verifyKey (cost 0)' : 'verifyKey',
    weight: 80,
    build: (f, random) => ({ op: 'keys.verifyKey', body: { key: (f.keys[f.pickKey(random)] as MixedKey).key, credits: { cost } } }),
    check(r, f) {
      if (r.region !== undefined) f.regions.add(r.region);
      const d = okData(r);
      if (typeof d === 'string') return d;
      const key = typeof d.keyId === 'string' ? f.byId.get(d.keyId) : undefined;
      if (key === undefined) return `keyId ${String(d.keyId)} is not one of the run's keys`;
      if (!isRecord(d.identity) || d.identity.externalId !== key.owner) return `identity ${JSON.stringify(d.identity)}, expected owner ${key.owner}`;
      if (!isInt(d.credits) || d.credits < 0) return `credits ${String(d.credits)}`;
      if (d.code === 'VALID' && d.valid === true) return undefined;
      if (d.code === 'USAGE_EXCEEDED' && d.valid === false && key.initial === SMALL_BALANCE && d.credits < Math.max(cost, 1)) return undefined;
      return `expected VALID${key.initial === SMALL_BALANCE ? ' or USAGE_EXCEEDED' : ''}, got ${shown(r)}`;
    },
  };
}

const limitEntry: MixEntry<MixedFixtures> = {
  name: 'ratelimit.limit per user',
  weight: 10,
  build: (f, random) => ({
    op: 'ratelimit.limit',
    body: { namespace: f.namespace, identifier: (f.users[f.pickUser(random)] as { externalId: string }).externalId, ...USER_LIMIT },
  }),
  check(r) {
    const d = okData(r);
    if (typeof d === 'string') return d;
    if (d.limit !== USER_LIMIT.limit || !isInt(d.remaining) || !isInt(d.reset) || typeof d.success !== 'boolean') return `unexpected answer ${shown(r)}`;
    if (d.success ? d.remaining < 0 || d.remaining >= USER_LIMIT.limit : d.remaining !== 0) return `remaining ${d.remaining} with success ${String(d.success)}`;
    return undefined;
  },
};

const getIdentityEntry: MixEntry<MixedFixtures> = {
  name: 'getIdentity',
  weight: 5,
  build: (f, random) => ({ op: 'identities.getIdentity', body: { identity: (f.users[f.pickUser(random)] as { externalId: string }).externalId } }),
  check(r, f) {
    const d = okData(r);
    if (typeof d === 'string') return d;
    const user = f.users.find((u) => u.id === d.id);
    if (user === undefined || d.externalId !== user.externalId) return `not a user of this run: ${shown(r)}`;
    return sameJson(d.meta, { tier: user.n % 10 === 0 ? 'enterprise' : 'free', n: user.n })
      ? undefined
      : `meta ${JSON.stringify(d.meta)} of ${user.externalId}`;
  },
};

const topUpEntry: MixEntry<MixedFixtures> = {
  name: 'updateCredits top-up',
  weight: 3,
  build: (f, random) => ({
    op: 'keys.updateCredits',
    body: { keyId: (f.smallKeys[random.int(f.smallKeys.length)] as MixedKey).keyId, operation: 'increment', value: TOP_UP },
  }),
  check(r) {
    const d = okData(r);
    if (typeof d === 'string') return d;
    return isInt(d.remaining) && d.remaining >= TOP_UP ? undefined : `remaining ${String(d.remaining)} right after adding ${TOP_UP}`;
  },
};

const listEntry: MixEntry<MixedFixtures> = {
  name: 'listIdentities',
  weight: 2,
  build: () => ({ op: 'identities.listIdentities', body: { limit: 50 } }),
  check(r) {
    const list = okList(r);
    if (typeof list === 'string') return list;
    return list.items.length > 50 ? `${list.items.length} items for limit 50` : (ascendingIds(list.items) ?? paginationProblem(list.pagination));
  },
};

/**
 * Every rate-limit check that the service answered was decided (allowed or denied). A check whose
 * answer never came — a transport error, a gateway's 502/504 or another page that is not the
 * service's, a 5xx — is counted apart and not judged; with none judged the check says so.
 */
export function rateLimitsDecided(limits: OperationStats | undefined): CheckResult {
  const name = 'every rate-limit check decided';
  const requests = limits?.requests ?? 0;
  const unknown = transportErrors(limits) + serverErrors(limits);
  const judged = requests - unknown;
  const allowed = limits?.ratelimit.allowed ?? 0;
  const denied = limits?.ratelimit.denied ?? 0;
  if (judged === 0 && unknown > 0) return notJudged(name, unknown, 'transport errors, gateway pages or 5xx answers');
  const never = unknown > 0 ? `; ${unknown} never came (transport errors, gateway pages, 5xx), not judged` : '';
  return checkResult(name, allowed + denied === judged, `${allowed} allowed, ${denied} denied of the ${judged} answered${never}`);
}

async function setup(ctx: ScenarioContext): Promise<MixedFixtures> {
  // The namespace first: on a live target without it the run stops before making anything.
  const namespace = await ensureNamespace(ctx, 'api');
  const apiId = await createTaggedApi(ctx, 'mixed');
  const users = await inParallel(
    Array.from({ length: USERS }, (_, n) => n),
    SETUP_CONCURRENCY,
    async (n) => {
      const externalId = `${ctx.tag}-user-${n}`;
      return { n, externalId, id: await createIdentity(ctx, { externalId, meta: { tier: n % 10 === 0 ? 'enterprise' : 'free', n } }) };
    },
  );
  const keys = await inParallel(
    Array.from({ length: KEYS }, (_, rank) => rank),
    SETUP_CONCURRENCY,
    async (rank): Promise<MixedKey> => {
      const initial = SMALL_RANKS.has(rank) ? SMALL_BALANCE : LARGE_BALANCE;
      const owner = (users[rank % USERS] as { externalId: string }).externalId;
      const created = await createKey(ctx, { apiId, name: `${ctx.tag}-mixed-${rank}`, externalId: owner, credits: { remaining: initial } });
      return { ...created, initial, owner };
    },
  );
  return mixedFixtures(keys, users, namespace);
}

/** The fixtures from their plain data (what `sharedFixtures` hands to the segments of `--workers`). */
function mixedFixtures(keys: MixedKey[], users: MixedFixtures['users'], namespace: string): MixedFixtures {
  return {
    keys,
    byId: new Map(keys.map((k) => [k.keyId, k])),
    smallKeys: keys.filter((k) => k.initial === SMALL_BALANCE),
    users,
    namespace,
    pickKey: zipfSampler(KEYS, 1.1),
    pickUser: zipfSampler(USERS, 1.0),
    regions: new Set(),
  };
}

export default defineScenario<MixedFixtures>({
  name: 'mixed',
  // The service rules it exercises and judges (src/load/rules/rules.ts).
  rules: ['credits.valid-decrements', 'credits.exceeded-keeps-balance', 'credits.update-credits', 'credits.cost-zero'],
  description: 'Production-like blend: Zipf-skewed verifications, per-user rate limits, credit top-ups, identity reads',
  defaults: { rate: 300, durationMs: 12_000, warmupMs: 2_000 },
  // Production-like: on the embedded simulator the clock runs with real time, so the per-user
  // one-second windows roll during the run (on a frozen clock they would never reopen).
  clockMode: 'running',
  setup,
  // A Map and two samplers: plain data only crosses to the segments of --workers.
  sharedFixtures: {
    save: (f) => ({ keys: f.keys, users: f.users, namespace: f.namespace }),
    load: (data) => {
      const d = data as { keys: MixedKey[]; users: MixedFixtures['users']; namespace: string };
      return mixedFixtures(d.keys, d.users, d.namespace);
    },
  },
  mix: [verifyEntry(1), limitEntry, getIdentityEntry, topUpEntry, listEntry],
  phases(ctx) {
    const list: PhaseSpec<MixedFixtures>[] = [];
    if (ctx.settings.warmupMs > 0) {
      list.push({
        name: 'warm-up (cost 0, no top-ups)',
        durationMs: ctx.settings.warmupMs,
        warmup: true,
        mix: [verifyEntry(0), limitEntry, getIdentityEntry, listEntry],
      });
    }
    list.push({ name: 'mixed', durationMs: ctx.settings.durationMs });
    return list;
  },
  async finish(ctx, f, results) {
    const verify = results.operation('keys.verifyKey');
    const topUps = results.operation('keys.updateCredits');
    const valid = codeCount(verify, 'VALID');
    const lost = withoutAnswer(verify) + withoutAnswer(topUps);
    await convergeBeforeFinalReads(ctx);
    const reads = await readKeys(
      ctx,
      f.keys.map((k) => k.keyId),
    );
    const finals = reads.data.map((d) => remainingOf(d) ?? Number.NaN);
    const added = TOP_UP * statusCount(topUps, 200);
    const lostCredits = f.keys.reduce((n, k, i) => n + k.initial - (finals[i] ?? Number.NaN), 0);
    const consumed = lostCredits + added;
    const other = unexpectedCodes(verify, ['VALID', 'USAGE_EXCEEDED']);
    const creditsName = 'credits accounted for';
    // What the regions may over-spend under the promise set in force (0 under exact): only the
    // small keys can run dry, each from its balance and what was topped up (all top-ups go to them).
    const regions = regionsCounted(f.regions, ctx.promises);
    const allowed = overSpendAllowance([f.smallKeys.length * SMALL_BALANCE + added], regions, ctx.settings.durationMs, ctx.promises);
    const promised = exactly(ctx) ? '' : `; ${ctx.promises.name} promises: up to ${allowed} VALID beyond the credits from ${regions} regions' counters`;
    return [
      reads.lost.count > 0
        ? notJudged(creditsName, reads.lost.count, lostReadsReason(reads.lost))
        : checkResult(
            creditsName,
            lost === 0 && allowed === 0 ? consumed === valid : consumed <= valid + lost * TOP_UP && consumed >= valid - allowed - lost * TOP_UP,
            `${lostCredits} credits gone from ${KEYS} keys + ${added} topped up = ${consumed} consumed; ${valid} VALID answers; ${withoutAnswerText(lost, cutOff(verify) + cutOff(topUps))}${promised}`,
          ),
      checkResult(
        'verifications answered VALID or USAGE_EXCEEDED',
        other.length === 0,
        other.length === 0 ? `${valid} VALID, ${codeCount(verify, 'USAGE_EXCEEDED')} USAGE_EXCEEDED` : `also ${other.join(', ')}`,
      ),
      rateLimitsDecided(results.operation('ratelimit.limit')),
    ];
  },
  thresholds: ['errors == 0', 'checks == 0', 'p99 < 250ms'],
});
