/**
 * One region of the production profile seen as an engine: the same operation surface as `Engine`
 * (so the HTTP routes run on it unchanged), every operation run in that region. Keys are read
 * and credits spent through the region (Engine.inRegion); a key changed here is forgotten by this
 * region's cache only, and updateCredits drops this region's counter only.
 */
import type { Engine } from '../engine.js';
import type { Result } from '../errors.js';
import type { Region } from './region.js';

/** What an engine offers its callers (every public member of `Engine`). */
export type EngineSurface = Pick<Engine, keyof Engine>;

/** Runs an operation in a region, after the debits due by now landed in the database. */
export type InRegion = <T>(region: Region, run: () => T) => T;

type Op<I, O> = (rootKey: string | undefined, input: I) => Result<O>;

export function regionView(
  engine: Engine,
  region: Region,
  inRegion: InRegion,
  profileOwned: Pick<EngineSurface, 'restore' | 'restoreChecked' | 'reset'>,
): EngineSurface {
  const here =
    <I, O>(op: Op<I, O>): Op<I, O> =>
    (rootKey, input) =>
      inRegion(region, () => op(rootKey, input));
  /** A key changed in this region: its cache forgets it, when the change went through. */
  const changingKey =
    <I extends { keyId: string }, O>(op: Op<I, O>, dropCounter: (input: I) => boolean): Op<I, O> =>
    (rootKey, input) =>
      inRegion(region, () => {
        const digest = engine.database.digestOf(input.keyId);
        const result = op(rootKey, input);
        if (result.ok) {
          region.keyChanged(digest);
          if (dropCounter(input)) region.counters.invalidate(input.keyId);
        }
        return result;
      });
  /** An override changed in this region: its override cache forgets what it knew. */
  const changingOverride =
    <I, O>(op: Op<I, O>): Op<I, O> =>
    (rootKey, input) =>
      inRegion(region, () => {
        const result = op(rootKey, input);
        if (result.ok) region.overrides.clear();
        return result;
      });
  const { keys, identities, ratelimit, apis } = engine;
  return {
    clock: engine.clock,
    compat: engine.compat,
    seed: engine.seed,
    database: engine.database,
    apis: { createApi: here(apis.createApi) },
    keys: {
      createKey: here(keys.createKey),
      getKey: here(keys.getKey),
      updateKey: changingKey(keys.updateKey, (input) => input.credits !== undefined),
      deleteKey: changingKey(keys.deleteKey, () => true),
      verifyKey: here(keys.verifyKey),
      // The database and this region's counter only: the other regions count on until their
      // counters expire, and a debit buffered before the change still lands after it.
      updateCredits: (rootKey, input) =>
        inRegion(region, () => {
          const result = keys.updateCredits(rootKey, input);
          if (result.ok) region.counters.invalidate(input.keyId);
          return result;
        }),
    },
    identities: {
      createIdentity: here(identities.createIdentity),
      getIdentity: here(identities.getIdentity),
      listIdentities: here(identities.listIdentities),
      updateIdentity: here(identities.updateIdentity),
      deleteIdentity: here(identities.deleteIdentity),
    },
    ratelimit: {
      limit: here(ratelimit.limit),
      multiLimit: here(ratelimit.multiLimit),
      setOverride: changingOverride(ratelimit.setOverride),
      getOverride: here(ratelimit.getOverride),
      listOverrides: here(ratelimit.listOverrides),
      deleteOverride: changingOverride(ratelimit.deleteOverride),
    },
    admin: engine.admin,
    inRegion: (hook, run) => engine.inRegion(hook, run),
    snapshot: () => engine.snapshot(),
    exactSnapshot: () => engine.exactSnapshot(),
    restore: (snapshot) => profileOwned.restore(snapshot),
    snapshotReader: () => engine.snapshotReader(),
    restoreChecked: (checked) => profileOwned.restoreChecked(checked),
    reset: () => profileOwned.reset(),
    setFaults: (faults) => engine.setFaults(faults),
    faultDicePosition: () => engine.faultDicePosition(),
    resumeFaultDice: (position) => engine.resumeFaultDice(position),
    get faults() {
      return engine.faults;
    },
    stats: () => engine.stats(),
  };
}
