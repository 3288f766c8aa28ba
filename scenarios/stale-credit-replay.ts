/**
 * stale-credit-replay: a verification (cost 1) and then `keys.updateCredits` set 50 on the same key
 * must end at 50. A deployment that writes debits to its database later (a region replays them
 * after a delay) can land the verification's debit after the set: the balance ends at 49. That is
 * a known production bug, and the production profile of the simulator reproduces it.
 *
 * After the set the scenario reads the balance (keys.getKey) every POLL_MS until it has been the
 * same for STABLE_READS reads in a row, or KEYSIM_STALE_REPLAY_QUIET (default 75 s) has passed: on
 * a simulator with a manual clock the clock is moved instead of waited for. Live-safe: one key,
 * one verification, one set, reads.
 */
import { checkResult, createKey, createTaggedApi, defineScenario, notJudged, okData, readOutcome, shown } from '../src/index.js';
import { remainingOf } from './support/final-reads.js';
import { type Lanes, type ScenarioTime, laneCall, lanesOf, scenarioTime } from './support/lanes.js';
import { durationEnv } from './support/target-time.js';

const CREDITS = 100;
const SET_TO = 50;
const POLL_MS = 5_000;
/** Reads in a row that must agree (POLL_MS apart) before the balance counts as settled. */
const STABLE_READS = 4;
const NAME = 'the balance after a set is what was set';

interface ReplayFixtures {
  keyId: string;
  key: string;
}

interface Reading {
  balance: number | undefined;
  /** Why the last read failed, when no balance came. */
  why: string | undefined;
  /** The last read's answer never came. */
  lost: boolean;
  afterMs: number;
}

/** Reads the key until it has been stable for STABLE_READS reads, or the quiet period is over; the last reading. */
async function settledBalance(ctx: Parameters<typeof readOutcome>[0], keyId: string, time: ScenarioTime, quietMs: number): Promise<Reading> {
  const startMs = await time.now();
  const seen: Array<number | undefined> = [];
  let why: string | undefined;
  for (;;) {
    const outcome = await readOutcome(ctx, 'keys.getKey', { keyId });
    const d = outcome.answered ? okData(outcome.response) : outcome.why;
    const remaining = remainingOf(d);
    const balance = remaining !== null && Number.isInteger(remaining) ? remaining : undefined;
    why = balance === undefined ? (typeof d === 'string' ? d : `no balance in ${outcome.answered ? shown(outcome.response) : 'the answer'}`) : undefined;
    seen.push(balance);
    const afterMs = (await time.now()) - startMs;
    const last = seen.slice(-STABLE_READS);
    const stable = last.length === STABLE_READS && balance !== undefined && last.every((b) => b === balance);
    if (stable || afterMs >= quietMs) return { balance, why, lost: !outcome.answered, afterMs };
    await time.pass(Math.min(POLL_MS, quietMs - afterMs));
  }
}

/** Undefined when both were answered as expected; else what went wrong (`lost`: an answer never came). */
async function verifyThenSet(ctx: Parameters<typeof laneCall>[0], lanes: Lanes, f: ReplayFixtures): Promise<{ lost: boolean; why: string } | undefined> {
  // The verification in one region, the set in another (or the same connection pool on a live target).
  const verified = await laneCall(ctx, lanes, 1, 'keys.verifyKey', { key: f.key, credits: { cost: 1 } });
  if (!verified.answered) return { lost: true, why: `the verification: ${verified.why}` };
  const v = okData(verified.response);
  if (typeof v === 'string' || v.code !== 'VALID') return { lost: false, why: `the verification before the set was not VALID: ${shown(verified.response)}` };
  const set = await laneCall(ctx, lanes, lanes.count > 1 ? 2 : 1, 'keys.updateCredits', { keyId: f.keyId, operation: 'set', value: SET_TO });
  if (!set.answered) return { lost: true, why: `the set: ${set.why}` };
  if (set.response.status !== 200) return { lost: false, why: `the set was refused: ${shown(set.response)}` };
  return undefined;
}

export default defineScenario<ReplayFixtures>({
  name: 'stale-credit-replay',
  rules: ['credits.update-credits'],
  description: `Live-safe: verify (cost 1), then set the credits to ${SET_TO}; once settled it must read ${SET_TO} (a debit replayed late leaves ${SET_TO - 1})`,
  defaults: { rate: 2, durationMs: 1_000, warmupMs: 0 },
  async setup(ctx) {
    const apiId = await createTaggedApi(ctx, 'stale-credit-replay');
    return createKey(ctx, { apiId, name: `${ctx.tag}-replay`, credits: { remaining: CREDITS } });
  },
  // The load only reads (cost 0): the scenario's own calls after it are what it judges.
  mix: [{ name: 'verifyKey cost 0', weight: 1, build: (f) => ({ op: 'keys.verifyKey', body: { key: f.key, credits: { cost: 0 } } }) }],
  async finish(ctx, f) {
    const quietMs = durationEnv('KEYSIM_STALE_REPLAY_QUIET', '75s');
    const lanes = await lanesOf(ctx);
    const time = await scenarioTime(ctx);
    const problem = await verifyThenSet(ctx, lanes, f);
    if (problem !== undefined) return [problem.lost ? notJudged(NAME, 1, problem.why) : checkResult(NAME, false, problem.why)];
    const read = await settledBalance(ctx, f.keyId, time, quietMs);
    const waited = `${(read.afterMs / 1000).toFixed(0)} s of ${time.source}${time.moved ? ', moved, not waited' : ''}`;
    if (read.balance === undefined && read.lost) return [notJudged(NAME, 1, `keys.getKey after the set: ${read.why ?? ''}`)];
    if (read.balance === undefined) return [checkResult(NAME, false, `the balance could not be read after the set: ${read.why ?? 'no answer'}`)];
    const what = read.balance === SET_TO - 1 ? 'a debit replayed after the set' : read.balance === SET_TO ? 'as set' : 'a balance the set does not explain';
    return [checkResult(NAME, read.balance === SET_TO, `${what}: ${read.balance}, expected ${SET_TO} (read for ${waited})`, ['credits.update-credits'])];
  },
  thresholds: ['errors == 0', 'checks == 0'],
});
