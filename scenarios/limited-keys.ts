/**
 * limited-keys: verifications on keys that have credits **and** rate limits, raced against credit
 * top-ups on the same keys; live-safe (no clock control; it runs on the simulator too).
 *
 * Four keys, two per identity. Each key has two auto-applied limits (3 per 1 s, 8 per 5 s) and
 * its identity one more, shared by both its keys (12 per 5 s). The load offers each key more
 * verifications than its limits admit, so RATE_LIMITED is common, and interleaves top-ups
 * (`updateCredits` increment of 7) on the same keys. The credits never run out.
 *
 * Checks, all exact whatever the pace:
 * - per key, the final balance is its initial credits + 7 × its top-ups − its VALID answers: a
 *   verification refused by a rate limit spends nothing, and no top-up is lost (a difference is
 *   shown with what it looks like: every RATE_LIMITED spent, or n top-ups lost). Requests without
 *   answer may or may not have taken effect (a transport error, a timeout, a gateway's 502/504, a
 *   5xx: their outcome is unknown); with some, the check falls back to the sum over all keys
 *   within what they could explain;
 * - per limit and window (the answers' `reset` names the window each decision fell in), the VALID
 *   answers never exceed the limit: the sliding window only adds the previous window's weight, so
 *   an off-by-one limit shows as soon as a window is saturated.
 * `--history` lets the invariant checkers follow the same answers (credits and rate limits).
 * Under a promise set whose regions drift (`--consistency production`) the final balances are read
 * once the regions have converged (support/promised.ts), and a window may admit up to the band's
 * upper end for the regions the answers named (limit × (1 + rateLimitOverAdmission × regions) +
 * regions × the cost 1); under `exact` the window check is the limit itself.
 */
import {
  type CreatedKey,
  type MixEntry,
  SETUP_CONCURRENCY,
  answerEffectUnknown,
  checkResult,
  createIdentity,
  createKey,
  createTaggedApi,
  defineScenario,
  inParallel,
  isInt,
  isRecord,
  notJudged,
  okData,
  readOutcome,
  shown,
} from '../src/index.js';
import { convergeBeforeFinalReads, exactly, rateLimitBand, regionsCounted } from './support/promised.js';

const KEYS = 4;
const IDENTITIES = 2;
const INITIAL = 5_000;
const TOP_UP = 7;
const KEY_LIMITS = [
  { name: 'per-second', limit: 3, duration: 1_000, autoApply: true },
  { name: 'per-5s', limit: 8, duration: 5_000, autoApply: true },
] as const;
const IDENTITY_LIMIT = { name: 'identity-per-5s', limit: 12, duration: 5_000, autoApply: true } as const;

interface LimitedKey extends CreatedKey {
  owner: string;
  verifiesBuilt: number;
  verifiesAnswered: number;
  valid: number;
  rateLimited: number;
  topUpsBuilt: number;
}

interface WindowTally {
  label: string;
  limit: number;
  resetMs: number;
  valid: number;
}

interface LimitedFixtures {
  keys: LimitedKey[];
  byId: Map<string, LimitedKey>;
  /** VALID answers per limit id and window. */
  windows: Map<string, WindowTally>;
  topUpsAnswered: number;
  topUpsOk: number;
  /** The regions that answered (x-keysim-region), for the promised band. */
  regions: Set<string>;
}

const verifyEntry: MixEntry<LimitedFixtures> = {
  name: 'verifyKey (credits and limits)',
  weight: 8,
  build(f, random) {
    const key = f.keys[random.int(f.keys.length)] as LimitedKey;
    key.verifiesBuilt++;
    return { op: 'keys.verifyKey', body: { key: key.key, credits: { cost: 1 } } };
  },
  check(r, f) {
    const d = okData(r);
    const key = typeof d !== 'string' && typeof d.keyId === 'string' ? f.byId.get(d.keyId) : undefined;
    if (key !== undefined) key.verifiesAnswered++;
    if (r.region !== undefined) f.regions.add(r.region);
    if (typeof d === 'string') return d;
    if (key === undefined) return `keyId ${String(d.keyId)} is not one of the run's keys`;
    if (!isInt(d.credits) || d.credits < 0) return `credits ${String(d.credits)} for a key with a usage limit`;
    if (!isRecord(d.identity) || d.identity.externalId !== key.owner) return `identity ${JSON.stringify(d.identity)}, expected ${key.owner}`;
    const limits = Array.isArray(d.ratelimits) ? d.ratelimits.filter(isRecord) : [];
    const names = limits.map((l) => l.name).sort();
    const expected = [...KEY_LIMITS.map((l) => l.name), IDENTITY_LIMIT.name].sort();
    if (
      names.join() !== expected.join() ||
      limits.some((l) => typeof l.id !== 'string' || !isInt(l.reset) || !isInt(l.limit) || typeof l.exceeded !== 'boolean')
    ) {
      return `expected the limits ${expected.join(', ')} with id, limit, reset and exceeded, got ${shown(r)}`;
    }
    if (d.code === 'VALID' && d.valid === true) {
      key.valid++;
      for (const l of limits) {
        const id = `${String(l.id)}@${String(l.reset)}`;
        const tally = f.windows.get(id) ?? { label: `${String(l.name)} (${String(l.id)})`, limit: l.limit as number, resetMs: l.reset as number, valid: 0 };
        tally.valid++;
        f.windows.set(id, tally);
      }
      return limits.some((l) => l.exceeded === true) ? `VALID while a limit says exceeded: ${shown(r)}` : undefined;
    }
    if (d.code === 'RATE_LIMITED' && d.valid === false) {
      key.rateLimited++;
      return limits.some((l) => l.exceeded === true) ? undefined : `RATE_LIMITED but no limit says exceeded: ${shown(r)}`;
    }
    return `expected VALID or RATE_LIMITED (the credits never run out), got ${shown(r)}`;
  },
};

const topUpEntry: MixEntry<LimitedFixtures> = {
  name: 'updateCredits top-up',
  weight: 2,
  build(f, random) {
    const key = f.keys[random.int(f.keys.length)] as LimitedKey;
    key.topUpsBuilt++;
    return { op: 'keys.updateCredits', body: { keyId: key.keyId, operation: 'increment', value: TOP_UP } };
  },
  check(r, f) {
    // A 5xx may have added the credits or not: like an answer that never came (which is not checked at all).
    if (!answerEffectUnknown(r)) f.topUpsAnswered++;
    const d = okData(r);
    if (typeof d === 'string') return d;
    f.topUpsOk++;
    return isInt(d.remaining) && d.remaining >= TOP_UP ? undefined : `remaining ${String(d.remaining)} right after adding ${TOP_UP}`;
  },
};

/** The rules the end-of-run balance check judges. */
const BALANCE_RULES = ['verify.rate-limited-spends-nothing', 'credits.update-credits', 'credits.valid-decrements'];

/** What a difference between the balance found and the one accounted for looks like. */
function diagnosis(k: LimitedKey, missing: number): string {
  if (missing === 0) return '';
  const hints: string[] = [];
  if (missing > 0 && missing === k.rateLimited) hints.push('as if every RATE_LIMITED verification spent its cost');
  if (missing > 0 && missing % TOP_UP === 0) hints.push(`as if ${missing / TOP_UP} of its ${k.topUpsBuilt} top-ups were lost`);
  return ` — ${Math.abs(missing)} ${missing > 0 ? 'missing' : 'too many'}${hints.length > 0 ? ` (${hints.join('; or ')})` : ''}`;
}

export default defineScenario<LimitedFixtures>({
  name: 'limited-keys',
  // The service rules it exercises and judges (src/load/rules/rules.ts).
  rules: [
    'verify.rate-limited-spends-nothing',
    'ratelimit.identity-shared',
    'ratelimit.key-limit-per-key',
    'credits.update-credits',
    'credits.valid-decrements',
  ],
  description: 'Live-safe: verifications on keys with credits and key/identity rate limits raced against top-ups; exact balances, limits per window',
  defaults: { rate: 40, durationMs: 8_000, warmupMs: 0 },
  async setup(ctx) {
    const apiId = await createTaggedApi(ctx, 'limited-keys');
    const owners = await inParallel(
      Array.from({ length: IDENTITIES }, (_, n) => `${ctx.tag}-limited-${n}`),
      SETUP_CONCURRENCY,
      async (externalId) => {
        await createIdentity(ctx, { externalId, ratelimits: [IDENTITY_LIMIT] });
        return externalId;
      },
    );
    const keys = await inParallel(
      Array.from({ length: KEYS }, (_, n) => n),
      SETUP_CONCURRENCY,
      async (n): Promise<LimitedKey> => {
        const owner = owners[n % IDENTITIES] as string;
        const created = await createKey(ctx, {
          apiId,
          name: `${ctx.tag}-limited-${n}`,
          externalId: owner,
          credits: { remaining: INITIAL },
          ratelimits: KEY_LIMITS,
        });
        return { ...created, owner, verifiesBuilt: 0, verifiesAnswered: 0, valid: 0, rateLimited: 0, topUpsBuilt: 0 };
      },
    );
    return { keys, byId: new Map(keys.map((k) => [k.keyId, k])), windows: new Map(), topUpsAnswered: 0, topUpsOk: 0, regions: new Set() };
  },
  mix: [verifyEntry, topUpEntry],
  async finish(ctx, f) {
    // Under a drifting promise set a top-up reaches another region's counter only when it expires.
    await convergeBeforeFinalReads(ctx);
    const reads = await Promise.all(f.keys.map((k) => readOutcome(ctx, 'keys.getKey', { keyId: k.keyId })));
    const unread = reads.flatMap((r) => (r.answered ? [] : [r.why]));
    const balances = reads.map((r) => {
      const d = r.answered ? okData(r.response) : undefined;
      return d === undefined || typeof d === 'string' || !isRecord(d.credits) || !isInt(d.credits.remaining) ? Number.NaN : d.credits.remaining;
    });
    const topUpsBuilt = f.keys.reduce((n, k) => n + k.topUpsBuilt, 0);
    const lostVerifies = f.keys.reduce((n, k) => n + k.verifiesBuilt - k.verifiesAnswered, 0);
    const lostTopUps = topUpsBuilt - f.topUpsAnswered;
    const refusedTopUps = f.topUpsAnswered - f.topUpsOk;
    const rateLimited = f.keys.reduce((n, k) => n + k.rateLimited, 0);
    const valid = f.keys.reduce((n, k) => n + k.valid, 0);
    let balancesOk: boolean;
    let detail: string;
    if (lostVerifies === 0 && lostTopUps === 0 && refusedTopUps === 0) {
      const rows = f.keys.map((k, i) => {
        const expected = INITIAL + TOP_UP * k.topUpsBuilt - k.valid;
        const found = balances[i] as number;
        return {
          ok: found === expected,
          text: `${k.keyId}: ${found} credits, expected ${INITIAL} + ${TOP_UP}×${k.topUpsBuilt} top-ups − ${k.valid} VALID = ${expected} (${k.rateLimited} RATE_LIMITED)${diagnosis(k, expected - found)}`,
        };
      });
      balancesOk = rows.every((r) => r.ok);
      detail = rows
        .filter((r) => !balancesOk === !r.ok)
        .map((r) => r.text)
        .join('; ');
    } else {
      // Unknown outcomes: a lost verification may have spent 1, a lost top-up may have added 7.
      const expected = KEYS * INITIAL + TOP_UP * f.topUpsOk - valid;
      const found = balances.reduce((a, b) => a + b, 0);
      balancesOk = found >= expected - lostVerifies && found <= expected + TOP_UP * lostTopUps;
      detail = `${found} credits over ${KEYS} keys, expected ${expected} (−${lostVerifies} verifications, +${TOP_UP}×${lostTopUps} top-ups without answer; ${refusedTopUps} top-ups refused)`;
    }
    // Exact: the limit itself. A drifting set: its band's upper end for the regions that answered
    // (every verification costs 1); the refusals need no judging here, the credits never run out.
    const regions = regionsCounted(f.regions, ctx.promises);
    const most = (limit: number) => Math.floor(rateLimitBand(limit, regions, ctx.promises, 1).admitUpTo);
    const over = [...f.windows.values()].filter((w) => w.valid > most(w.limit));
    const within = exactly(ctx)
      ? 'the limit'
      : `at most ${KEY_LIMITS.map((l) => `${most(l.limit)} of ${l.limit}`).join(', ')} and ${most(IDENTITY_LIMIT.limit)} of ${IDENTITY_LIMIT.limit} (${ctx.promises.name} promises, ${regions} regions)`;
    const balanceName = 'balances = credits + top-ups − VALID (refusals spend nothing, no top-up lost)';
    return [
      unread.length > 0
        ? notJudged(balanceName, unread.length, `keys.getKey at the end: ${unread[0] ?? ''}`, BALANCE_RULES)
        : checkResult(balanceName, balancesOk, detail, BALANCE_RULES),
      checkResult(
        'VALID answers per limit and window within the limit',
        over.length === 0,
        over.length > 0
          ? over
              .slice(0, 6)
              .map(
                (w) =>
                  `${w.label}: ${w.valid} VALID in the window ending ${new Date(w.resetMs).toISOString()}, limit ${w.limit}${most(w.limit) === w.limit ? '' : `, at most ${most(w.limit)} within the ${ctx.promises.name} promises for ${regions} regions`}`,
              )
              .join('; ')
          : `${f.windows.size} windows, ${valid} VALID, each window within ${within}`,
        ['ratelimit.key-limit-per-key', 'ratelimit.identity-shared'],
      ),
      checkResult(
        'rate limits refused some verifications',
        true,
        rateLimited > 0
          ? `${rateLimited} RATE_LIMITED of ${valid + rateLimited}`
          : 'none: the load stayed under the limits, so whether a refusal spends credits was not tested (raise --rate)',
      ),
    ];
  },
  thresholds: ['errors == 0', 'checks == 0'],
});
