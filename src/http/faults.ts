/**
 * Injected faults, for testing clients and checkers (`/_sim/faults.set`, `keysim serve --fault`).
 *
 * Transport faults live here, in the HTTP layer; each strikes a request of the service (never the
 * `/_sim/*` admin surface, `/_sim/health` or `/openapi.json`, nor a 404/405 or a 413) once its body
 * has been read, before anything else looks at it:
 * - `latencyMs`: the request waits (real time, not the service clock) before it goes on —
 *   a fixed number of ms, `{ min, max }` uniform, or `{ mean, stddev }` normal clamped to
 *   0..60 000. Every other outcome (drop, 500, execution) comes after the wait.
 * - `dropRate`: that share of requests has its connection destroyed without an answer; the
 *   request is not executed.
 * - `errorRate`: that share of requests is answered 500 `unexpected_error` (the v1 error shape
 *   on v1 routes); the request is not executed.
 *   One draw decides both: dropRate + errorRate ≤ 1, and the shares are exact in expectation.
 * Wrong behaviour (over-admission, skipped refills, lost decrements) is the engine's
 * (src/engine/faults.ts); this module hands those rates on to it. `operations` limits every
 * fault, transport and engine, to the named operations.
 *
 * Decisions use a seeded Random (from the simulator seed, apart from the id sequence), restarted
 * at each `set`, so a sequential run is reproducible.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { type Engine, type EngineFaultsView, type FieldError, Random, type Result, faultSeed } from '../engine/index.js';
import { fail, ok } from '../engine/errors.js';
import { validate } from './schema.js';
import { MAX_FAULT_LATENCY_MS, faultsSetRequest } from './schemas/admin.js';

export type LatencySpec = number | { min: number; max: number } | { mean: number; stddev: number };

/** A fault configuration as `/_sim/faults.set`, `createSimulator({ faults })` and `--fault` take it. */
export interface FaultsConfig {
  latencyMs?: LatencySpec;
  errorRate?: number;
  dropRate?: number;
  overAdmitRate?: number;
  skipRefillRate?: number;
  lostDecrementRate?: number;
  operations?: string[];
}

/** The whole current configuration: every field present (0 = off), `operations` only when limited. */
export interface FaultsView {
  latencyMs: LatencySpec;
  errorRate: number;
  dropRate: number;
  overAdmitRate: number;
  skipRefillRate: number;
  lostDecrementRate: number;
  operations?: string[];
}

/** The keys a configuration (and `--fault KEY=VALUE`) knows. */
export const FAULT_KEYS = ['latencyMs', 'errorRate', 'dropRate', 'overAdmitRate', 'skipRefillRate', 'lostDecrementRate', 'operations'] as const;

/** What happens to one request: wait `delayMs`, then drop it, answer 500, or execute it. */
export interface FaultDecision {
  delayMs: number;
  outcome: 'drop' | 'error' | 'execute';
}

interface TransportFaults {
  latency: LatencySpec;
  errorRate: number;
  dropRate: number;
  operations: ReadonlySet<string> | null;
}

/** The transport's draws are apart from both the ids and the engine's fault decisions. */
const TRANSPORT_SALT = 0x7a11;

/**
 * Checks a configuration: its schema (rates 0..1, latencies 0..60 000 ms), then what a schema
 * cannot say (min ≤ max, errorRate + dropRate ≤ 1, operations that exist). `at` prefixes the
 * locations of violations (`body`, `faults`). `operations`: the service's operation names (the
 * caller passes them in, so that this module does not import the routes, which import it back).
 */
export function checkFaultsConfig(value: unknown, at: string, operations: readonly string[]): Result<FaultsConfig> {
  const checked = validate(faultsSetRequest, value, at);
  if (!checked.ok) {
    const first = checked.errors[0];
    return fail(
      'err:service:application:invalid_input',
      first === undefined ? 'The fault configuration is not valid.' : `${first.location} ${first.message}.`,
      checked.errors,
    );
  }
  const config = checked.value;
  const errors: FieldError[] = [];
  const latency = config.latencyMs;
  if (typeof latency === 'object' && 'min' in latency && latency.min > latency.max) {
    errors.push({ location: `${at}.latencyMs.max`, message: `must be ≥ min (${latency.min}), got ${latency.max}` });
  }
  if ((config.errorRate ?? 0) + (config.dropRate ?? 0) > 1) {
    errors.push({ location: `${at}.dropRate`, message: 'errorRate + dropRate must be ≤ 1 (one draw decides both)' });
  }
  for (const [i, name] of (config.operations ?? []).entries()) {
    if (!operations.includes(name)) {
      errors.push({
        location: `${at}.operations[${i}]`,
        message: `"${name.slice(0, 100)}" is not an operation of the service`,
        fix: `Use the operationIds of GET /openapi.json (admin ones excluded): ${operations.join(', ')}.`,
      });
    }
  }
  if (errors.length > 0) {
    const first = errors[0] as FieldError;
    return fail('err:service:application:invalid_input', `${first.location} ${first.message}.`, errors);
  }
  return ok(config);
}

/**
 * Parses `--fault KEY=VALUE` flags (repeatable): rates as numbers; `latencyMs=N`, `=MIN..MAX`
 * (uniform) or `=MEAN~STDDEV` (normal); `operations=a,b` (repeats add up). A later value of the
 * same key wins. The result still has to pass `checkFaultsConfig`.
 */
export function parseFaultFlags(flags: readonly string[]): { ok: true; config: FaultsConfig } | { ok: false; message: string } {
  const keys = `valid keys: ${FAULT_KEYS.join(', ')}`;
  const config: Record<string, unknown> = {};
  const num = '(\\d+(?:\\.\\d+)?)';
  for (const flag of flags) {
    const eq = flag.indexOf('=');
    const key = eq === -1 ? flag : flag.slice(0, eq);
    const value = eq === -1 ? '' : flag.slice(eq + 1).trim();
    if (!(FAULT_KEYS as readonly string[]).includes(key)) return { ok: false, message: `--fault ${flag}: unknown key "${key}" (${keys}).` };
    if (eq === -1 || value === '') return { ok: false, message: `--fault ${flag}: write KEY=VALUE, e.g. ${key}=… (${keys}).` };
    if (key === 'operations') {
      const names = value
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== '');
      config.operations = [...((config.operations as string[] | undefined) ?? []), ...names];
      continue;
    }
    if (key === 'latencyMs') {
      const fixed = new RegExp(`^${num}$`).exec(value);
      const uniform = new RegExp(`^${num}\\.\\.${num}$`).exec(value);
      const normal = new RegExp(`^${num}~${num}$`).exec(value);
      if (fixed !== null) config.latencyMs = Number(fixed[1]);
      else if (uniform !== null) config.latencyMs = { min: Number(uniform[1]), max: Number(uniform[2]) };
      else if (normal !== null) config.latencyMs = { mean: Number(normal[1]), stddev: Number(normal[2]) };
      else
        return {
          ok: false,
          message: `--fault ${flag}: latencyMs is N (ms), MIN..MAX (uniform) or MEAN~STDDEV (normal), e.g. latencyMs=20, latencyMs=5..50, latencyMs=20~5 (${keys}).`,
        };
      continue;
    }
    const rate = Number(value);
    if (!/^\d*\.?\d+(e-?\d+)?$/i.test(value) || !Number.isFinite(rate))
      return { ok: false, message: `--fault ${flag}: ${key} is a number from 0 to 1 (${keys}).` };
    config[key] = rate;
  }
  return { ok: true, config: config as FaultsConfig };
}

/** `errorRate=0.05 latencyMs=5..50 …`: a configuration as `--fault` flags would write it (for banners). */
export function describeFaults(view: FaultsView): string {
  const parts: string[] = [];
  const latency = view.latencyMs;
  if (typeof latency === 'number') {
    if (latency > 0) parts.push(`latencyMs=${latency}`);
  } else if ('min' in latency) {
    parts.push(`latencyMs=${latency.min}..${latency.max}`);
  } else {
    parts.push(`latencyMs=${latency.mean}~${latency.stddev}`);
  }
  for (const key of ['errorRate', 'dropRate', 'overAdmitRate', 'skipRefillRate', 'lostDecrementRate'] as const) {
    if (view[key] > 0) parts.push(`${key}=${view[key]}`);
  }
  if (view.operations !== undefined) parts.push(`operations=${view.operations.join(',')}`);
  return parts.length === 0 ? 'none' : parts.join(' ');
}

function isActive(latency: LatencySpec, errorRate: number, dropRate: number): boolean {
  return (
    errorRate > 0 || dropRate > 0 || (typeof latency === 'number' ? latency > 0 : 'min' in latency ? latency.max > 0 : latency.mean > 0 || latency.stddev > 0)
  );
}

/** The simulator's faults: the transport's own, and the engine's set through it. */
export class FaultInjector {
  readonly #engine: Engine;
  readonly #seed: number;
  readonly #known: readonly string[];
  readonly #random: Random;
  #latency: LatencySpec = 0;
  #errorRate = 0;
  #dropRate = 0;
  #operations: string[] | undefined;
  /** Null unless a transport fault can strike: the server's hot path checks only this. */
  #transport: TransportFaults | null = null;

  /** `operations`: the names the `operations` filter accepts (the service's, `OPERATIONS`). */
  constructor(engine: Engine, seed: number, operations: readonly string[]) {
    this.#engine = engine;
    this.#seed = seed;
    this.#known = operations;
    this.#random = new Random(faultSeed(seed, TRANSPORT_SALT));
  }

  /** Whether a transport fault can strike (the server checks this before anything else). */
  get active(): boolean {
    return this.#transport !== null;
  }

  /** The whole current configuration. */
  get view(): FaultsView {
    const engine: EngineFaultsView | null = this.#engine.faults;
    const view: FaultsView = {
      latencyMs: typeof this.#latency === 'number' ? this.#latency : { ...this.#latency },
      errorRate: this.#errorRate,
      dropRate: this.#dropRate,
      overAdmitRate: engine?.overAdmitRate ?? 0,
      skipRefillRate: engine?.skipRefillRate ?? 0,
      lostDecrementRate: engine?.lostDecrementRate ?? 0,
    };
    const operations = this.#operations ?? engine?.operations;
    if (operations !== undefined) view.operations = [...operations];
    return view;
  }

  /** Replaces the whole configuration (omitted = off); a bad one changes nothing. */
  set(config: FaultsConfig, at = 'body'): Result<FaultsView> {
    const checked = checkFaultsConfig(config, at, this.#known);
    if (!checked.ok) return checked;
    const c = checked.value;
    const engineFaults = this.#engine.setFaults({
      overAdmitRate: c.overAdmitRate ?? 0,
      skipRefillRate: c.skipRefillRate ?? 0,
      lostDecrementRate: c.lostDecrementRate ?? 0,
      ...(c.operations === undefined ? {} : { operations: c.operations }),
    });
    if (!engineFaults.ok) return engineFaults;
    this.#latency = c.latencyMs ?? 0;
    this.#errorRate = c.errorRate ?? 0;
    this.#dropRate = c.dropRate ?? 0;
    this.#operations = c.operations === undefined ? undefined : [...c.operations];
    this.#random.reseed(faultSeed(this.#seed, TRANSPORT_SALT));
    this.#transport = isActive(this.#latency, this.#errorRate, this.#dropRate)
      ? { latency: this.#latency, errorRate: this.#errorRate, dropRate: this.#dropRate, operations: c.operations === undefined ? null : new Set(c.operations) }
      : null;
    return ok(this.view);
  }

  /** Removes every fault, transport and engine. */
  clear(): FaultsView {
    this.#latency = 0;
    this.#errorRate = 0;
    this.#dropRate = 0;
    this.#operations = undefined;
    this.#transport = null;
    this.#engine.setFaults(null);
    return this.view;
  }

  /** What happens to a request of `operation`; null = nothing, go on at once. */
  decide(operation: string): FaultDecision | null {
    const t = this.#transport;
    if (t === null || (t.operations !== null && !t.operations.has(operation))) return null;
    const delayMs = this.#delayMs(t.latency);
    let outcome: FaultDecision['outcome'] = 'execute';
    if (t.errorRate > 0 || t.dropRate > 0) {
      const u = this.#uniform();
      outcome = u < t.dropRate ? 'drop' : u < t.dropRate + t.errorRate ? 'error' : 'execute';
    }
    return delayMs === 0 && outcome === 'execute' ? null : { delayMs, outcome };
  }

  /** [0, 1) */
  #uniform(): number {
    return this.#random.nextUint32() / 0x1_0000_0000;
  }

  #delayMs(latency: LatencySpec): number {
    if (typeof latency === 'number') return latency;
    if ('min' in latency) return latency.min + this.#uniform() * (latency.max - latency.min);
    if (latency.stddev === 0) return latency.mean;
    // Box–Muller; 1 − u keeps the logarithm's argument in (0, 1].
    const z = Math.sqrt(-2 * Math.log(1 - this.#uniform())) * Math.cos(2 * Math.PI * this.#uniform());
    return Math.min(MAX_FAULT_LATENCY_MS, Math.max(0, latency.mean + latency.stddev * z));
  }
}

/** Waits `ms` of real time without keeping the process alive on its own. */
export function faultDelay(ms: number): Promise<void> {
  return sleep(ms, undefined, { ref: false });
}
