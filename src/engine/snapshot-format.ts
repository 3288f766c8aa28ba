/**
 * The shape of a snapshot: what takeSnapshot (snapshot.ts) writes and checkSnapshot
 * (snapshot-check.ts) accepts, in a module of its own so that neither imports the other for it.
 */
import type { EpochMs } from './clock.js';
import type { Compat } from './context.js';
import type { ApiRecord, IdentityRecord, KeyRecord, NamespaceRecord, OverrideRecord, RootKeyRecord, WindowCounter, WorkspaceRecord } from './state.js';

export const SNAPSHOT_FORMAT = 'keysim-engine-snapshot';
export const SNAPSHOT_VERSION = 1;

export interface EngineSnapshot {
  format: typeof SNAPSHOT_FORMAT;
  version: typeof SNAPSHOT_VERSION;
  compat: Compat;
  seed: number;
  /** The random generator's position, so a restored engine draws the same ids as the original. */
  randomState: [number, number, number, number];
  takenAtMs: EpochMs;
  workspaces: WorkspaceRecord[];
  rootKeys: RootKeyRecord[];
  apis: ApiRecord[];
  keys: KeyRecord[];
  identities: IdentityRecord[];
  namespaces: NamespaceRecord[];
  overrides: OverrideRecord[];
  windows: Array<[string, WindowCounter]>;
}
