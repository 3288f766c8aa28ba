/**
 * Replays a journal (journal.ts) through a fresh engine: the same route handlers, on a state
 * restored from the snapshot the journal started with, on a manual clock set to each entry's
 * instant — without the transport, the API rate limit or any injected fault. What it answers is
 * what a correct simulator executing the same order would have answered; the oracle compares it
 * with what the client received.
 *
 * The journal holds hashes where the client sent credentials (the bearer root key, a verified
 * key): the replay's engine hashes like the simulator's, except that it takes a value marked as
 * already hashed as its own hash — the engine only ever looks those credentials up by hash.
 */
import { Engine, ManualClock } from '../engine/index.js';
import { ApiRateLimiter } from './api-rate-limit.js';
import { fromEngine, problemBody, replyBody } from './envelope.js';
import { FaultInjector } from './faults.js';
import { OPERATIONS } from './operations.js';
import { HASHED_INPUT_FIELDS, Journal, type JournalEntry } from './journal.js';
import { DEFAULT_ERRORS_URL } from './problems.js';
import type { Route, RouteContext } from './route.js';
import { ROUTES, routeTable } from './routes.js';
import { nodeSha256 } from './simulator.js';

/** What `/_sim/journal.start` answers. */
export interface JournalStart {
  snapshot: unknown;
  startedAtMs: number;
  /** SHA-256 of the operator's root key: the replay's admin surface answers the same caller. */
  operatorRootKeyHash: string;
}

/**
 * Marks a value as a hash already. A NUL character: neither a generated key nor a JSON-borne
 * credential the engine hashes in a replay can start with it, since every credential in a
 * journal is a hash and every generated key is base58.
 */
const HASHED = '\u0000sha256:';

/** The platform's SHA-256, except for values marked as hashed (the journal's credentials). */
function replaySha256(text: string): string {
  return text.startsWith(HASHED) ? text.slice(HASHED.length) : nodeSha256(text);
}

/** The entry's input with its hashed credential fields marked as such. */
function markedInput(entry: JournalEntry): unknown {
  const fields = HASHED_INPUT_FIELDS[entry.path];
  if (fields === undefined || typeof entry.input !== 'object' || entry.input === null) return entry.input;
  const copy: Record<string, unknown> = { ...(entry.input as Record<string, unknown>) };
  for (const field of fields) {
    const value = copy[field];
    if (typeof value === 'string') copy[field] = `${HASHED}${value}`;
  }
  return copy;
}

/** An answer as the wire would carry it. */
export interface ReplayedAnswer {
  status: number;
  body: unknown;
}

function isSnapshotLike(value: unknown): value is { seed: number; compat: 'interface' | 'production' } {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as { seed?: unknown; compat?: unknown };
  return typeof v.seed === 'number' && (v.compat === 'interface' || v.compat === 'production');
}

export class JournalReplayer {
  readonly #ctx: RouteContext;
  readonly #clock: ManualClock;
  readonly #routes = routeTable(ROUTES);
  #replayed = 0;

  private constructor(ctx: RouteContext, clock: ManualClock) {
    this.#ctx = ctx;
    this.#clock = clock;
  }

  /** A fresh engine in the journal's starting state; throws with the reason when the snapshot is unusable. */
  static create(start: JournalStart): JournalReplayer {
    if (!isSnapshotLike(start.snapshot)) throw new Error('the journal start carries no engine snapshot (seed and compat missing)');
    if (typeof start.operatorRootKeyHash !== 'string') throw new Error("the journal start does not name the operator's root-key hash");
    const clock = new ManualClock(start.startedAtMs);
    const engine = new Engine({ clock, seed: start.snapshot.seed, compat: start.snapshot.compat, sha256: replaySha256 });
    const restored = engine.restore(start.snapshot);
    if (!restored.ok) throw new Error(`the journal's snapshot cannot be restored: ${restored.error.detail}`);
    const ctx: RouteContext = {
      engine,
      clock,
      apiRateLimit: new ApiRateLimiter(),
      faults: new FaultInjector(engine, start.snapshot.seed, OPERATIONS),
      journal: new Journal(nodeSha256),
      operatorRootKeyHash: start.operatorRootKeyHash,
      // Resets end a journal; they are never in one.
      reset: () => {
        throw new Error('a reset is not replayed');
      },
    };
    return new JournalReplayer(ctx, clock);
  }

  /** Entries replayed so far. */
  get replayed(): number {
    return this.#replayed;
  }

  /** Executes one entry (entries must come in journal order) and answers what the wire would carry. */
  apply(entry: JournalEntry): ReplayedAnswer {
    const route: Route | undefined = this.#routes.get(entry.path)?.find((r) => r.method === entry.method);
    if (route === undefined) throw new Error(`the journal names ${entry.method} ${entry.path}, which this simulator does not serve`);
    // A running (system) clock may read a hair earlier than the previous entry; never go back.
    if (entry.atMs > this.#clock.now()) this.#clock.set(entry.atMs);
    this.#replayed++;
    let result: ReturnType<Route['handle']>;
    try {
      result = route.handle(this.#ctx, entry.rootKeyHash === undefined ? undefined : `${HASHED}${entry.rootKeyHash}`, markedInput(entry));
    } catch (error) {
      const problem = fromEngine({
        code: 'err:service:application:unexpected_error',
        detail: `replay failed: ${error instanceof Error ? error.message : String(error)}`,
      });
      return { status: problem.status, body: problemBody(route.style, 'replay', problem, DEFAULT_ERRORS_URL) };
    }
    if (!result.ok) {
      const problem = fromEngine(result.error);
      return { status: problem.status, body: problemBody(route.style, 'replay', problem, DEFAULT_ERRORS_URL) };
    }
    return { status: 200, body: replyBody(route, 'replay', result.value) };
  }
}
