/**
 * The options, positionals and examples of `keysim run` (its --help), apart from the command that
 * acts on them (commands/run.ts).
 */
import type { Argv } from 'yargs';
import { DEFAULT_SCENARIO } from '../../scenarios/index.js';
import { HISTORY_FILE } from '../load/history/index.js';
import { DEFAULT_GENERATOR_LIMITS } from '../load/metrics/index.js';
import { CONFIG_FILES } from './config-file.js';
import { DEFAULT_DEAD_AFTER_MS } from './run-settings.js';
import { baselineFlagOptions } from './run-baseline.js';
import { segmentOptions } from './segment-flags.js';
import { example } from './help-example.js';
import { promiseOptions } from './promise-flags.js';

/** Declares every flag of `keysim run` on `y`. */
export function runFlagOptions(y: Argv) {
  return promiseOptions(segmentOptions(baselineFlagOptions(y)))
    .positional('scenario', {
      type: 'string',
      array: true,
      default: [],
      describe: `Scenario names (keysim list), scenario files (.ts .js …), folders or quoted globs; default ${DEFAULT_SCENARIO}`,
    })
    .option('config', {
      type: 'string',
      describe: `Configuration file (default: the ${CONFIG_FILES.join(', ')} of the working directory; --no-config: none). Flags override it, thresholds add`,
    })
    .option('target', { type: 'string', describe: '"sim" (the embedded simulator, default) or the base URL of a live deployment' })
    .option('ca', {
      type: 'string',
      describe: "PEM file of the CA(s) that signed an https target's certificate (a private CA), trusted besides the system's by every request of the run",
    })
    .option('rate', { type: 'number', describe: "Open model: requests per second (default: the scenario's); refused with the closed model" })
    .option('stage', {
      type: 'string',
      array: true,
      describe:
        'Open model: ramp the arrival rate linearly to TARGET req/s over DURATION, e.g. --stage 30s:100 --stage 2m:2000 --stage 30s:0 (repeatable; instead of --rate and --duration)',
    })
    .option('start-rate', { type: 'number', describe: 'With --stage: the rate the first stage ramps from (default 0)' })
    .option('connections', { type: 'number', describe: 'Connections to the target' })
    .option('pipelining', { type: 'number', describe: 'Requests in flight per connection (default 1)' })
    .option('duration', { type: 'string', describe: "Measured duration with its unit, e.g. 30s, 500ms, 2m (default: the scenario's)" })
    .option('warmup', { type: 'string', describe: 'Warm-up before measuring with its unit, e.g. 5s (0 for none)' })
    .option('timeout', { type: 'string', describe: 'Per-request timeout, more than 0 (default 10s; e.g. 500ms; there is no "none": give a long one)' })
    .option('dead-after', {
      type: 'string',
      default: `${DEFAULT_DEAD_AFTER_MS / 1000}s`,
      describe:
        'End the run early (exit 96) when, for this long, every request failed at the transport level (refused, reset, timed out) or got a gateway error (502, 503, 504) with no other answer in between; "off" fires until the end',
    })
    .option('model', {
      choices: ['open', 'closed'] as const,
      describe:
        'open: fixed arrival rate, latency from the intended send (default); closed: fixed connections, each sending its next request when the previous one ended',
    })
    .option('seed', { type: 'number', describe: 'Seed of fixtures and request sequence (and of the simulator; default 1)' })
    .option('out', {
      type: 'string',
      describe: 'Folder for the run folders (default reports; created if missing; checked before any load: writable, with room for the run)',
    })
    .option('threshold', {
      type: 'string',
      array: true,
      default: [],
      describe: 'e.g. "p99(keys.verifyKey) < 20ms", "errors == 0", "rate(VALID) > 0.9", "p95(lag.credits) < 60s" (a measure) (repeatable)',
    })
    .option('yes', { type: 'boolean', default: false, describe: 'Confirm load on a target that is not on this machine' })
    .option('keep', {
      type: 'boolean',
      default: false,
      describe: 'Keep what the scenario created on a live target or a remote simulator (keysim cleanup --tag deletes it later)',
    })
    .option('quiet', { type: 'boolean', default: false, describe: 'No progress lines' })
    .option('history', {
      type: 'boolean',
      describe: `Record every operation into ${HISTORY_FILE} beside the report and check the credit and rate-limit invariants, and on the simulator compare every answer with a replay through a fresh engine (exit 100 on a violation or a difference)`,
    })
    .option('oracle', {
      type: 'boolean',
      default: true,
      describe: 'With --history on the simulator: replay its journal through a fresh engine and compare every answer (--no-oracle: off)',
    })
    .option('skew', {
      type: 'number',
      describe: "With --history on a live target: bound on its clock's skew from ours in ms, instead of measuring it from its Date headers before the run",
    })
    .option('fault', {
      type: 'string',
      array: true,
      default: [],
      describe: 'Inject a fault into the embedded simulator, KEY=VALUE (repeatable; see keysim serve --help), e.g. overAdmitRate=0.1',
    })
    .option('max-late-share', {
      type: 'number',
      describe: `The load generator could not keep its schedule (a banner; a threshold its lag may explain is inconclusive, exit 97) when more than this share of a phase's sends started over 10 ms late (open model; default ${DEFAULT_GENERATOR_LIMITS.lateShare}, 1: never)`,
    })
    .option('max-loop-delay', {
      type: 'string',
      describe: `… or when its event-loop delay p99 in a phase was over this (default ${DEFAULT_GENERATOR_LIMITS.loopDelayP99Ms}ms; off: never)`,
    })
    .option('junit', {
      type: 'string',
      describe: 'Also write JUnit XML to this file: a test suite per scenario run, a test case per threshold, check and invariant (for CI)',
    })
    .option('series', {
      type: 'string',
      describe: 'Also write the runs second by second to this file as NDJSON: rate, errors and latency percentiles, overall and per operation',
    })
    .option('metrics', {
      type: 'string',
      describe: 'Serve live figures for Prometheus at http://HOST:PORT/metrics during the runs, e.g. 127.0.0.1:9464 (port 0: any free port)',
    })
    .option('root-key', { type: 'string', describe: 'Root key of a live target (prefer the KEYSIM_ROOT_KEY variable: flags end up in shell history)' })
    .example(...example('$0 run', `the default scenario (${DEFAULT_SCENARIO}) against the embedded simulator`))
    .example(...example('$0 run credits-drain verify-hot-keys --rate 500 --duration 20s', 'two scenarios, one report each'))
    .example(...example("$0 run ./checks/first-check.ts 'checks/**/*.ts'", 'scenario files of your project (a file, a folder, a quoted glob)'))
    .example(...example('KEYSIM_ROOT_KEY=… $0 run smoke --target https://api.example.com --yes', 'a live deployment'))
    .example(...example('$0 run mixed --stage 10s:200 --stage 30s:200 --stage 5s:0', 'ramp up, hold, ramp down'))
    .example(...example('$0 run mixed --threshold "p99 < 20ms" --threshold "errors == 0"', 'exit 99 when a threshold fails'))
    .example(...example('$0 run smoke mixed --junit junit.xml --series series.ndjson', 'results for CI and dashboards'))
    .example(...example('$0 run smoke --baseline reports/main', 'compare with the newest smoke run in reports/main (exit 93 when worse)'));
}
