/** A production profile on a manual clock: one workspace, its root key, one API, N regions. */
import { Engine, ManualClock, ProductionProfile, type CreateKeyInput, type EngineSurface, type ProductionFigures } from '../../src/engine/index.js';
import { DEFAULT_START_MS, unwrap } from './engine.js';

export interface ProfileFixture {
  profile: ProductionProfile;
  engine: Engine;
  clock: ManualClock;
  rootKey: string;
  apiId: string;
  /** Region n (1-based). */
  region(n: number): EngineSurface;
  createKey(input?: Omit<CreateKeyInput, 'apiId'>): { key: string; keyId: string };
  /** The database's balance (refills and due debits settled). */
  balance(keyId: string): number | null;
  /** Moves the clock past every buffered debit and every counter's life: every region converges. */
  converge(): void;
}

export function makeProfile(options: { startMs?: number; seed?: number } & Partial<ProductionFigures> = {}): ProfileFixture {
  const { startMs, seed, ...figures } = options;
  const clock = new ManualClock(startMs ?? DEFAULT_START_MS);
  // The production service's refill rule (a balance already at least the amount is left alone).
  const engine = new Engine({ clock, seed: seed ?? 1, compat: 'production' });
  const ws = unwrap(engine.admin.createWorkspace({ name: 'test' }));
  const profile = new ProductionProfile({ engine, ...figures });
  const region = (n: number) => profile.region(n);
  const apiId = unwrap(region(1).apis.createApi(ws.rootKey, { name: 'test-api' })).apiId;
  return {
    profile,
    engine,
    clock,
    rootKey: ws.rootKey,
    apiId,
    region,
    createKey: (input = {}) => unwrap(region(1).keys.createKey(ws.rootKey, { apiId, ...input })),
    balance(keyId) {
      profile.settle();
      const balance = engine.database.balance(keyId, clock.now());
      if (balance === undefined) throw new Error(`no key ${keyId} in the database`);
      return balance;
    },
    converge() {
      const last = Math.max(profile.lastReplayDueMs ?? 0, clock.now());
      clock.set(last + profile.figures.counterTtlMs);
    },
  };
}
