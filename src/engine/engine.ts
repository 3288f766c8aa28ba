/**
 * The whole service as one synchronous object on an injected clock: every operation of the
 * interface, grouped as the v2 API groups them, plus the fixtures the simulator's admin surface
 * needs. Management operations take the caller's root key (the bearer token) first.
 */
import type { ControllableClock, Clock } from './clock.js';
import { type Compat, type EngineContext } from './context.js';
import { type Result, ok } from './errors.js';
import { Random } from './random.js';
import { sha256Base64Url, sha256Digest } from './sha256.js';
import { digestOfHash } from './key-digest.js';
import { emptyState } from './state.js';
import { authenticate, type Caller } from './auth.js';
import { type ConfigureApiInput, type CreateWorkspaceInput, configureApi, configureVault, createApi, createRootKey, createWorkspace } from './workspace.js';
import { createKey, deleteKey, getKey, updateCredits, updateKey } from './keys.js';
import { verifyKey } from './verify.js';
import { createIdentity, deleteIdentity, getIdentity, listIdentities, updateIdentity } from './identities.js';
import { createNamespace, deleteNamespace, deleteOverride, getOverride, limit, listOverrides, multiLimit, setOverride } from './ratelimit.js';
import { SnapshotReader } from './snapshot-reader.js';
import { type CheckedSnapshot, type EngineSnapshot, stateFromChecked, takeSnapshot } from './snapshot.js';
import { type CheckedRecords, checkSnapshotRecords } from './snapshot-check.js';
import { type RegionalDatabase, type RegionalHook, regionalDatabase } from './regional.js';
import { digestOfKey } from './key-record.js';
import { type EngineFaults, type EngineFaultsView, ENGINE_FAULT_RATES, checkEngineFaults, faultSeed } from './faults.js';

export interface EngineOptions {
  clock: Clock | ControllableClock;
  /** Seeds every generated id and key; default 1. */
  seed?: number;
  /** 'interface' (default) follows the interface document; 'production' the production service. */
  compat?: Compat;
  /**
   * SHA-256 as unpadded base64url (how key and root-key hashes are stored). Defaults to the
   * engine's own; the server passes node:crypto's, which is faster and gives the same strings.
   */
  sha256?: (text: string) => string;
  /**
   * SHA-256 as a string of its 32 bytes, one character (code 0–255) a byte, as node:crypto's
   * `digest('latin1')` gives it: how a key's hash is held and looked up (key-digest.ts). Defaults
   * to the engine's own when `sha256` is not given either, else to `sha256` converted (the same
   * digests, a conversion slower: a server passes both).
   */
  sha256Digest?: (text: string) => string;
  /** Deliberate wrong behaviour from the start (see `setFaults`); default none. */
  faults?: EngineFaults;
}

/** Sizes of the state, for health checks and benchmarks. */
export interface EngineStats {
  workspaces: number;
  apis: number;
  keys: number;
  identities: number;
  namespaces: number;
  overrides: number;
  windows: number;
}

type Op<I, O> = (rootKey: string | undefined, input: I) => Result<O>;
type Bind<F> = F extends (ctx: EngineContext, rootKey: string | undefined, input: infer I) => Result<infer O> ? Op<I, O> : never;

/** The key digest function of these options (see `sha256Digest`). */
function keyDigestOf({ sha256, sha256Digest: digest }: EngineOptions): (text: string) => string {
  if (digest !== undefined) return digest;
  // An injected base64url hash (a replay's, which hands back the journal's hashes) stays the one
  // keys are looked up by.
  return sha256 === undefined ? sha256Digest : (text) => digestOfHash(sha256(text));
}

export class Engine {
  readonly clock: Clock;
  readonly compat: Compat;
  readonly seed: number;
  readonly #ctx: EngineContext;
  /** Decides the injected faults; separate from the id sequence, so faults never change ids. */
  readonly #faultRandom: Random;
  #faults: EngineFaultsView | null = null;

  constructor(options: EngineOptions) {
    this.clock = options.clock;
    this.compat = options.compat ?? 'interface';
    this.seed = options.seed ?? 1;
    this.#ctx = {
      state: emptyState(),
      clock: options.clock,
      random: new Random(this.seed),
      compat: this.compat,
      sha256: options.sha256 ?? sha256Base64Url,
      keyDigest: keyDigestOf(options),
      faults: null,
      rootKeyMemo: { plaintext: '', hash: '' },
      regional: null,
    };
    this.database = regionalDatabase(this.#ctx, digestOfKey);
    this.#faultRandom = new Random(faultSeed(this.seed));
    if (options.faults !== undefined) {
      const set = this.setFaults(options.faults);
      if (!set.ok) throw new RangeError(set.error.detail);
    }
  }

  #bind<F extends (ctx: EngineContext, rootKey: string | undefined, input: never) => Result<unknown>>(fn: F): Bind<F> {
    // Read #ctx at call time: these fields are initialised before the constructor sets it.
    return ((rootKey: string | undefined, input: never) => fn(this.#ctx, rootKey, input)) as Bind<F>;
  }

  readonly apis = {
    createApi: this.#bind(createApi),
  };

  readonly keys = {
    createKey: this.#bind(createKey),
    getKey: this.#bind(getKey),
    updateKey: this.#bind(updateKey),
    deleteKey: this.#bind(deleteKey),
    verifyKey: this.#bind(verifyKey),
    updateCredits: this.#bind(updateCredits),
  };

  readonly identities = {
    createIdentity: this.#bind(createIdentity),
    getIdentity: this.#bind(getIdentity),
    listIdentities: this.#bind(listIdentities),
    updateIdentity: this.#bind(updateIdentity),
    deleteIdentity: this.#bind(deleteIdentity),
  };

  readonly ratelimit = {
    limit: this.#bind(limit),
    multiLimit: this.#bind(multiLimit),
    setOverride: this.#bind(setOverride),
    getOverride: this.#bind(getOverride),
    listOverrides: this.#bind(listOverrides),
    deleteOverride: this.#bind(deleteOverride),
  };

  /** Fixtures that production has no public API for (the simulator's `/_sim/*` surface). */
  readonly admin = {
    authenticate: (rootKey: string | undefined): Result<Caller> => authenticate(this.#ctx, rootKey),
    createWorkspace: (input: CreateWorkspaceInput = {}) => createWorkspace(this.#ctx, input),
    createRootKey: (workspaceId: string, permissions: readonly string[], plaintext?: string) => createRootKey(this.#ctx, workspaceId, permissions, plaintext),
    configureApi: (workspaceId: string, input: ConfigureApiInput) => configureApi(this.#ctx, workspaceId, input),
    configureVault: (workspaceId: string, enabled: boolean) => configureVault(this.#ctx, workspaceId, enabled),
    createNamespace: (workspaceId: string, name: string) => createNamespace(this.#ctx, workspaceId, name),
    deleteNamespace: (workspaceId: string, namespace: string) => deleteNamespace(this.#ctx, workspaceId, namespace),
  };

  /**
   * Runs `run` (operations of this engine) with one region of the production profile in front of
   * verification (regional.ts); the engine stands for the service's database meanwhile. Synchronous,
   * so no other operation sees the hook.
   */
  inRegion<T>(hook: RegionalHook, run: () => T): T {
    const outer = this.#ctx.regional ?? null;
    this.#ctx.regional = hook;
    try {
      return run();
    } finally {
      this.#ctx.regional = outer;
    }
  }

  /** The production profile's door to this engine as its database (regional.ts). */
  readonly database: RegionalDatabase;

  /** The whole state as plain JSON (deep copy). */
  snapshot(): EngineSnapshot {
    return takeSnapshot(this.#ctx, this.seed);
  }

  /** The whole state exactly as it stands (refills due are not applied): a copy that changes nothing. */
  exactSnapshot(): EngineSnapshot {
    return takeSnapshot(this.#ctx, this.seed, false);
  }

  /** Replaces the whole state with a snapshot; on a bad snapshot nothing changes. */
  restore(snapshot: unknown): Result<EngineStats> {
    // Every check first (the old state stays whole on a refusal), then the swap (restoreChecked).
    const checked = checkSnapshotRecords(snapshot, this.#ctx.sha256);
    if (!checked.ok) return checked;
    this.#swapIn(checked.value);
    return ok(this.stats());
  }

  /**
   * A reader of a snapshot's JSON text fed in pieces (SnapshotReader: one record at a time), whose
   * result `restoreChecked` swaps in. For snapshots too large to parse at once.
   */
  snapshotReader(): SnapshotReader {
    return new SnapshotReader(this.#ctx.sha256);
  }

  /**
   * Replaces the whole state with a snapshot already checked (read from text record by record:
   * SnapshotReader). It cannot fail: every check ran while the snapshot was read.
   */
  restoreChecked(checked: CheckedSnapshot): EngineStats {
    this.#swapIn(checked.consume());
    return this.stats();
  }

  /**
   * Replaces the state with a checked snapshot's. Nothing can fail from here, so the old state is
   * let go before the new one is assembled: the collector may reclaim it while the new one's
   * indexes are filled, instead of holding both states at once. Synchronous: no operation sees
   * the empty state in between.
   */
  #swapIn(records: CheckedRecords): void {
    this.#ctx.state = emptyState();
    this.#ctx.state = stateFromChecked(records);
    this.#ctx.random.setState(records.snapshot.randomState);
  }

  /** Back to an empty state and the start of the seeded sequence, without faults (the clock is not touched). */
  reset(): void {
    this.#ctx.state = emptyState();
    this.#ctx.random.reseed(this.seed);
    this.setFaults(null);
  }

  /**
   * Deliberate wrong behaviour for testing checkers (faults.ts): over-admitted verifications,
   * skipped refills, lost decrements, each at a rate 0..1, optionally only in some operations.
   * Replaces the whole configuration; null (or every rate 0) removes it. The decisions restart
   * from the seed at each call. Not part of snapshots; reset clears it.
   */
  setFaults(faults: EngineFaults | null): Result<EngineFaultsView | null> {
    if (faults === null) {
      this.#faults = null;
      this.#ctx.faults = null;
      return ok(null);
    }
    const checked = checkEngineFaults(faults);
    if (!checked.ok) return checked;
    const view = checked.value;
    this.#faults = view;
    this.#faultRandom.reseed(faultSeed(this.seed));
    // Every rate 0: nothing can happen, so the hot path keeps its single null check.
    this.#ctx.faults = ENGINE_FAULT_RATES.every((name) => view[name] === 0)
      ? null
      : {
          overAdmitRate: view.overAdmitRate,
          skipRefillRate: view.skipRefillRate,
          lostDecrementRate: view.lostDecrementRate,
          operations: view.operations === undefined ? null : new Set(view.operations),
          random: this.#faultRandom,
        };
    return ok(structuredClone(view));
  }

  /** Where the engine faults' decisions stand: a store checkpoint carries it, so that a replica draws the same next. */
  faultDicePosition(): [number, number, number, number] {
    return this.#faultRandom.getState();
  }

  resumeFaultDice(position: readonly [number, number, number, number]): void {
    this.#faultRandom.setState(position);
  }

  /** The current fault configuration (a copy), or null when none is set. */
  get faults(): EngineFaultsView | null {
    return this.#faults === null ? null : structuredClone(this.#faults);
  }

  stats(): EngineStats {
    const s = this.#ctx.state;
    return {
      workspaces: s.workspaces.size,
      apis: s.apis.size,
      keys: s.keys.size,
      identities: s.identities.size,
      namespaces: s.namespaces.size,
      overrides: s.overrides.size,
      windows: s.windows.size,
    };
  }
}
