/** `keysim run <scenario…>`: fires scenarios at the embedded simulator or a live deployment. */
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline/promises';
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { DEFAULT_SCENARIO, SCENARIOS } from '../../../scenarios/index.js';
import { parseDurationMs } from '../../load/plan.js';
import { type ProgressSnapshot, ScenarioFailedError, TargetUnreachableError, runScenario } from '../../load/runner.js';
import { HISTORY_FILE } from '../../load/history.js';
import { parseFaultFlags } from '../../http/faults.js';
import type { LoadSettings, Scenario } from '../../load/scenario.js';
import { type Target, detectUrlTarget, isLoopback, liveTarget, startEmbeddedSimulator } from '../../load/target.js';
import { type Threshold, parseThreshold } from '../../load/thresholds.js';
import type { RunReport } from '../../report/model.js';
import { keysimVersion } from '../../version.js';
import { EXIT, type ExitCode, UsageError } from '../exit-codes.js';
import { writeReport } from '../report-files.js';
import { renderSummary } from '../summary.js';

interface RunArgs {
  scenario: string[];
  target: string;
  rate?: number;
  connections?: number;
  pipelining: number;
  duration?: string;
  warmup?: string;
  timeout: string;
  model?: 'open' | 'closed';
  seed: number;
  out: string;
  threshold: string[];
  yes: boolean;
  keep: boolean;
  quiet: boolean;
  rootKey?: string;
  history: boolean;
  /** With --history on the simulator: compare every answer with a replay of its journal. */
  oracle: boolean;
  fault: string[];
}

/** Built-in defaults; a scenario's own defaults come next, then the flags. */
const DEFAULTS: LoadSettings = { rate: 100, connections: 16, pipelining: 1, durationMs: 10_000, warmupMs: 2_000, timeoutMs: 10_000, model: 'open' };

function durationFlag(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const ms = parseDurationMs(value);
  if (ms === undefined) throw new UsageError(`--${name} "${value}" is not a duration: write e.g. 30s, 500ms, 2m.`);
  return ms;
}

function positiveFlag(name: string, value: number | undefined, integer: boolean): number | undefined {
  if (value === undefined) return undefined;
  if (!Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value))) {
    throw new UsageError(`--${name} must be a positive ${integer ? 'integer' : 'number'}, got ${String(value)}.`);
  }
  return value;
}

function settingsFor(scenario: Scenario<unknown>, args: RunArgs): LoadSettings {
  const d = { ...DEFAULTS, ...scenario.defaults };
  if ((args.model ?? d.model) === 'closed' && args.pipelining > 1) {
    throw new UsageError(
      '--pipelining > 1 works only with the open model: autocannon (the closed model) cannot tell which pipelined answer belongs to which request. Drop --model closed, or --pipelining.',
    );
  }
  return {
    rate: positiveFlag('rate', args.rate, false) ?? d.rate,
    connections: positiveFlag('connections', args.connections, true) ?? d.connections,
    pipelining: positiveFlag('pipelining', args.pipelining, true) ?? d.pipelining,
    durationMs: durationFlag('duration', args.duration) ?? d.durationMs,
    warmupMs: args.warmup === undefined ? d.warmupMs : (parseDurationMs(args.warmup) ?? durationFlag('warmup', args.warmup) ?? 0),
    timeoutMs: durationFlag('timeout', args.timeout) ?? d.timeoutMs,
    model: args.model ?? d.model,
  };
}

async function confirmRemote(url: string, args: RunArgs): Promise<void> {
  if (args.yes) return;
  const explanation = `${url} is not on this machine, and scenarios create keys, identities and rate-limit overrides there (named keysim-…, deleted at the end unless --keep).`;
  if (!process.stdin.isTTY) throw new UsageError(`${explanation} Pass --yes to confirm.`);
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = await rl.question(`${explanation}\nFire load at it? [y/N] `);
    if (!/^y(es)?$/i.test(answer.trim())) throw new UsageError('Not confirmed: nothing was sent.');
  } finally {
    rl.close();
  }
}

function progressPrinter(args: RunArgs, scenario: string): (p: ProgressSnapshot) => void {
  if (args.quiet) return () => undefined;
  const tty = process.stderr.isTTY === true;
  let lastPlain = 0;
  return (p) => {
    const text = `${scenario} [${p.phase}] ${(p.elapsedMs / 1000).toFixed(0)}/${(p.totalMs / 1000).toFixed(0)} s  ${p.rps.toFixed(0)} req/s  p99 ${p.p99Ms.toFixed(1)} ms  ${p.errors} errors`;
    if (tty) {
      process.stderr.write(`\r\x1b[2K${text}`);
    } else if (p.elapsedMs - lastPlain >= 5_000) {
      lastPlain = p.elapsedMs;
      process.stderr.write(`${text}\n`);
    }
  };
}

/** The exit code a report calls for (the worst wins). */
export function exitCodeOf(report: RunReport): ExitCode {
  if (report.status === 'interrupted') return EXIT.interrupted;
  if ((report.resources?.unexpectedlyLeft ?? 0) > 0) return EXIT.resourcesLeft;
  if (report.invariants?.verdict === 'violated' || report.invariants?.oracle?.verdict === 'differs') return EXIT.invariantViolated;
  if (report.checks.some((c) => !c.passed)) return EXIT.checkFailed;
  if (report.thresholds.some((t) => !t.passed)) return EXIT.thresholdFailed;
  return EXIT.ok;
}

const SEVERITY: ExitCode[] = [EXIT.ok, EXIT.thresholdFailed, EXIT.checkFailed, EXIT.invariantViolated, EXIT.resourcesLeft, EXIT.failure, EXIT.targetUnreachable, EXIT.interrupted];
const worse = (a: ExitCode, b: ExitCode): ExitCode => (SEVERITY.indexOf(b) > SEVERITY.indexOf(a) ? b : a);

export async function runCommand(args: RunArgs): Promise<ExitCode> {
  const names = args.scenario.length === 0 ? [DEFAULT_SCENARIO] : args.scenario;
  const known = Object.keys(SCENARIOS);
  for (const name of names) {
    if (!(name in SCENARIOS)) throw new UsageError(`Unknown scenario "${name}". The scenarios are: ${known.join(', ')} (see keysim list).`);
  }
  const thresholds: Threshold[] = args.threshold.map((expression) => {
    const parsed = parseThreshold(expression);
    if (!parsed.ok) throw new UsageError(parsed.error);
    return parsed.threshold;
  });
  const scenarios = names.map((name) => SCENARIOS[name] as Scenario<unknown>);
  const settings = scenarios.map((s) => settingsFor(s, args));
  if (!Number.isSafeInteger(args.seed)) throw new UsageError(`--seed must be an integer, got ${String(args.seed)}.`);

  let makeTarget: () => Promise<Target>;
  // The embedded simulator, or a URL target that turned out to be a simulator whose clock keysim may move.
  let clockControl = args.target === 'sim';
  if (args.fault.length > 0 && args.target !== 'sim') {
    throw new UsageError('--fault injects faults into the embedded simulator: it needs --target sim (for a running keysim serve, use its --fault or /_sim/faults.set).');
  }
  const faults = parseFaultFlags(args.fault);
  if (!faults.ok) throw new UsageError(`--fault: ${faults.message}`);
  if (args.target === 'sim') {
    makeTarget = () => startEmbeddedSimulator({ seed: args.seed, ...(args.fault.length > 0 ? { faults: faults.config } : {}) });
  } else {
    let url: URL;
    try {
      url = new URL(args.target);
    } catch {
      throw new UsageError(`--target must be "sim" or a URL such as https://api.example.com, got "${args.target}".`);
    }
    const fromEnv = process.env.KEYSIM_ROOT_KEY;
    const rootKey = args.rootKey ?? (fromEnv === '' ? undefined : fromEnv);
    if (rootKey === undefined) throw new UsageError('A live target needs a root key: set KEYSIM_ROOT_KEY (recommended) or pass --root-key.');
    if (!isLoopback(url)) await confirmRemote(url.origin, args);
    try {
      liveTarget(args.target, rootKey);
    } catch (error) {
      throw new UsageError(error instanceof Error ? error.message : String(error));
    }
    const detected = await detectUrlTarget(args.target, rootKey);
    if (detected.note !== undefined) process.stderr.write(`keysim: ${detected.note}\n`);
    clockControl = detected.target.clockControl;
    makeTarget = async () => detected.target;
  }

  const controller = new AbortController();
  let sigints = 0;
  const onSigint = () => {
    sigints++;
    if (sigints > 1) process.exit(EXIT.interrupted);
    process.stderr.write('\nkeysim: stopping (SIGINT); writing a partial report. Press Ctrl-C again to quit at once.\n');
    controller.abort();
  };
  process.on('SIGINT', onSigint);

  let exit: ExitCode = EXIT.ok;
  try {
    for (const [i, scenario] of scenarios.entries()) {
      if (controller.signal.aborted) break;
      if (scenario.requires?.includes('clock') === true && !clockControl) {
        process.stderr.write(`keysim: skipping "${scenario.name}": it moves the service clock, which only a simulator allows (--target sim, or the URL of a keysim serve).\n`);
        continue;
      }
      const target = await makeTarget();
      let report: RunReport;
      // The history is written while the run goes, then moved into the report's folder.
      const historyPath = args.history ? join(args.out, `.history-${process.pid}-${Date.now()}.jsonl.gz`) : undefined;
      if (historyPath !== undefined) mkdirSync(args.out, { recursive: true });
      try {
        if (!args.quiet) process.stderr.write(`keysim: running "${scenario.name}" against ${target.kind === 'live' ? target.url : target.remote === true ? `the simulator at ${target.url}` : 'the embedded simulator'}\n`);
        report = await runScenario({
          scenario,
          target,
          settings: settings[i] as LoadSettings,
          seed: args.seed,
          thresholds: [...(scenario.thresholds ?? []).map((t) => parseThreshold(t)).flatMap((p) => (p.ok ? [p.threshold] : [])), ...thresholds],
          keep: args.keep,
          signal: controller.signal,
          onProgress: progressPrinter(args, scenario.name),
          log: args.quiet ? () => undefined : (line) => process.stderr.write(`  ${line}\n`),
          warn: (line) => process.stderr.write(`keysim: ${line}\n`),
          resourcesDir: args.out,
          keysimVersion: keysimVersion(),
          ...(historyPath === undefined ? {} : { historyPath }),
          oracle: args.oracle,
        });
      } catch (error) {
        if (historyPath !== undefined) rmSync(historyPath, { force: true });
        if (process.stderr.isTTY === true && !args.quiet) process.stderr.write('\n');
        if (error instanceof TargetUnreachableError) {
          process.stderr.write(`keysim: ${error.message}\n`);
          exit = worse(exit, EXIT.targetUnreachable);
          continue;
        }
        if (error instanceof ScenarioFailedError) {
          process.stderr.write(`keysim: ${error.message}\n`);
          exit = worse(exit, (error.resources?.unexpectedlyLeft ?? 0) > 0 ? EXIT.resourcesLeft : EXIT.failure);
          continue;
        }
        throw error;
      } finally {
        await target.close();
      }
      if (process.stderr.isTTY === true && !args.quiet) process.stderr.write('\n');
      const written = writeReport(report, args.out);
      let historyLine = '';
      if (historyPath !== undefined && existsSync(historyPath)) {
        const finalPath = join(written.folder, HISTORY_FILE);
        renameSync(historyPath, finalPath);
        historyLine = `history: ${finalPath} (keysim check re-checks it)\n`;
      }
      process.stdout.write(`${renderSummary(report)}\nreport: ${written.html}\n${historyLine}\n`);
      exit = worse(exit, exitCodeOf(report));
    }
  } finally {
    process.off('SIGINT', onSigint);
  }
  return exit;
}

export const runCommandModule: CommandModule<object, RunArgs> = {
  command: 'run [scenario..]',
  describe: `Run scenarios (default: ${DEFAULT_SCENARIO}) and write reports`,
  builder: (y: Argv) =>
    y
      .positional('scenario', { type: 'string', array: true, default: [], describe: `Scenario names (keysim list); default ${DEFAULT_SCENARIO}` })
      .option('target', { type: 'string', default: 'sim', describe: '"sim" (the embedded simulator) or the base URL of a live deployment' })
      .option('rate', { type: 'number', describe: 'Open model: requests per second (default: the scenario\'s)' })
      .option('connections', { type: 'number', describe: 'Connections to the target' })
      .option('pipelining', { type: 'number', default: 1, describe: 'Requests in flight per connection' })
      .option('duration', { type: 'string', describe: 'Measured duration, e.g. 30s (default: the scenario\'s)' })
      .option('warmup', { type: 'string', describe: 'Warm-up before measuring, e.g. 5s (0 for none)' })
      .option('timeout', { type: 'string', default: '10s', describe: 'Per-request timeout' })
      .option('model', { choices: ['open', 'closed'] as const, describe: 'open: fixed arrival rate, latency from the intended send (default); closed: autocannon, fixed connections' })
      .option('seed', { type: 'number', default: 1, describe: 'Seed of fixtures and request sequence (and of the simulator)' })
      .option('out', { type: 'string', default: 'reports', describe: 'Folder for the report folders' })
      .option('threshold', { type: 'string', array: true, default: [], describe: 'e.g. "p99(keys.verifyKey) < 20ms", "errors == 0", "rate(VALID) > 0.9" (repeatable)' })
      .option('yes', { type: 'boolean', default: false, describe: 'Confirm load on a target that is not on this machine' })
      .option('keep', { type: 'boolean', default: false, describe: 'Keep what the scenario created on a live target or a remote simulator (keysim cleanup --tag deletes it later)' })
      .option('quiet', { type: 'boolean', default: false, describe: 'No progress lines' })
      .option('history', { type: 'boolean', default: false, describe: `Record every operation into ${HISTORY_FILE} beside the report and check the credit and rate-limit invariants, and on the simulator compare every answer with a replay through a fresh engine (exit 100 on a violation or a difference)` })
      .option('oracle', { type: 'boolean', default: true, describe: 'With --history on the simulator: replay its journal through a fresh engine and compare every answer (--no-oracle: off)' })
      .option('fault', { type: 'string', array: true, default: [], describe: 'Inject a fault into the embedded simulator, KEY=VALUE (repeatable; see keysim serve --help), e.g. overAdmitRate=0.1' })
      .option('root-key', { type: 'string', describe: 'Root key of a live target (prefer the KEYSIM_ROOT_KEY variable: flags end up in shell history)' })
      .example('$0 run', `the default scenario (${DEFAULT_SCENARIO}) against the embedded simulator`)
      .example('$0 run credits-drain verify-hot-keys --rate 500 --duration 20s', 'two scenarios, one report each')
      .example('KEYSIM_ROOT_KEY=… $0 run smoke --target https://api.example.com --yes', 'a live deployment')
      .example('$0 run mixed --threshold "p99(keys.verifyKey) < 20ms" --threshold "errors == 0"', 'exit 99 when a threshold fails') as unknown as Argv<RunArgs>,
  handler: async (args: ArgumentsCamelCase<RunArgs>) => {
    process.exitCode = await runCommand(args);
  },
};
