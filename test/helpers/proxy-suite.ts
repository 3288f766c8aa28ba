/**
 * keysim's live-safe scenarios through a real nginx in one fault mode (nginx-modes.ts), in front
 * of the real simulator (system clock, production compat). One nginx per mode, started in
 * beforeAll, with one public port (and access log) per scenario; the scenarios run at once, as
 * `keysim run … --history` children (from the sources, with tsx):
 * - `limited-keys` and `ratelimit-live-edges` against one simulator whose admin surface the
 *   proxy hides (keysim sees a live deployment);
 * - `refill-midnight` against a second simulator, its clock put 25 s before one of its UTC
 *   midnights, with the admin surface forwarded: the simulator's `Date` header is this machine's
 *   time, so that clock can only be read there (keysim sees a remote simulator with a running
 *   clock, and waits for the midnight as on a live target).
 * Then, per scenario: the exit is a verdict (never 1), a report exists, no failed check or
 * violated invariant, nothing left, and the history's count of each verification operation equals
 * nginx's access log. After all of them: the simulators hold no key, identity or override.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes.js';
import type { Simulator } from '../../src/http/simulator.js';
import { type Finished, cleanEnv, cleanUpCli, runFolders, startCli, tempDir } from './cli.js';
import { holdings, startCountingSimulator } from './counting-target.js';
import { type Nginx, freePort, nginxBinary, startNginx } from './nginx.js';
import { type ProxyMode, modeBlocks } from './nginx-modes.js';

export const LIVE_SAFE = ['limited-keys', 'ratelimit-live-edges', 'refill-midnight'] as const;
type LiveSafe = (typeof LIVE_SAFE)[number];

/** The verification operations, whose requests are counted on both sides. */
const COUNTED = ['keys.verifyKey', 'ratelimit.limit'] as const;

/** Not judged on the generator's pace (the machine is shared): small, short, bounded. */
const SHORT = ['--duration', '2s', '--warmup', '0', '--rate', '10', '--connections', '2', '--quiet', '--max-late-share', '1', '--max-loop-delay', 'off'];

const DAY_MS = 86_400_000;
/**
 * How far before its midnight the simulator's clock is put as refill-midnight is started (its lead
 * is 3 s), and kept until the run's first request reaches the proxy (holdBeforeMidnight): the
 * CLI's start-up, however slow, is not counted in it. What it must cover is only the run's own
 * steps from its first request to its reading of the clock (in one process, well under a second
 * when idle), with at least 20 s; the run waits out the rest.
 */
const BEFORE_MIDNIGHT_MS = 25_000;

/** Skips only where nginx is missing and this is not CI; under CI a missing nginx fails. */
export const NO_NGINX = nginxBinary() === undefined && process.env.CI !== 'true';
if (NO_NGINX) console.warn('test/proxy: nginx is not installed, so the reverse-proxy suite is skipped (apt-get install nginx to run it)');

export interface ScenarioRun {
  finished: Finished;
  /** The run's report.json, parsed; undefined when none was written. */
  report: Record<string, unknown> | undefined;
  /** Operations of the run's history by name (undefined without --history or without a history file). */
  historyCounts: Record<string, number> | undefined;
  /** Of those, the operations recorded with an unknown outcome (no answer came). */
  unknownCounts: Record<string, number>;
}

interface ModeState {
  /** The live-looking target of limited-keys and ratelimit-live-edges (clock = this machine's). */
  sim: Simulator;
  /** refill-midnight's, its clock put BEFORE_MIDNIGHT_MS before one of its midnights. */
  midnightSim: Simulator;
  nginx: Nginx;
  runs: Record<LiveSafe, ScenarioRun>;
}

/** A private CA and a certificate for 127.0.0.1 signed by it, in `dir`: ca.crt, server.{crt,key}. */
function makeCertificates(dir: string): void {
  const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  ssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=keysim test CA', '-keyout', 'ca.key', '-out', 'ca.crt');
  ssl('req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=127.0.0.1', '-keyout', 'server.key', '-out', 'server.csr');
  const ext = join(dir, 'san.ext');
  execFileSync('sh', ['-c', `printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\\n' > ${ext}`]);
  ssl('x509', '-req', '-in', 'server.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '2', '-extfile', ext, '-out', 'server.crt');
}

function readRun(out: string, finished: Finished): ScenarioRun {
  const folder = runFolders(out)[0];
  let report: Record<string, unknown> | undefined;
  let historyCounts: Record<string, number> | undefined;
  const unknownCounts: Record<string, number> = {};
  if (folder !== undefined) {
    try {
      report = JSON.parse(readFileSync(join(folder, 'report.json'), 'utf8')) as Record<string, unknown>;
    } catch {
      report = undefined;
    }
    try {
      const lines = gunzipSync(readFileSync(join(folder, 'history.jsonl.gz')))
        .toString('utf8')
        .split('\n')
        .filter((l) => l !== '');
      historyCounts = {};
      for (const line of lines) {
        const { op, outcome } = JSON.parse(line) as { op?: unknown; outcome?: unknown };
        if (typeof op !== 'string') continue;
        historyCounts[op] = (historyCounts[op] ?? 0) + 1;
        if (outcome === 'unknown') unknownCounts[op] = (unknownCounts[op] ?? 0) + 1;
      }
    } catch {
      historyCounts = undefined;
    }
  }
  return { finished, report, historyCounts, unknownCounts };
}

async function runScenario(sim: Simulator, nginx: Nginx, scenario: LiveSafe, mode: ProxyMode, onStarted?: () => () => void): Promise<ScenarioRun> {
  const out = tempDir('keysim-proxy-');
  const args = ['run', scenario, '--target', nginx.urls[LIVE_SAFE.indexOf(scenario)] ?? '', '--yes', '--out', out, '--history', ...SHORT];
  if (mode.tls === true) args.push('--ca', join(nginx.dir, 'ca.crt'));
  const env = cleanEnv({ KEYSIM_ROOT_KEY: sim.rootKey, KEYSIM_MIDNIGHT_LEAD: '3s', KEYSIM_MIDNIGHT_MAX_WAIT: '3m' });
  const running = startCli(args, env);
  const stop = onStarted?.();
  try {
    return readRun(out, await running.exited);
  } finally {
    stop?.();
  }
}

/** The access log's requests to an operation's route, on the port of one scenario. */
const loggedFor = (nginx: Nginx, scenario: LiveSafe, op: string): number =>
  nginx.accessLog(nginx.ports[LIVE_SAFE.indexOf(scenario)] ?? 0).filter((l) => l.uri === `/v2/${op}`).length;

/** The exit codes a run may end with through a proxy that sheds, breaks or delays some answers. */
const VERDICTS: number[] = [EXIT.ok, EXIT.thresholdFailed, EXIT.generatorLimited, EXIT.targetStopped];

/** A mode's simulators and nginx, then its three runs at once; what it started goes to `closers`. */
async function runMode(mode: ProxyMode, closers: Array<() => Promise<void>>, keep: (state: ModeState) => void): Promise<void> {
  const faults = mode.simulatorFaults === undefined ? {} : { faults: mode.simulatorFaults };
  const sim = await startCountingSimulator({ clock: 'system', ...faults });
  closers.push(() => sim.close());
  const midnightSim = await startCountingSimulator({ clock: 'system', ...faults });
  closers.push(() => midnightSim.close());
  // refill-midnight waits for the target's next UTC midnight: its simulator's is put
  // BEFORE_MIDNIGHT_MS away as the run is started. The simulator's Date header is this machine's time, so the clock is read
  // on the admin surface, which that port forwards (keysim sees a remote simulator whose
  // clock runs, and waits for the midnight).
  const nearMidnight = () => {
    const now = midnightSim.clock.now();
    // The first midnight at least BEFORE_MIDNIGHT_MS away, so the move is always forward (set throws otherwise).
    midnightSim.clock.set((Math.floor((now + BEFORE_MIDNIGHT_MS) / DAY_MS) + 1) * DAY_MS - BEFORE_MIDNIGHT_MS);
  };
  // The lead is kept until the run's first request reaches the proxy: the CLI's start (tens of
  // seconds on a busy machine) once used it all up, the midnight passed before the scenario read
  // the clock, and it refused to wait a day (a test that depended on the machine's pace). Until
  // then nothing is on the simulator, so moving its clock a day on changes nothing.
  const holdBeforeMidnight = (): (() => void) => {
    const midnightPort = nginx.ports[LIVE_SAFE.indexOf('refill-midnight')] ?? 0;
    nearMidnight();
    const timer = setInterval(() => {
      if (nginx.accessLog(midnightPort).length > 0) return clearInterval(timer);
      const now = midnightSim.clock.now();
      if ((Math.floor(now / DAY_MS) + 1) * DAY_MS - now < BEFORE_MIDNIGHT_MS - 5_000) nearMidnight();
    }, 250);
    return () => clearInterval(timer);
  };
  const dead = mode.unreachable === true ? `http://127.0.0.1:${await freePort()}` : undefined;
  const targets = [
    { upstream: dead ?? sim.url, admin: false },
    { upstream: dead ?? sim.url, admin: false },
    { upstream: dead ?? midnightSim.url, admin: true },
  ];
  // One public port per scenario, each with its own access log.
  const nginx = await startNginx(modeBlocks(mode, targets), {
    ports: LIVE_SAFE.length,
    tls: mode.tls === true,
    ...(mode.tls === true ? { prepare: makeCertificates } : {}),
  });
  closers.unshift(() => nginx.stop());
  const state: ModeState = { sim, midnightSim, nginx, runs: {} as Record<LiveSafe, ScenarioRun> };
  keep(state);
  const [a, b, c] = await Promise.all([
    runScenario(sim, nginx, 'limited-keys', mode),
    runScenario(sim, nginx, 'ratelimit-live-edges', mode),
    runScenario(midnightSim, nginx, 'refill-midnight', mode, holdBeforeMidnight),
  ]);
  state.runs = { 'limited-keys': a, 'ratelimit-live-edges': b, 'refill-midnight': c };
}

/**
 * The suite for `modes`: every mode starts at once in one beforeAll (their runs mostly wait: for
 * window edges, for a midnight), then each mode's tests read its results.
 */
export function describeProxyModes(modes: readonly ProxyMode[]): void {
  describe.skipIf(NO_NGINX)('the live-safe scenarios through nginx', () => {
    const states = new Map<string, ModeState>();
    const failures = new Map<string, unknown>();
    const closers: Array<() => Promise<void>> = [];

    beforeAll(async () => {
      await Promise.all(
        modes.map((mode) => runMode(mode, closers, (state) => states.set(mode.name, state)).catch((error: unknown) => failures.set(mode.name, error))),
      );
    }, 300_000);

    afterAll(async () => {
      cleanUpCli();
      for (const close of closers) await close();
    });

    for (const mode of modes)
      describeMode(
        mode,
        () => states.get(mode.name),
        () => failures.get(mode.name),
      );
  });
}

function describeMode(mode: ProxyMode, stateOf: () => ModeState | undefined, failureOf: () => unknown): void {
  describe(`that ${mode.does} (${mode.name})`, () => {
    const started = (): ModeState => {
      const state = stateOf();
      if (state === undefined) throw new Error(`the mode did not start: ${String(failureOf())}`);
      return state;
    };
    const shown = (run: ScenarioRun) => `exit ${run.finished.code}\nstderr: ${run.finished.stderr.slice(-3000)}\nstdout: ${run.finished.stdout.slice(-2000)}`;

    for (const scenario of LIVE_SAFE) {
      if (mode.unreachable === true) {
        test(`${scenario}: a dead upstream ends the run as unreachable (exit 3 or 96) with a one-line message, nothing left`, () => {
          const run = started().runs[scenario];
          expect([EXIT.targetUnreachable, EXIT.targetStopped], shown(run)).toContain(run.finished.code);
          const lines = run.finished.stderr
            .trim()
            .split('\n')
            .filter((l) => l.trim() !== '');
          expect(lines.length, shown(run)).toBe(1);
        });
        continue;
      }
      test(`${scenario}: no crash — the exit is a verdict and a report exists`, () => {
        const run = started().runs[scenario];
        expect(run.finished.code, shown(run)).not.toBe(EXIT.failure);
        expect([...VERDICTS, EXIT.checkFailed, EXIT.invariantViolated, EXIT.resourcesLeft], shown(run)).toContain(run.finished.code);
        expect(run.report, shown(run)).toBeDefined();
      });
      test(`${scenario}: no false violation or failed check from the proxy's faults`, () => {
        const run = started().runs[scenario];
        const checks = (run.report?.checks as Array<{ name: string; passed: boolean; detail: string }> | undefined) ?? [];
        const failed = checks.filter((c) => !c.passed).map((c) => `${c.name}: ${c.detail}`);
        expect(failed, shown(run)).toEqual([]);
        const invariants = run.report?.invariants as { verdict?: string } | undefined;
        if (invariants !== undefined) expect(invariants.verdict, JSON.stringify(invariants).slice(0, 3000)).not.toBe('violated');
        expect([EXIT.invariantViolated, EXIT.checkFailed], shown(run)).not.toContain(run.finished.code);
      });
      test(`${scenario}: the run's cleanup left nothing (its report's resources)`, () => {
        const run = started().runs[scenario];
        const resources = run.report?.resources as { unexpectedlyLeft?: number; disposal?: string } | undefined;
        expect(resources, shown(run)).toMatchObject({ unexpectedlyLeft: 0 });
        expect(run.finished.code, shown(run)).not.toBe(EXIT.resourcesLeft);
      });
      // A request written as nginx closed the idle connection was never read, so nginx does not log
      // it, yet keysim cannot tell it from one that was read: it is recorded with an unknown outcome.
      // Every request nginx logged was recorded once (none sent twice, none left out), and every one
      // recorded but not logged is such an unknown outcome.
      test(`${scenario}: nginx logged every verification keysim recorded, but for unknown outcomes (a request written as nginx closed an idle connection)`, () => {
        const { runs, nginx } = started();
        const run = runs[scenario];
        for (const op of COUNTED) {
          const sent = run.historyCounts === undefined ? undefined : (run.historyCounts[op] ?? 0);
          const unknown = run.unknownCounts[op] ?? 0;
          const logged = loggedFor(nginx, scenario, op);
          const context = `history: ${JSON.stringify(run.historyCounts)}, unknown outcomes: ${JSON.stringify(run.unknownCounts)}\n${shown(run)}`;
          expect(sent, context).toBeDefined();
          expect(logged, `${op}: nginx logged more than keysim recorded (a request sent twice?)\n${context}`).toBeLessThanOrEqual(sent ?? 0);
          expect(logged, `${op}: recorded with an answer but not in nginx's log\n${context}`).toBeGreaterThanOrEqual((sent ?? 0) - unknown);
        }
      });
    }

    // APIs stay: the service has no operation to delete one (the report says so).
    test('the simulators hold no key, identity or override the runs made', () => {
      const { sim, midnightSim } = started();
      for (const target of [sim, midnightSim]) {
        const { keys, identities, overrides } = holdings(target);
        expect({ keys, identities, overrides }).toEqual({ keys: 0, identities: 0, overrides: 0 });
      }
    });
  });
}
