/**
 * key-states: keys that must be refused whatever their credits — disabled, expired, deleted — and
 * an active control, verified under load; live-safe (no clock control; it runs on the simulator
 * too). Every answer is exact and changes nothing, so concurrency cannot make one uncertain:
 *   disabled      enabled: false with 0 credits left → DISABLED (not USAGE_EXCEEDED: the state is
 *                 checked before the credits), and one with 50 → DISABLED, its 50 untouched;
 *   expired       expires 1 January 2000 → EXPIRED, its credits untouched;
 *   deleted       made and deleted in setup → NOT_FOUND, and keys.getKey on it → 404;
 *   active        cost 0 → VALID with its balance unchanged (cost 0 takes nothing).
 * At the end each key's balance is read back: a refused verification spent nothing.
 */
import {
  type ApiResponse,
  type CreatedKey,
  type MixEntry,
  type ScenarioContext,
  checkResult,
  createKey,
  createTaggedApi,
  defineScenario,
  expectError,
  isInt,
  isRecord,
  notJudged,
  okData,
  readOutcome,
  shown,
} from '../src/index.js';

const CREDITS = 50;
/** Long past on any clock a deployment can have. */
const EXPIRED_AT = Date.UTC(2000, 0, 1);

interface StateKey extends CreatedKey {
  credits: number;
}

interface KeyStatesFixtures {
  disabledEmpty: StateKey;
  disabled: StateKey;
  expired: StateKey;
  active: StateKey;
  deleted: CreatedKey;
}

/** A verification answered with `code` (and the key's balance unchanged when it has one). */
function verifiedAs(r: ApiResponse, code: string, key: StateKey | undefined): string | undefined {
  const d = okData(r);
  if (typeof d === 'string') return d;
  const valid = code === 'VALID';
  if (d.code !== code || d.valid !== valid) return `expected ${code}, got ${shown(r)}`;
  if (key !== undefined && d.keyId !== key.keyId) return `keyId ${String(d.keyId)}, expected ${key.keyId}`;
  // NOT_FOUND answers hold only valid and code; the others report the balance, untouched.
  if (key !== undefined && d.credits !== undefined && d.credits !== key.credits)
    return `credits ${JSON.stringify(d.credits)}, expected ${key.credits} untouched`;
  return undefined;
}

const verify = (
  name: string,
  pick: (f: KeyStatesFixtures) => CreatedKey,
  code: string,
  rules: readonly string[],
  cost?: number,
): MixEntry<KeyStatesFixtures> => ({
  name,
  weight: 1,
  rules,
  build: (f) => ({ op: 'keys.verifyKey', body: { key: pick(f).key, ...(cost === undefined ? {} : { credits: { cost } }) } }),
  check: (r, f) => verifiedAs(r, code, code === 'NOT_FOUND' ? undefined : (pick(f) as StateKey)),
});

const mix: ReadonlyArray<MixEntry<KeyStatesFixtures>> = [
  verify('verifyKey disabled, 0 left → DISABLED', (f) => f.disabledEmpty, 'DISABLED', ['verify.disabled']),
  verify('verifyKey disabled → DISABLED', (f) => f.disabled, 'DISABLED', ['verify.disabled']),
  verify('verifyKey expired → EXPIRED', (f) => f.expired, 'EXPIRED', ['verify.expired']),
  verify('verifyKey deleted → NOT_FOUND', (f) => f.deleted, 'NOT_FOUND', ['verify.not-found', 'keys.delete']),
  verify('verifyKey active, cost 0 → VALID', (f) => f.active, 'VALID', ['credits.cost-zero'], 0),
  {
    name: 'getKey deleted → 404',
    weight: 1,
    rules: ['keys.delete'],
    build: (f) => ({ op: 'keys.getKey', body: { keyId: f.deleted.keyId } }),
    check: (r) => expectError(r, 404, 'key_not_found'),
  },
];

async function setup(ctx: ScenarioContext): Promise<KeyStatesFixtures> {
  const apiId = await createTaggedApi(ctx, 'key-states');
  const make = async (name: string, credits: number, extra: Record<string, unknown> = {}): Promise<StateKey> => ({
    ...(await createKey(ctx, { apiId, name: `${ctx.tag}-${name}`, credits: { remaining: credits }, ...extra })),
    credits,
  });
  const deleted = await make('deleted', CREDITS);
  await ctx.api.data('keys.deleteKey', { keyId: deleted.keyId });
  return {
    disabledEmpty: await make('disabled-empty', 0, { enabled: false }),
    disabled: await make('disabled', CREDITS, { enabled: false }),
    expired: await make('expired', CREDITS, { expires: EXPIRED_AT }),
    active: await make('active', CREDITS),
    deleted: { keyId: deleted.keyId, key: deleted.key },
  };
}

export default defineScenario<KeyStatesFixtures>({
  name: 'key-states',
  // The service rules it exercises and judges (src/load/rules/rules.ts).
  rules: ['verify.disabled', 'verify.expired', 'verify.not-found', 'keys.delete', 'credits.cost-zero'],
  description: 'Disabled, expired and deleted keys refused whatever their credits, an active key at cost 0; live-safe',
  defaults: { rate: 50, durationMs: 5_000, warmupMs: 1_000 },
  setup,
  mix,
  async finish(ctx, f) {
    const name = 'refused and cost-0 verifications spent nothing';
    // Reads: asked again when their answer never came; one that never came leaves the check unjudged.
    const reads = await Promise.all(
      [f.disabledEmpty, f.disabled, f.expired, f.active].map(async (k) => ({ k, outcome: await readOutcome(ctx, 'keys.getKey', { keyId: k.keyId }) })),
    );
    const unread = reads.flatMap(({ outcome }) => (outcome.answered ? [] : [outcome.why]));
    const rules = ['verify.disabled', 'verify.expired', 'credits.cost-zero'];
    if (unread.length > 0) return [notJudged(name, unread.length, `keys.getKey at the end: ${unread[0] ?? ''}`, rules)];
    const balances = reads.map(({ k, outcome }) => {
      const d = outcome.answered ? okData(outcome.response) : 'no answer';
      return {
        k,
        remaining: typeof d === 'string' ? d : isRecord(d.credits) && isInt(d.credits.remaining) ? d.credits.remaining : `credits ${JSON.stringify(d.credits)}`,
      };
    });
    const changed = balances.filter(({ k, remaining }) => remaining !== k.credits);
    return [
      checkResult(
        name,
        changed.length === 0,
        changed.length === 0
          ? `every balance as created (${balances.map(({ remaining }) => String(remaining)).join(', ')})`
          : changed.map(({ k, remaining }) => `${k.keyId}: ${String(remaining)}, expected ${k.credits}`).join('; '),
        rules,
      ),
    ];
  },
  thresholds: ['errors == 0', 'checks == 0'],
});
