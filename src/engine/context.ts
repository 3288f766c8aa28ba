import type { Clock } from './clock.js';
import type { Random } from './random.js';
import type { ActiveFaults } from './faults.js';
import type { EngineState } from './state.js';
import { base58Encode } from './base58.js';
import type { RegionalHook } from './regional-hook.js';

/**
 * Which behaviour to follow where the interface document and the production service differ
 * (docs/departures.md#compat-mode): 'interface' (the default) follows the document.
 */
export type Compat = 'interface' | 'production';

/** What every operation is handed: the state and the injected time, randomness and hash. */
export interface EngineContext {
  state: EngineState;
  clock: Clock;
  random: Random;
  compat: Compat;
  /** SHA-256 as unpadded base64url (root keys, snapshots); pure TypeScript by default, the platform's where it is faster. */
  sha256: (text: string) => string;
  /** SHA-256 as a string of its 32 bytes: how a key's hash is held and looked up (key-digest.ts). */
  keyDigest: (text: string) => string;
  /** Deliberate wrong behaviour (faults.ts); null — the default — costs one check per use. */
  faults: ActiveFaults | null;
  /** The last root key authenticated and its hash (auth.ts); absent: every root key is hashed. */
  rootKeyMemo?: RootKeyMemo;
  /**
   * One region of the production profile in front of this engine, while one of its operations
   * runs (regional.ts, Engine.inRegion); null or absent — the exact engine — costs one check per
   * verification.
   */
  regional?: RegionalHook | null;
}

/**
 * Clients send the same root key on every call: remembering the last one and its hash spares a
 * SHA-256 per request. A pure function's cache, outside the state (never in a snapshot).
 */
export interface RootKeyMemo {
  plaintext: string;
  hash: string;
}

/** A new id `<prefix>_<base58 of 12 random bytes>` (a flat string); reproducible from the seed. */
export function newId(ctx: EngineContext, prefix: string): string {
  return base58Encode(ctx.random.bytes(12), `${prefix}_`);
}
