/**
 * The start of a store-backed simulator, kept in Redis beside its log: what every replica builds
 * its copy of the state from before it applies the log (seed, operator root key, clock, compat,
 * start faults). The first replica writes it (SET NX); the others adopt it, so replicas started
 * with different defaults (a start time of "now", say) still hold the same state.
 */
import type { Compat } from '../../engine/index.js';
import type { FaultsConfig } from '../faults.js';
import type { RedisLink } from './redis-link.js';

export const GENESIS_FORMAT = 'keysim-store/1';

export const ANOTHER_ROOT_KEY =
  "the store already holds a simulator with another operator root key; give the same --root-key as the first replica (or none, to use the store's), or start a new simulator with another --store-prefix.";

export interface Genesis {
  format: typeof GENESIS_FORMAT;
  /** The keysim version of the first replica: every replica must apply the log by the same rules. */
  version: string;
  seed: number;
  /** The operator's root key; null: the one generated from the seed. */
  rootKey: string | null;
  clock: 'manual' | 'system';
  startMs: number;
  compat: Compat;
  faults: FaultsConfig | null;
  /** Redis's clock when the genesis was written, Unix ms: the real time the clock started at. */
  stampMs: number;
}

export type GenesisWish = Omit<Genesis, 'format' | 'stampMs'>;

async function redisNowMs(link: RedisLink, key: string): Promise<number> {
  const [seconds, micros] = (await link.command(key, ['TIME'])) as [string, string];
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

function checkGenesis(text: string, key: string): Genesis {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  const genesis = value as Partial<Genesis> | undefined;
  if (genesis?.format !== GENESIS_FORMAT || typeof genesis.seed !== 'number' || typeof genesis.startMs !== 'number' || typeof genesis.stampMs !== 'number') {
    throw new Error(
      `the store's key ${key} does not hold a keysim start state (${GENESIS_FORMAT}); another program may use these keys. Give another --store-prefix, or another database number in the --store URL.`,
    );
  }
  return genesis as Genesis;
}

/**
 * The store's start state: the one already there, or `wish` written as it (the first replica).
 * `created` says which. A root key asked for that differs from the store's is an error: the
 * operator's credential must be the same on every replica.
 */
export async function storeGenesis(link: RedisLink, key: string, wish: GenesisWish): Promise<{ genesis: Genesis; created: boolean }> {
  const stampMs = await redisNowMs(link, key);
  const proposed: Genesis = { format: GENESIS_FORMAT, ...wish, stampMs };
  const set = await link.command(key, ['SET', key, JSON.stringify(proposed), 'NX']);
  if (set === 'OK') return { genesis: proposed, created: true };
  const text = await link.command(key, ['GET', key]);
  const genesis = checkGenesis(String(text), key);
  if (genesis.version !== wish.version) {
    throw new Error(
      `the store holds a simulator started by keysim ${genesis.version}, and this is keysim ${wish.version}: every replica must run the same version. Start this replica with keysim ${genesis.version}, or start a new simulator with another --store-prefix.`,
    );
  }
  // A store without a root key uses the one generated from its seed: only the state built from it
  // knows that key, so a root key asked for is checked against it then (open-store.ts, attach).
  if (wish.rootKey !== null && genesis.rootKey !== null && genesis.rootKey !== wish.rootKey) throw new Error(ANOTHER_ROOT_KEY);
  return { genesis, created: false };
}
