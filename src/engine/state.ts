/**
 * The engine's records. Every record is plain JSON (null, never undefined, for an absent value),
 * so a snapshot is the records themselves and a restore rebuilds only the lookup indexes.
 */
import type { EpochMs } from './clock.js';
import { KeyOwners } from './key-owners.js';
import type { RefillConfig } from './refill-config.js';

export type { RefillConfig };

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

export interface WorkspaceRecord {
  id: string;
  name: string;
  /** Whether the vault is set up (needed for recoverable keys and decryption). */
  vaultEnabled: boolean;
  createdAt: EpochMs;
}

export interface RootKeyRecord {
  id: string;
  /** SHA-256 of the root key; the plaintext is never stored. */
  hash: string;
  workspaceId: string;
  permissions: string[];
  createdAt: EpochMs;
}

export interface ApiRecord {
  id: string;
  workspaceId: string;
  name: string;
  /** Whether the API is set up to handle keys; without it createKey answers 412. */
  keyAuth: boolean;
  /** Whether the API supports key encryption (recoverable keys, decrypt). */
  encryption: boolean;
  createdAt: EpochMs;
}

/** A named rate limit attached to a key or an identity. */
export interface RateLimitRecord {
  id: string;
  name: string;
  limit: number;
  durationMs: number;
  autoApply: boolean;
}

export interface KeyRecord {
  id: string;
  apiId: string;
  workspaceId: string;
  /** SHA-256 of the key material, unpadded base64url. */
  hash: string;
  /** The first characters of the key, safe to show. */
  start: string;
  name: string | null;
  meta: JsonObject | null;
  permissions: string[];
  roles: string[];
  expiresAtMs: EpochMs | null;
  enabled: boolean;
  createdAt: EpochMs;
  identityId: string | null;
  /** Credits left; null = unlimited. */
  remaining: number | null;
  refill: RefillConfig | null;
  /** The next refill boundary not yet applied (null without refill). See credits.ts. */
  nextRefillAtMs: EpochMs | null;
  ratelimits: RateLimitRecord[];
  /** The plaintext, kept only for recoverable keys (what the vault would hold encrypted). */
  recoverablePlaintext: string | null;
}

export interface IdentityRecord {
  id: string;
  workspaceId: string;
  externalId: string;
  meta: JsonObject | null;
  ratelimits: RateLimitRecord[];
  createdAt: EpochMs;
}

export interface NamespaceRecord {
  id: string;
  workspaceId: string;
  name: string;
  createdAt: EpochMs;
  /** Set when deleted: the namespace then answers 410 instead of 404. */
  deletedAt: EpochMs | null;
}

export interface OverrideRecord {
  id: string;
  namespaceId: string;
  identifier: string;
  limit: number;
  durationMs: number;
  createdAt: EpochMs;
}

/** Two fixed windows of the sliding-window algorithm (ratelimit-window.ts). */
export interface WindowCounter {
  /** floor(now / duration) of the current window. */
  window: number;
  current: number;
  previous: number;
}

export interface OverrideIndex {
  exact: Map<string, OverrideRecord>;
  wildcards: Array<{ record: OverrideRecord; pattern: RegExp }>;
}

/** The whole mutable state, with lookup indexes that are derived from the records. */
export interface EngineState {
  workspaces: Map<string, WorkspaceRecord>;
  rootKeysByHash: Map<string, RootKeyRecord>;
  apis: Map<string, ApiRecord>;
  keys: Map<string, KeyRecord>;
  /** The key's hash as its 32 bytes (key-digest.ts: `StoredKey.digest`) → key. */
  keysByDigest: Map<string, KeyRecord>;
  identities: Map<string, IdentityRecord>;
  /** `${workspaceId}\0${externalId}` → live identity. */
  identitiesByExternalId: Map<string, IdentityRecord>;
  namespaces: Map<string, NamespaceRecord>;
  overrides: Map<string, OverrideRecord>;
  /** `${workspaceId}\0${name}` → live namespace. */
  namespacesByName: Map<string, NamespaceRecord>;
  /** Per namespace id: its overrides by exact identifier and its wildcard overrides (built lazily). */
  overrideIndex: Map<string, OverrideIndex>;
  /** `${counterScope}\0${identifier}\0${durationMs}` → counter. */
  windows: Map<string, WindowCounter>;
  /** Bytes of metadata held over every key and identity (meta.ts bounds it). */
  metaBytes: number;
  /** The owners (API and workspace ids) the keys of each API share (key-owners.ts): the state's own. */
  keyOwners: KeyOwners;
}

export function emptyState(): EngineState {
  return {
    workspaces: new Map(),
    rootKeysByHash: new Map(),
    apis: new Map(),
    keys: new Map(),
    keysByDigest: new Map(),
    identities: new Map(),
    identitiesByExternalId: new Map(),
    namespaces: new Map(),
    overrides: new Map(),
    namespacesByName: new Map(),
    overrideIndex: new Map(),
    windows: new Map(),
    metaBytes: 0,
    keyOwners: new KeyOwners(),
  };
}

export function namespaceNameKey(workspaceId: string, name: string): string {
  return `${workspaceId}\0${name}`;
}

export function externalIdKey(workspaceId: string, externalId: string): string {
  return `${workspaceId}\0${externalId}`;
}
