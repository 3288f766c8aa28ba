/**
 * The steps of a run before its load, in the order runner.ts takes them: the clock mode a
 * scenario needs, the history and the oracle, the scenario's context, the service clock's start,
 * the fixtures, the start instant of a segment, and the clock the phases run on.
 */
import { dirname, join } from 'node:path';
import { hostname } from 'node:os';
import { Random } from '../../engine/index.js';
import { type RunSkew, liveRunSkew } from './clock-skew.js';
import { clockModeRefusal } from '../time/index.js';
import { DEFAULT_WALL_SKEW_MS, HistoryWriter } from '../history/index.js';
import { recordingServiceApi } from '../history/index.js';
import { JOURNAL_FILE } from '../history/index.js';
import { OpenModelExecutor } from '../executors/index.js';
import { UnknownOperationError } from '../scenario/index.js';
import { Oracle } from '../oracle/index.js';
import { promiseSet } from '../promises/index.js';
import type { ResourceLedger } from '../resources/index.js';
import { trackingServiceApi } from '../resources/index.js';
import { LATE_THRESHOLD_MS, type RunOptions } from './run-options.js';
import type { RunPlan } from './run-phases.js';
import { ScenarioFailedError, ScenarioRefusedError } from '../scenario/index.js';
import type { MeasureCollector, Scenario, ScenarioContext, SimulatorAdmin } from '../scenario/index.js';
import { startServiceClock, sweepProblemBeforeSetup, sweepsInThePast } from '../scenario/index.js';
import { type HttpJsonClient, ServiceCallError, serviceApi } from '../target/index.js';
import type { Target } from '../target/index.js';

/**
 * Refuses a scenario that needs a frozen clock on a running one. Before anything that changes the
 * target (the journal, the clock, the fixtures); the client is closed when the run goes no further.
 */
export async function refuseWrongClockMode(scenario: Scenario<unknown>, admin: SimulatorAdmin | undefined, url: string, client: HttpJsonClient): Promise<void> {
  const clockRefusal = await clockModeRefusal(scenario, admin, url).catch(async (error: unknown) => {
    await client.close();
    throw error;
  });
  if (clockRefusal !== undefined) {
    await client.close();
    throw new ScenarioRefusedError(scenario.name, 'its start', clockRefusal, true);
  }
}

/** The run's history when one is asked for, and on a live target the clock skew its decisions are placed with. */
export async function openRunHistory(
  options: RunOptions,
  startedAt: Date,
  tag: string,
  client: HttpJsonClient,
  log: (line: string) => void,
): Promise<{ history: HistoryWriter | undefined; skew: RunSkew | undefined }> {
  const { scenario, target, settings, seed } = options;
  if (options.historyPath === undefined) return { history: undefined, skew: undefined };
  // A live target records no service times: its decisions are placed by our clock ± this skew.
  let skew: RunSkew | undefined;
  if (target.kind === 'live') {
    skew = await liveRunSkew(target, {
      given: options.wallSkewMs,
      timeoutMs: settings.timeoutMs,
      fallbackMs: DEFAULT_WALL_SKEW_MS,
      plannedMs: settings.warmupMs + settings.durationMs,
    });
    log(skew.note);
  }
  const history = await HistoryWriter.create(options.historyPath, {
    startedAt: startedAt.toISOString(),
    // What keysim check matches before it combines the histories of one run's segments.
    run: {
      scenario: scenario.name,
      seed,
      target: target.kind,
      tag,
      ...(options.segment === undefined ? {} : { segment: { index: options.segment.index, count: options.segment.count } }),
      setUp: options.setupOnly !== undefined ? 'setup-only' : options.fixtures !== undefined ? 'shared' : 'own',
    },
    host: hostname(),
    ...(skew === undefined ? {} : { wallSkewMs: skew.wallSkewMs }),
  }).catch(async (error: unknown) => {
    await client.close();
    throw error;
  });
  // A segment's history names the set-up's keys by id from its first request on.
  if (options.fixtures?.keyIds !== undefined) history.keys.learnDigests(options.fixtures.keyIds);
  return { history, skew };
}

/** Why a segment runs no oracle (docs/distributed.md#segments). */
const SEGMENT_SHARES_JOURNAL =
  "a segment shares the simulator, and its one journal, with the plan's other segments, so no segment can replay it as its own; the invariants are judged across the segments (keysim merge, keysim check), and the oracle runs in a run of one process.";

/** The oracle of a run on the simulator with a history, or why it did not start; its drain timer. */
export interface RunOracle {
  oracle: Oracle | undefined;
  oracleProblem: string | undefined;
  oracleTimer: ReturnType<typeof setInterval> | undefined;
}

/** Starts the oracle (before the setup, so that the fixtures are in the journal it replays). */
export async function startRunOracle(history: HistoryWriter | undefined, options: RunOptions, client: HttpJsonClient): Promise<RunOracle> {
  if (history !== undefined && options.target.kind === 'simulator' && options.oracle !== false && options.segment !== undefined) {
    // The other segments load the same simulator: each one starting its journal would restart the
    // others', and replay their calls beside its own (a false difference, or a journal cut short).
    return { oracle: undefined, oracleProblem: SEGMENT_SHARES_JOURNAL, oracleTimer: undefined };
  }
  let oracleProblem: string | undefined;
  const oracle =
    history !== undefined && options.target.kind === 'simulator' && options.oracle !== false
      ? await Oracle.start(client, { journalPath: join(dirname(options.historyPath as string), JOURNAL_FILE) }).catch((error: unknown) => {
          oracleProblem = error instanceof Error ? error.message : String(error);
          return undefined;
        })
      : undefined;
  // About once a second, so that the simulator's journal stays small.
  const oracleTimer = oracle === undefined ? undefined : setInterval(() => oracle.drainIfIdle(), 1000);
  oracleTimer?.unref();
  return { oracle, oracleProblem, oracleTimer };
}

/** What the scenario's steps are handed: its calls go into the history and the ledger. */
export function scenarioContext(
  options: RunOptions,
  parts: {
    client: HttpJsonClient;
    history: HistoryWriter | undefined;
    ledger: ResourceLedger;
    admin: SimulatorAdmin | undefined;
    tag: string;
    log: (line: string) => void;
    cleanups: Array<() => Promise<void>>;
    /** Where ctx.measure's samples go. */
    measures: MeasureCollector;
  },
): ScenarioContext {
  const { target } = options;
  const { client, history, ledger, admin, cleanups } = parts;
  return {
    api: trackingServiceApi(
      history === undefined ? serviceApi(client) : recordingServiceApi(client, history, admin === undefined ? undefined : () => admin.clockNow()),
      ledger,
    ),
    admin,
    target: { kind: target.kind, url: target.url, ...(target.ca === undefined ? {} : { ca: target.ca }) },
    random: new Random(options.seed),
    tag: parts.tag,
    settings: options.settings,
    promises: options.promises ?? promiseSet('exact'),
    log: parts.log,
    onCleanup: (fn) => cleanups.push(fn),
    measure: (spec, value) => parts.measures.record(spec, value),
  };
}

/** Starts the service clock the run starts with, and checks the phases' sweeps against it, before setup. */
export async function startClockBeforeSetup(scenario: Scenario<unknown>, ctx: ScenarioContext): Promise<void> {
  let clockMs: number | undefined;
  try {
    clockMs = await startServiceClock(scenario, ctx);
  } catch (error) {
    throw new ScenarioFailedError(scenario.name, 'start', error);
  }
  const early = sweepProblemBeforeSetup(scenario, ctx, clockMs);
  if (early !== undefined) throw new ScenarioFailedError(scenario.name, 'start', early);
}

/** The fixtures: a shared set-up's (for a segment), or the scenario's own setup's. */
export async function setUpFixtures(scenario: Scenario<unknown>, ctx: ScenarioContext, options: RunOptions): Promise<unknown> {
  if (options.fixtures !== undefined) {
    return scenario.sharedFixtures === undefined ? options.fixtures.value : scenario.sharedFixtures.load(options.fixtures.value);
  }
  try {
    return await scenario.setup(ctx);
  } catch (error) {
    if (error instanceof UnknownOperationError) throw new ScenarioRefusedError(scenario.name, 'setup', error, false);
    throw new ScenarioFailedError(scenario.name, 'setup', error instanceof ServiceCallError ? error.message : error);
  }
}

/** Sleeps `ms`, or less when `signal` aborts. */
function abortableSleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted === true) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** Waits for a segment's start instant (--start-at), or says that it passed. */
export async function waitForStartInstant(options: RunOptions, now: () => Date, log: (line: string) => void, warn: (line: string) => void): Promise<void> {
  if (options.startAt === undefined) return;
  const waitMs = options.startAt.getTime() - now().getTime();
  if (waitMs > 0) {
    log(`waiting ${Math.round(waitMs)} ms for the start instant ${options.startAt.toISOString()}`);
    await abortableSleep(waitMs, options.signal);
  } else {
    // Setup took longer than the margin given: this segment's timeline starts late, the others' do not.
    warn(
      `the start instant ${options.startAt.toISOString()} passed ${Math.round(-waitMs)} ms before the load could start: this segment starts late (give --start-at more margin)`,
    );
  }
}

/**
 * Whether the service clock stands still during a phase; when it does, the sweeps that needed the
 * fixtures are checked against it, still before any load.
 */
export async function frozenClockAfterSetup(scenario: Scenario<unknown>, target: Target, ctx: ScenarioContext, plan: RunPlan): Promise<boolean> {
  // A remote simulator may run on the system clock, which moves during a phase by itself.
  // The embedded simulator too, when the scenario asked for a running clock (clockMode: 'running').
  const clockFrozen = target.kind === 'simulator' && (ctx.admin === undefined ? target.remote !== true : (await ctx.admin.clockMode()) === 'manual');
  // A clock that runs by itself cannot sweep at all: the phase says so when it starts.
  if (clockFrozen && ctx.admin !== undefined) {
    const late = sweepsInThePast(plan.specs, await ctx.admin.clockNow(), 'after setup', scenario.clock !== undefined);
    if (late !== undefined) throw new ScenarioFailedError(scenario.name, 'planning', late);
  }
  return clockFrozen;
}

/** The open model's executor, its connections to the target. */
export function openModelExecutor(target: Target, settings: RunOptions['settings']): OpenModelExecutor {
  return new OpenModelExecutor({
    url: target.url,
    rootKey: target.rootKey,
    connections: settings.connections,
    pipelining: settings.pipelining,
    timeoutMs: settings.timeoutMs,
    lateThresholdMs: LATE_THRESHOLD_MS,
    ca: target.ca,
  });
}
