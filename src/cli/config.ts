/**
 * The configuration file of `keysim run` (keysim.config.json, .ts, .mjs or .js): the target, the
 * root key's variable, thresholds, scenarios and defaults for the run flags, in the flags' own
 * words. Flags override it, thresholds add to it (docs/load-shapes.md#configuration-file).
 * Everything is checked here, before anything is sent: a wrong key or type names the file, the
 * key and what is expected.
 */
import { dirname, isAbsolute, join } from 'node:path';
import { parseDurationMs } from '../load/plan/index.js';
import { type Stage, parseStage, stagesProblem } from '../load/plan/index.js';
import { parseThreshold } from '../load/run/index.js';
import { UsageError } from './exit-codes.js';
import type { ShapeLayer } from './run-settings.js';
import type { PromiseConfig } from './promise-flags.js';
import { CONSISTENCY_NAMES, PROMISE_FIGURES, PromiseError, isConsistencyName, promiseSet } from '../load/promises/index.js';

/** A stage in a configuration file: `"30s:100"`, or `{ duration: '30s', target: 100 }`. */
export type ConfigStage = string | { duration: string; target: number };

/** What a configuration file may hold; every key is optional. */
export interface KeysimConfig {
  /** "sim" (the embedded simulator) or the base URL of a deployment, like --target. */
  target?: string;
  /** The name of the environment variable that holds the root key (KEYSIM_ROOT_KEY still wins). */
  rootKeyEnv?: string;
  /** A literal root key. Discouraged: a file ends up in a repository; prefer rootKeyEnv. */
  rootKey?: string;
  /** The PEM file of the CA(s) that signed an https target's certificate, like --ca (relative to the configuration file). */
  ca?: string;
  /** Scenarios to run when none is named on the command line. */
  scenarios?: string[];
  /** Thresholds, e.g. "p99(keys.verifyKey) < 20ms"; --threshold adds to them. */
  thresholds?: string[];
  rate?: number;
  duration?: string;
  warmup?: string;
  stages?: ConfigStage[];
  startRate?: number;
  connections?: number;
  pipelining?: number;
  timeout?: string;
  model?: 'open' | 'closed';
  out?: string;
  seed?: number;
  history?: boolean;
  /** The promise set the invariants are judged against, like --consistency: "exact" (default) or "production" (docs/consistency.md). */
  consistency?: string;
  /** Figures of the promise set overridden, like --promise: { "regions": 3, "creditTtlMs": 30000 }. */
  promises?: Record<string, number>;
}

/** Types a `keysim.config.ts`: `export default defineConfig({ … })`. */
export function defineConfig(config: KeysimConfig): KeysimConfig {
  return config;
}

/** A checked configuration: the run flags it defaults, and its load shape apart (layered in run-settings.ts). */
export interface RunConfig extends Pick<
  KeysimConfig,
  'target' | 'rootKeyEnv' | 'rootKey' | 'ca' | 'scenarios' | 'connections' | 'pipelining' | 'timeout' | 'model' | 'out' | 'seed' | 'history'
> {
  file: string;
  thresholds: string[];
  shape: ShapeLayer;
  /** `consistency` and `promises`, checked; --consistency and --promise win over them. */
  promises?: PromiseConfig;
}

const KEYS: ReadonlyArray<keyof KeysimConfig> = [
  'target',
  'rootKeyEnv',
  'rootKey',
  'ca',
  'scenarios',
  'thresholds',
  'rate',
  'duration',
  'warmup',
  'stages',
  'startRate',
  'connections',
  'pipelining',
  'timeout',
  'model',
  'out',
  'seed',
  'history',
  'consistency',
  'promises',
];

const shown = (value: unknown): string =>
  typeof value === 'string'
    ? `"${value}"`
    : Array.isArray(value)
      ? 'a list'
      : value === null
        ? 'null'
        : typeof value === 'object'
          ? 'an object'
          : String(value as unknown);

/** Checks a configuration file's value (its default export, or its JSON). */
export function checkConfig(value: unknown, file: string): RunConfig {
  const fail = (key: string, expected: string, got: unknown): never => {
    throw new UsageError(`${file}: "${key}" must be ${expected}, got ${shown(got)}.`);
  };
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new UsageError(
      `${file}: the configuration must be an object (in a .ts or .js file, its default export: export default defineConfig({ … })), got ${shown(value)}.`,
    );
  }
  const raw = value as Record<string, unknown>;
  for (const key of Object.keys(raw)) {
    if (!(KEYS as readonly string[]).includes(key)) throw new UsageError(`${file}: unknown key "${key}". The keys are: ${KEYS.join(', ')}.`);
  }
  const str = (key: keyof KeysimConfig, what = 'a string'): string | undefined => {
    const v = raw[key];
    if (v === undefined) return undefined;
    if (typeof v !== 'string' || v.trim() === '') return fail(key, what, v);
    return v;
  };
  const strings = (key: keyof KeysimConfig, what: string): string[] | undefined => {
    const v = raw[key];
    if (v === undefined) return undefined;
    if (!Array.isArray(v) || v.some((s) => typeof s !== 'string')) return fail(key, `a list of strings (${what})`, v);
    return v as string[];
  };
  const positive = (key: keyof KeysimConfig, integer: boolean, zero = false): number | undefined => {
    const v = raw[key];
    if (v === undefined) return undefined;
    if (typeof v !== 'number' || !Number.isFinite(v) || (zero ? v < 0 : v <= 0) || (integer && !Number.isInteger(v))) {
      return fail(key, `a ${zero ? '' : 'positive '}${integer ? 'whole number' : 'number'}${zero ? ' ≥ 0' : ''}`, v);
    }
    return v;
  };
  const duration = (key: keyof KeysimConfig, allowZero: boolean): number | undefined => {
    const text = str(key, 'a duration with its unit, e.g. "30s", "500ms", "2m"');
    if (text === undefined) return undefined;
    if (allowZero && text.trim() === '0') return 0;
    const ms = parseDurationMs(text);
    if (ms === undefined || !/[a-z]\s*$/i.test(text) || (!allowZero && ms === 0))
      return fail(key, `a duration${allowZero ? '' : ' longer than 0'} with its unit, e.g. "30s", "500ms", "2m"`, text);
    return ms;
  };

  const config: RunConfig = { file, thresholds: [], shape: {} };
  const set = <K extends keyof RunConfig>(key: K, v: RunConfig[K] | undefined) => {
    if (v !== undefined) config[key] = v;
  };
  const target = str('target', '"sim" or a URL such as "https://api.example.com"');
  if (target !== undefined && target !== 'sim' && !URL.canParse(target)) fail('target', '"sim" or a URL such as "https://api.example.com"', target);
  set('target', target);
  const rootKeyEnv = str('rootKeyEnv', 'the name of an environment variable, e.g. "STAGING_ROOT_KEY"');
  if (rootKeyEnv !== undefined && !/^[A-Za-z_][A-Za-z0-9_]*$/.test(rootKeyEnv))
    fail('rootKeyEnv', 'the name of an environment variable (letters, digits, _), not the key itself', '(a value that is not a variable name)');
  set('rootKeyEnv', rootKeyEnv);
  set('rootKey', str('rootKey'));
  const ca = str('ca', 'the path of a PEM file, e.g. "ca.pem"');
  if (ca !== undefined) config.ca = isAbsolute(ca) ? ca : join(dirname(file), ca);
  set('scenarios', strings('scenarios', 'scenario names, see keysim list'));
  const thresholds = strings('thresholds', 'e.g. "p99(keys.verifyKey) < 20ms"') ?? [];
  for (const t of thresholds) {
    const parsed = parseThreshold(t);
    if (!parsed.ok) throw new UsageError(`${file}: "thresholds": ${parsed.error}`);
  }
  config.thresholds = thresholds;
  set('connections', positive('connections', true));
  set('pipelining', positive('pipelining', true));
  if (duration('timeout', false) !== undefined) config.timeout = raw.timeout as string;
  const model = raw.model;
  if (model !== undefined && model !== 'open' && model !== 'closed') fail('model', '"open" or "closed"', model);
  set('model', model as RunConfig['model']);
  set('out', str('out', 'a folder'));
  set('seed', positive('seed', true, true));
  if (raw.history !== undefined && typeof raw.history !== 'boolean') fail('history', 'true or false', raw.history);
  set('history', raw.history as boolean | undefined);
  const promises = promiseConfigOf(raw, file, fail);
  if (promises !== undefined) config.promises = promises;

  // The load shape: a rate and duration, or stages (both at once would leave the winner unclear).
  const shape: ShapeLayer = {};
  const rate = positive('rate', false);
  const durationMs = duration('duration', false);
  const warmupMs = duration('warmup', true);
  const startRate = positive('startRate', false, true);
  if (rate !== undefined) shape.rate = rate;
  if (durationMs !== undefined) shape.durationMs = durationMs;
  if (warmupMs !== undefined) shape.warmupMs = warmupMs;
  if (startRate !== undefined) shape.startRate = startRate;
  if (raw.stages !== undefined) {
    if (!Array.isArray(raw.stages)) fail('stages', 'a list of stages such as ["30s:100", "2m:2000"]', raw.stages);
    const stages = (raw.stages as unknown[]).map((s, i): Stage => configStage(s, `${file}: "stages"[${i}]`));
    const problem = stagesProblem(startRate ?? 0, stages);
    if (problem !== undefined) throw new UsageError(`${file}: "stages": ${problem}`);
    if (rate !== undefined || durationMs !== undefined) {
      throw new UsageError(`${file}: "stages" sets both the rate and the duration: drop "${rate !== undefined ? 'rate' : 'duration'}", or "stages".`);
    }
    shape.stages = stages;
  } else if (startRate !== undefined) {
    throw new UsageError(`${file}: "startRate" is the rate the first stage ramps from: it needs "stages".`);
  }
  config.shape = shape;
  return config;
}

function configStage(value: unknown, where: string): Stage {
  const expected = 'a stage such as "30s:100" or { "duration": "30s", "target": 100 }';
  if (typeof value === 'string') {
    const stage = parseStage(value, parseDurationMs);
    if (typeof stage === 'string') throw new UsageError(`${where}: ${stage}`);
    return stage;
  }
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const { duration, target, ...rest } = value as Record<string, unknown>;
    const extra = Object.keys(rest)[0];
    if (extra !== undefined) throw new UsageError(`${where}: unknown key "${extra}" (a stage has "duration" and "target").`);
    if (typeof duration !== 'string' || typeof target !== 'number')
      throw new UsageError(`${where} must be ${expected}: "duration" a string with its unit, "target" a number.`);
    const stage = parseStage(`${duration}:${target}`, parseDurationMs);
    if (typeof stage === 'string') throw new UsageError(`${where}: ${stage}`);
    return stage;
  }
  throw new UsageError(`${where} must be ${expected}, got ${shown(value)}.`);
}

/** `consistency` and `promises` of a configuration, checked against the promise sets keysim knows. */
function promiseConfigOf(raw: Record<string, unknown>, file: string, fail: (key: string, expected: string, got: unknown) => never): PromiseConfig | undefined {
  if (raw.consistency === undefined && raw.promises === undefined) return undefined;
  const out: PromiseConfig = {};
  if (raw.consistency !== undefined) {
    if (!isConsistencyName(raw.consistency)) fail('consistency', CONSISTENCY_NAMES.map((n) => `"${n}"`).join(' or '), raw.consistency);
    out.consistency = raw.consistency as string;
  }
  if (raw.promises !== undefined) {
    const p = raw.promises;
    if (p === null || typeof p !== 'object' || Array.isArray(p))
      return fail('promises', `an object of figures, e.g. { "regions": 3 } (${PROMISE_FIGURES.join(', ')})`, p);
    for (const [figure, value] of Object.entries(p as Record<string, unknown>)) {
      if (!(PROMISE_FIGURES as readonly string[]).includes(figure)) fail('promises', `an object whose keys are ${PROMISE_FIGURES.join(', ')}`, `"${figure}"`);
      if (typeof value !== 'number') fail(`promises.${figure}`, 'a number', value);
    }
    out.promises = p as Record<string, number>;
  }
  try {
    promiseSet(out.consistency ?? 'exact', out.promises ?? {});
  } catch (error) {
    if (error instanceof PromiseError) throw new UsageError(`${file}: "promises": ${error.message.replace(/^--promise /, '')}`);
    throw error;
  }
  return out;
}
