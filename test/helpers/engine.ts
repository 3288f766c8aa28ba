/** Builds an engine with one workspace, an all-powerful root key and one API, on a manual clock. */
import { Engine, ManualClock, type Compat, type Result } from '../../src/engine/index.js';

export interface EngineFixture {
  engine: Engine;
  clock: ManualClock;
  rootKey: string;
  workspaceId: string;
  apiId: string;
}

/** Default start: 2027-01-15T12:00:00Z, a Friday in a common year. */
export const DEFAULT_START_MS = Date.UTC(2027, 0, 15, 12);

export function makeEngine(options: { startMs?: number; seed?: number; compat?: Compat } = {}): EngineFixture {
  const clock = new ManualClock(options.startMs ?? DEFAULT_START_MS);
  const engine = new Engine({ clock, seed: options.seed ?? 1, compat: options.compat ?? 'interface' });
  const ws = unwrap(engine.admin.createWorkspace({ name: 'test' }));
  const api = unwrap(engine.apis.createApi(ws.rootKey, { name: 'test-api' }));
  return { engine, clock, rootKey: ws.rootKey, workspaceId: ws.workspaceId, apiId: api.apiId };
}

/** The value of a successful result; throws with the error's detail otherwise. */
export function unwrap<T>(result: Result<T>): T {
  if (!result.ok) throw new Error(`expected success, got ${result.error.code}: ${result.error.detail}`);
  return result.value;
}

/** The error code of a failed result; throws if it succeeded. */
export function errorCode(result: Result<unknown>): string {
  if (result.ok) throw new Error(`expected an error, got success: ${JSON.stringify(result.value)}`);
  return result.error.code;
}
