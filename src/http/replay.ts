/**
 * Replays a journal (journal.ts) through a fresh engine: the same route handlers, on a state
 * restored from the snapshot the journal started with, on a manual clock set to each entry's
 * instant — without the transport, the API rate limit or any injected fault. What it answers is
 * what a correct simulator executing the same order would have answered; the oracle compares it
 * with what the client received.
 *
 * A journal of the production profile names the profile's figures in its start: the replay runs
 * a profile with those figures over the restored engine (its seed, from the snapshot, seeds the
 * delays), and each entry in the region it ran in. The start was a sync point (admin.ts), so a
 * fresh profile's empty regions are the live ones' state at that instant.
 *
 * The journal holds hashes where the client sent credentials (the bearer root key, a verified
 * key): the replay's engine hashes like the simulator's, except that it takes a value marked as
 * already hashed as its own hash — the engine only ever looks those credentials up by hash.
 */
import { Engine, ManualClock, ProductionProfile } from '../engine/index.js';
import { ApiRateLimiter } from './api-rate-limit.js';
import { fromEngine, problemBody, replyBody } from './envelope.js';
import { FaultInjector } from './faults.js';
import { OPERATIONS } from './operations.js';
import { HASHED_INPUT_FIELDS, Journal, type JournalEntry, type JournalProfile, type JournalStart } from './journal.js';
import { DEFAULT_ERRORS_URL } from './problems.js';
import type { Route, RouteContext } from './route.js';
import { regionContexts } from './regions.js';
import { ROUTES, routeTable } from './routes.js';
import { nodeSha256 } from './simulator.js';

export type { JournalStart } from './journal.js';

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

/** The profile a journal start names, over the replay's engine; throws with the reason when it is unusable. */
function replayProfile(engine: Engine, profile: JournalProfile | undefined): ProductionProfile | undefined {
  if (profile === undefined) return undefined;
  if (typeof profile !== 'object' || profile === null || profile.name !== 'production' || typeof profile.figures !== 'object') {
    throw new Error(`the journal start names a profile keysim does not know (${JSON.stringify(profile).slice(0, 80)}): only "production", with its figures`);
  }
  try {
    return new ProductionProfile({ engine, ...profile.figures });
  } catch (error) {
    throw new Error(`the journal start's production profile cannot be built: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}

export class JournalReplayer {
  /** The exact engine's context; on the production profile, the database's (regions below). */
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
    // Built after the restore: its regions start empty and its delays at the start of the seed's
    // sequence, as the live profile's were after the sync point the start was.
    const profile = replayProfile(engine, start.profile);
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
    if (profile !== undefined) ctx.regions = regionContexts(ctx, profile);
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
    const here = this.#contextOf(entry);
    // A running (system) clock may read a hair earlier than the previous entry; never go back.
    if (entry.atMs > this.#clock.now()) this.#clock.set(entry.atMs);
    this.#replayed++;
    let result: ReturnType<Route['handle']>;
    try {
      result = route.handle(here, entry.rootKeyHash === undefined ? undefined : `${HASHED}${entry.rootKeyHash}`, markedInput(entry));
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

  /** The context an entry runs in: its region's on the production profile (as executeCall chose it live). */
  #contextOf(entry: JournalEntry): RouteContext {
    const regions = this.#ctx.regions;
    const where = `journal entry ${entry.index} (${entry.method} ${entry.path})`;
    if (regions === undefined) {
      if (entry.region === undefined) return this.#ctx;
      throw new Error(
        `${where} ran in region ${String(entry.region)}, but the journal's start names no production profile: the journal and its start do not belong together`,
      );
    }
    const count = regions.contexts.length;
    if (entry.region === undefined) {
      throw new Error(
        `${where} names no region, but the journal ran on the production profile (${count} regions): every entry needs the region it ran in, 1 to ${count}`,
      );
    }
    const context = Number.isInteger(entry.region) ? regions.contexts[entry.region - 1] : undefined;
    if (context === undefined) throw new Error(`${where} names region ${String(entry.region)}, but the journal's profile has regions 1 to ${count}`);
    return context;
  }
}
