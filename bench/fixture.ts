/**
 * An engine for the benchmarks: one workspace, its root key and one API on a manual clock, with
 * either SHA-256 the engine can use (its own pure-TypeScript one, or the platform's).
 */
import { hash } from 'node:crypto';
import { Engine, ManualClock, type Result, sha256Digest } from '../src/engine/index.js';

/** 'ts': the engine's default pure-TypeScript SHA-256; 'node': node:crypto, as the HTTP server injects it. */
export type HashVariant = 'ts' | 'node';

export const HASH_VARIANTS: readonly HashVariant[] = ['ts', 'node'];

export const HASH_LABEL: Record<HashVariant, string> = {
  ts: 'pure-TS sha256 (engine default)',
  node: 'node:crypto hash (as the server)',
};

export const HASH_SHORT: Record<HashVariant, string> = {
  ts: 'pure-TS',
  node: 'node:crypto',
};

export function isHashVariant(value: string | undefined): value is HashVariant {
  return value === 'ts' || value === 'node';
}

/** The platform SHA-256, exactly as the HTTP server passes it to the engine: base64url (root keys) and the 32 bytes (keys). */
export const nodeSha256 = (text: string): string => hash('sha256', text, 'base64url');
export const nodeSha256Digest = (text: string): string => hash('sha256', text, 'binary');

/** The hash a verification computes: a key's digest (src/engine/key-digest.ts). */
export function sha256Of(variant: HashVariant): (text: string) => string {
  return variant === 'ts' ? sha256Digest : nodeSha256Digest;
}

/** 2027-01-15T12:00:00Z, the same start as the tests. */
export const START_MS = Date.UTC(2027, 0, 15, 12);

export interface BenchFixture {
  engine: Engine;
  clock: ManualClock;
  rootKey: string;
  apiId: string;
}

export function unwrap<T>(result: Result<T>): T {
  if (!result.ok) throw new Error(`expected success, got ${result.error.code}: ${result.error.detail}`);
  return result.value;
}

export function buildEngine(variant: HashVariant): BenchFixture {
  const clock = new ManualClock(START_MS);
  // The default variant passes no sha256 at all, so the engine takes its own default path.
  const engine = new Engine(variant === 'ts' ? { clock } : { clock, sha256: nodeSha256, sha256Digest: nodeSha256Digest });
  const ws = unwrap(engine.admin.createWorkspace({ name: 'bench' }));
  const api = unwrap(engine.apis.createApi(ws.rootKey, { name: 'bench-api' }));
  return { engine, clock, rootKey: ws.rootKey, apiId: api.apiId };
}

/** Creates a key with `remaining` credits and a monthly refill to the same amount; returns its plaintext. */
export function createCreditKey(fx: BenchFixture, remaining: number): string {
  return unwrap(
    fx.engine.keys.createKey(fx.rootKey, {
      apiId: fx.apiId,
      credits: { remaining, refill: { interval: 'monthly', amount: remaining } },
    }),
  ).key;
}
