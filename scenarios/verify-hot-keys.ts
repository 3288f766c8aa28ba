/**
 * verify-hot-keys: verifications whose key popularity follows a Zipf law, as real traffic does —
 * a handful of keys take most requests. Every key has a large balance, so every verification of
 * a known key must be VALID; a few requests present unknown keys and must be NOT_FOUND. At the end
 * the credits consumed, key by key, must add up to the VALID answers, and the hottest keys must
 * have taken their Zipf share. The warm-up verifies at cost 0, so only measured requests consume.
 * Under a promise set whose regions drift (`--consistency production`) the final reads wait for
 * the regions to converge (support/promised.ts); the counts stay exact.
 */
import {
  type CreatedKey,
  type MixEntry,
  type PhaseSpec,
  type Random,
  SETUP_CONCURRENCY,
  type ScenarioContext,
  checkResult,
  codeCount,
  createKey,
  createTaggedApi,
  cutOff,
  defineScenario,
  inParallel,
  isInt,
  notJudged,
  okData,
  serverErrors,
  shown,
  transportErrors,
  withoutAnswerText,
  zipfSampler,
} from '../src/index.js';
import { lostReadsReason, readKeys, remainingOf } from './support/final-reads.js';
import { convergeBeforeFinalReads } from './support/promised.js';

const KEYS = 200;
const ZIPF_EXPONENT = 1.1;
/** Far more than any default run can spend: a VALID answer is the only right one. */
const BALANCE = 10_000_000;
/** The top tenth of the keys by rank. */
const TOP = KEYS / 10;

interface HotKeysFixtures {
  /** Index = popularity rank (0 = hottest). */
  keys: CreatedKey[];
  rank: Map<string, number>;
  pick: (random: Random) => number;
  /** Share of the traffic the Zipf law gives the top TOP ranks. */
  topShare: number;
  unknownKey: string;
}

function verifyEntry(cost: number): MixEntry<HotKeysFixtures> {
  return {
    name: cost === 0 ? 'verifyKey hot (cost 0)' : 'verifyKey hot',
    weight: 95,
    build: (f, random) => ({ op: 'keys.verifyKey', body: { key: (f.keys[f.pick(random)] as CreatedKey).key, credits: { cost } } }),
    check(r, f) {
      const d = okData(r);
      if (typeof d === 'string') return d;
      if (d.valid !== true || d.code !== 'VALID') return `expected VALID, got ${shown(r)}`;
      if (typeof d.keyId !== 'string' || !f.rank.has(d.keyId)) return `keyId ${String(d.keyId)} is not one of the run's keys`;
      if (!isInt(d.credits) || d.credits < 0 || d.credits > BALANCE) return `credits ${String(d.credits)} outside 0..${BALANCE}`;
      return undefined;
    },
  };
}

const unknownEntry: MixEntry<HotKeysFixtures> = {
  name: 'verifyKey unknown',
  weight: 5,
  build: (f) => ({ op: 'keys.verifyKey', body: { key: f.unknownKey } }),
  check(r) {
    const d = okData(r);
    if (typeof d === 'string') return d;
    return d.valid === false && d.code === 'NOT_FOUND' ? undefined : `expected NOT_FOUND, got ${shown(r)}`;
  },
};

/** The fixtures from their plain parts: the rank map and the sampler are rebuilt (shared set-ups cross processes as JSON). */
function hotKeysFixtures(keys: CreatedKey[], topShare: number, unknownKey: string): HotKeysFixtures {
  return { keys, rank: new Map(keys.map((k, i) => [k.keyId, i])), pick: zipfSampler(KEYS, ZIPF_EXPONENT), topShare, unknownKey };
}

async function setup(ctx: ScenarioContext): Promise<HotKeysFixtures> {
  const apiId = await createTaggedApi(ctx, 'hot-keys');
  const keys = await inParallel(
    Array.from({ length: KEYS }, (_, i) => i),
    SETUP_CONCURRENCY,
    (i) => createKey(ctx, { apiId, name: `${ctx.tag}-hot-${i}`, credits: { remaining: BALANCE } }),
  );
  let total = 0;
  let top = 0;
  for (let k = 0; k < KEYS; k++) {
    const weight = 1 / (k + 1) ** ZIPF_EXPONENT;
    total += weight;
    if (k < TOP) top += weight;
  }
  return hotKeysFixtures(keys, top / total, `${ctx.tag}_not_a_key_${ctx.random.int(1_000_000)}`);
}

export default defineScenario<HotKeysFixtures>({
  name: 'verify-hot-keys',
  // The service rules it exercises and judges (src/load/rules/rules.ts).
  rules: ['credits.valid-decrements', 'verify.not-found'],
  description: `Verifications over ${KEYS} keys with Zipf-skewed popularity: all VALID, per-key consumption adds up and follows the skew`,
  defaults: { rate: 500, durationMs: 10_000, warmupMs: 2_000 },
  setup,
  sharedFixtures: {
    save: (f) => ({ keys: f.keys, topShare: f.topShare, unknownKey: f.unknownKey }),
    load: (data) => {
      const d = data as { keys: CreatedKey[]; topShare: number; unknownKey: string };
      return hotKeysFixtures(d.keys, d.topShare, d.unknownKey);
    },
  },
  mix: [verifyEntry(1), unknownEntry],
  phases(ctx) {
    const phases: PhaseSpec<HotKeysFixtures>[] = [];
    if (ctx.settings.warmupMs > 0)
      phases.push({ name: 'warm-up (cost 0)', durationMs: ctx.settings.warmupMs, warmup: true, mix: [verifyEntry(0), unknownEntry] });
    phases.push({ name: 'hot keys', durationMs: ctx.settings.durationMs });
    return phases;
  },
  async finish(ctx, f, results) {
    const verify = results.operation('keys.verifyKey');
    const valid = codeCount(verify, 'VALID');
    const notFound = codeCount(verify, 'NOT_FOUND');
    // Failed requests are among `requests`; cut-off ones are not. Either may have consumed a credit.
    const failed = transportErrors(verify);
    const lost = failed + cutOff(verify);
    // Under a drifting promise set the debits reach the database within a counter's life: the
    // balances are read once every region has converged (under exact at once). No balance can run
    // out, so the count stays exact either way.
    await convergeBeforeFinalReads(ctx);
    const reads = await readKeys(
      ctx,
      f.keys.map((k) => k.keyId),
    );
    const consumed = reads.data.map((d) => BALANCE - (remainingOf(d) ?? BALANCE));
    const total = consumed.reduce((a, b) => a + b, 0);
    const top = consumed.slice(0, TOP).reduce((a, b) => a + b, 0);
    // The balances read at the end: one that never came leaves the checks on them unjudged.
    const unread = reads.lost.count > 0 ? reads.lost : undefined;
    const checks = [
      unread !== undefined
        ? notJudged('credits consumed = VALID answers', unread.count, lostReadsReason(unread))
        : checkResult(
            'credits consumed = VALID answers',
            lost === 0 ? total === valid : total >= valid && total <= valid + lost,
            `${total} credits consumed over ${KEYS} keys, ${valid} VALID answers, ${withoutAnswerText(lost, cutOff(verify), 'without answer')}`,
          ),
      checkResult(
        'only VALID and NOT_FOUND',
        // A gateway's 5xx (or the service's) is an answer that never came as far as codes go.
        valid + notFound + failed + serverErrors(verify) === (verify?.requests ?? 0),
        `${valid} VALID + ${notFound} NOT_FOUND + ${failed + serverErrors(verify)} unanswered of ${verify?.requests ?? 0}; codes ${JSON.stringify(verify?.codes ?? {})}`,
      ),
    ];
    // The skew is statistical: judged only with enough samples that a fair sampler cannot miss
    // its share by 30 % (the top tenth takes ~60 % of the traffic).
    const enough = total >= 200;
    checks.push(
      unread !== undefined
        ? notJudged('hot keys took their Zipf share', unread.count, lostReadsReason(unread))
        : checkResult(
            'hot keys took their Zipf share',
            !enough || top / total >= 0.7 * f.topShare,
            enough
              ? `top ${TOP} keys took ${((100 * top) / total).toFixed(1)} % of the verifications (Zipf s=${ZIPF_EXPONENT}: ${(100 * f.topShare).toFixed(1)} %); hottest key ${consumed[0] ?? 0}`
              : `not judged: only ${total} verifications consumed credits (needs 200)`,
          ),
    );
    return checks;
  },
  thresholds: ['errors == 0', 'checks == 0', 'p99(keys.verifyKey) < 200ms'],
});
