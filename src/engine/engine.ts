/**
 * The whole service as one synchronous object on an injected clock: every operation of the
 * interface, grouped as the v2 API groups them, plus the fixtures the simulator's admin surface
 * needs. Management operations take the caller's root key (the bearer token) first.
 */
import type { ControllableClock, Clock } from './clock.js';
import { type Compat, type EngineContext } from './context.js';
import { type Result, ok } from './errors.js';
import { Random } from './random.js';
import { sha256Base64Url } from './sha256.js';
import { emptyState } from './state.js';
import { authenticate, type Caller } from './auth.js';
import { type ConfigureApiInput, type CreateWorkspaceInput, configureApi, configureVault, createApi, createRootKey, createWorkspace } from './workspace.js';
import { createKey, deleteKey, getKey, updateCredits, updateKey } from './keys.js';
import { verifyKey } from './verify.js';
import { createIdentity, deleteIdentity, getIdentity, listIdentities, updateIdentity } from './identities.js';
import { createNamespace, deleteNamespace, deleteOverride, getOverride, limit, listOverrides, multiLimit, setOverride } from './ratelimit.js';
import { type EngineSnapshot, stateFromSnapshot, takeSnapshot } from './snapshot.js';

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

export class Engine {
  readonly clock: Clock;
  readonly compat: Compat;
  readonly seed: number;
  readonly #ctx: EngineContext;

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
    };
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
    createRootKey: (workspaceId: string, permissions: readonly string[], plaintext?: string) =>
      createRootKey(this.#ctx, workspaceId, permissions, plaintext),
    configureApi: (workspaceId: string, input: ConfigureApiInput) => configureApi(this.#ctx, workspaceId, input),
    configureVault: (workspaceId: string, enabled: boolean) => configureVault(this.#ctx, workspaceId, enabled),
    createNamespace: (workspaceId: string, name: string) => createNamespace(this.#ctx, workspaceId, name),
    deleteNamespace: (workspaceId: string, namespace: string) => deleteNamespace(this.#ctx, workspaceId, namespace),
  };

  /** The whole state as plain JSON (deep copy). */
  snapshot(): EngineSnapshot {
    return takeSnapshot(this.#ctx, this.seed);
  }

  /** Replaces the whole state with a snapshot; on a bad snapshot nothing changes. */
  restore(snapshot: unknown): Result<EngineStats> {
    const parsed = stateFromSnapshot(snapshot);
    if (!parsed.ok) return parsed;
    this.#ctx.state = parsed.value.state;
    this.#ctx.random.setState(parsed.value.snapshot.randomState);
    return ok(this.stats());
  }

  /** Back to an empty state and the start of the seeded sequence (the clock is not touched). */
  reset(): void {
    this.#ctx.state = emptyState();
    this.#ctx.random.reseed(this.seed);
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
