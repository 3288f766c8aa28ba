/**
 * visibility: how long a change made through one region (or connection) takes to be seen through
 * the others, per kind of change, against the promise set in force (`ctx.promises`,
 * docs/consistency.md): a credit update (set) within `creditTtlMs`, a key disabled (updateKey
 * enabled: false) or deleted within `cacheFreshMs`, a rate-limit override set within
 * `overrideCacheMs`, a key's expiry seen everywhere within `cacheFreshMs` — each plus MARGIN_MS
 * for the poll's step and one revalidating request. Under `exact` (the default) every promise is
 * 0: a change must be seen everywhere at once, within the margin; under `production` 60 s, 10 s,
 * 60 s and 10 s.
 *
 * Each repetition of a kind makes a fresh subject (a key; for an override, an identifier of its
 * own), reads it at cost 0 in every lane (so that every region holds it in its caches and
 * counters, as a busy key is held), makes the change in lane 1, and then asks every lane (verifyKey
 * or ratelimit.limit, cost 0) every POLL_MS until all of them show the change, at most
 * KEYSIM_VISIBILITY_MAX_WAIT (default 90s) per change. The lag is the time from the change's
 * answer to the round in which the last lane showed it, on the service clock when the target has
 * one (a simulator with a manual clock is moved, nothing waits), else on this machine's clock.
 * An expiry has no change call: the key is made with `expires` EXPIRES_AHEAD_MS ahead on that
 * clock, read in every lane before then, and its lag runs from the first instant it is past its
 * expires (the time is moved or waited to it) to the round in which every lane answered EXPIRED.
 * KEYSIM_VISIBILITY_REPEATS (default 3) repetitions per kind; p50/p95/max in the checks' detail,
 * and each lag reported as a measure (`lag.credits`, `lag.disable`, `lag.delete`, `lag.override`,
 * `lag.expiry`, ms, with the promise in force), which thresholds can name. A change whose answers never came, or
 * never seen within the max wait, is an unknown sample of its measure, not a lag.
 * A change never seen within the max wait fails when the max wait exceeds the promise, and is not
 * judged when it does not. Overrides need a rate-limit namespace: on a live target without one
 * (KEYSIM_NAMESPACE) their check says not judged.
 */
import {
  type CallOutcome,
  type CheckResult,
  type MeasureSpec,
  type Operation,
  type PromiseFigures,
  type ScenarioContext,
  checkResult,
  createKey,
  createTaggedApi,
  defineScenario,
  deleteQuietly,
  ensureNamespace,
  okData,
  shown,
} from '../src/index.js';
import { type Lanes, type ScenarioTime, everyLane, lagSummary, laneCall, lanesOf, scenarioTime } from './support/lanes.js';
import { durationEnv } from './support/target-time.js';

const CREDITS = 100;
const SET_TO = 50;
const POLL_MS = 1_000;
/** Added to every promise: the poll's step, and the one request a stale cache still answers before it is read again. */
const MARGIN_MS = 5_000;
/** The limit the override probes ask for, and the override's own: the answer's `limit` tells which applies. */
const REQUEST_LIMIT = 100;
const OVERRIDE_LIMIT = 7;
/**
 * How far ahead of the target's clock an expiring key's `expires` is set: time enough to read it
 * in every lane first. A manual clock is moved past it; a live target is waited for, this long.
 */
const EXPIRES_AHEAD_MS = 3_000;

type Kind = 'credits' | 'disable' | 'delete' | 'override' | 'expiry';

/**
 * What makes a change: a call in lane 1, whose answer starts the lag; or an instant on the
 * scenario's clock at which the change takes effect by itself (an expiry), which starts it.
 */
type Change = { op: Operation; body: unknown } | { atMs: number };

/** What one change is about: what makes it, the read that shows it, and how it shows. */
interface Subject {
  change: Change;
  probe: { op: Operation; body: unknown };
  /** Whether the probe's data shows the change. */
  shows(data: Record<string, unknown>): boolean;
}

interface KindSpec {
  kind: Kind;
  title: string;
  /** The promise set's figure that bounds this kind's lag. */
  promise: keyof PromiseFigures;
  rules: string[];
  /** A fresh subject for one change. */
  make(ctx: ScenarioContext, f: VisibilityFixtures, time: ScenarioTime): Promise<Subject>;
}

async function freshKey(ctx: ScenarioContext, f: VisibilityFixtures, kind: Kind, expires?: number): Promise<{ keyId: string; probe: Subject['probe'] }> {
  const body = { apiId: f.apiId, name: `${ctx.tag}-visibility-${kind}`, credits: { remaining: CREDITS }, ...(expires === undefined ? {} : { expires }) };
  const { keyId, key } = await createKey(ctx, body);
  return { keyId, probe: { op: 'keys.verifyKey', body: { key, credits: { cost: 0 } } } };
}

const KINDS: readonly KindSpec[] = [
  {
    kind: 'credits',
    title: `a credit update (set ${SET_TO})`,
    promise: 'creditTtlMs',
    rules: ['credits.update-credits'],
    async make(ctx, f) {
      const { keyId, probe } = await freshKey(ctx, f, 'credits');
      return { probe, change: { op: 'keys.updateCredits', body: { keyId, operation: 'set', value: SET_TO } }, shows: (d) => d.credits === SET_TO };
    },
  },
  {
    kind: 'disable',
    title: 'a key disabled',
    promise: 'cacheFreshMs',
    rules: ['verify.disabled'],
    async make(ctx, f) {
      const { keyId, probe } = await freshKey(ctx, f, 'disable');
      return { probe, change: { op: 'keys.updateKey', body: { keyId, enabled: false } }, shows: (d) => d.code === 'DISABLED' };
    },
  },
  {
    kind: 'delete',
    title: 'a key deleted',
    promise: 'cacheFreshMs',
    rules: ['keys.delete', 'verify.not-found'],
    async make(ctx, f) {
      const { keyId, probe } = await freshKey(ctx, f, 'delete');
      return { probe, change: { op: 'keys.deleteKey', body: { keyId } }, shows: (d) => d.code === 'NOT_FOUND' };
    },
  },
  {
    kind: 'override',
    title: `a rate-limit override (limit ${OVERRIDE_LIMIT})`,
    promise: 'overrideCacheMs',
    rules: ['ratelimit.override-exact'],
    async make(ctx, f) {
      const namespace = await namespaceOf(ctx, f);
      const identifier = `${ctx.tag}-visibility-${f.overrides++}`;
      ctx.onCleanup(() => deleteQuietly(ctx, 'ratelimit.deleteOverride', { namespace, identifier }));
      return {
        // Cost 0 consumes nothing; the answer's limit is the override's once one applies.
        probe: { op: 'ratelimit.limit', body: { namespace, identifier, limit: REQUEST_LIMIT, duration: 60_000, cost: 0 } },
        change: { op: 'ratelimit.setOverride', body: { namespace, identifier, limit: OVERRIDE_LIMIT, duration: 60_000 } },
        shows: (d) => d.limit === OVERRIDE_LIMIT,
      };
    },
  },
  {
    kind: 'expiry',
    title: `a key's expiry`,
    // A region's cached copy of a key carries its `expires`: a cache that judged it only when the
    // key is read again would go on answering VALID until its entry is refreshed, the window that
    // bounds a disable or a delete. (The simulator's production profile judges the cached copy's
    // expires against the current clock, so its lag is 0; measured all the same.)
    promise: 'cacheFreshMs',
    rules: ['verify.expired'],
    async make(ctx, f, time) {
      // A key is past its expires when now > expires: the first such instant starts the lag. On a live
      // target this machine's clock sets it, so a skew of the service's clock shows in the lag.
      const expires = (await time.now()) + EXPIRES_AHEAD_MS;
      const { probe } = await freshKey(ctx, f, 'expiry', expires);
      return { probe, change: { atMs: expires + 1 }, shows: (d) => d.code === 'EXPIRED' };
    },
  },
];

/** The run's rate-limit namespace, made (or probed) on first use. */
async function namespaceOf(ctx: ScenarioContext, f: VisibilityFixtures): Promise<string> {
  f.namespace ??= await ensureNamespace(ctx, 'visibility');
  return f.namespace;
}

interface VisibilityFixtures {
  apiId: string;
  /** A key the load reads (cost 0) while nothing is measured. */
  key: string;
  namespace: string | undefined;
  /** Overrides made so far (each on an identifier of its own). */
  overrides: number;
}

/** One change: its lag, or why it has none. */
type Measured = { lagMs: number } | { neverMs: number; lanes: string[] } | { unknown: string };

/** Makes a fresh subject, held in every lane, changes it in lane 1, polls every lane until all show it. */
async function measureOnce(
  ctx: ScenarioContext,
  lanes: Lanes,
  time: ScenarioTime,
  spec: KindSpec,
  f: VisibilityFixtures,
  maxWaitMs: number,
): Promise<Measured> {
  const subject = await spec.make(ctx, f, time);
  // Every lane holds the subject before the change, as the regions of a busy key do.
  for (const [i, outcome] of (await everyLane(ctx, lanes, subject.probe.op, subject.probe.body)).entries()) {
    if (!outcome.answered) return { unknown: `a read before the change never came (${outcome.why})` };
    // An expiry that came before every lane read the key (a slow target): nothing was held.
    if (shows(subject, outcome)) return { unknown: `${lanes.label(i + 1)} showed the change before it was made` };
  }
  const started = await startOf(ctx, lanes, time, subject.change);
  if (typeof started === 'string') return { unknown: started };
  const startMs = started;
  const seen = new Set<number>();
  for (;;) {
    const outcomes = await everyLane(ctx, lanes, subject.probe.op, subject.probe.body);
    const elapsedMs = (await time.now()) - startMs;
    outcomes.forEach((outcome, i) => {
      if (shows(subject, outcome)) seen.add(i + 1);
    });
    if (seen.size === lanes.count) return { lagMs: elapsedMs };
    if (elapsedMs >= maxWaitMs) {
      const unseen = Array.from({ length: lanes.count }, (_, i) => i + 1).filter((lane) => !seen.has(lane));
      return { neverMs: elapsedMs, lanes: unseen.map((lane) => lanes.label(lane)) };
    }
    await time.pass(Math.min(POLL_MS, maxWaitMs - elapsedMs));
  }
}

/** Whether an answer shows the subject's change. */
function shows(subject: Subject, outcome: CallOutcome): boolean {
  const d = outcome.answered ? okData(outcome.response) : undefined;
  return d !== undefined && typeof d !== 'string' && subject.shows(d);
}

/**
 * Makes the change and returns the instant its lag runs from: a call's answer (read on the
 * scenario's clock), or an instant the time is moved or waited to; a string says why there is none.
 */
async function startOf(ctx: ScenarioContext, lanes: Lanes, time: ScenarioTime, change: Change): Promise<number | string> {
  if ('atMs' in change) {
    // A wait may end a little early on this machine's clock: it is waited again until past.
    for (let now = await time.now(); now < change.atMs; now = await time.now()) await time.pass(change.atMs - now);
    return change.atMs;
  }
  const { op, body } = change;
  const changed = await laneCall(ctx, lanes, 1, op, body);
  if (!changed.answered) return `${op} never came (${changed.why})`;
  if (changed.response.status !== 200) return `${op} was refused: ${shown(changed.response)}`;
  return time.now();
}

/** The kind's promise under the set in force, ms. */
const promiseOf = (ctx: ScenarioContext, spec: KindSpec): number => ctx.promises[spec.promise];

const nameOf = (ctx: ScenarioContext, spec: KindSpec): string => `${spec.title} is seen everywhere within ${promiseOf(ctx, spec) / 1000} s`;

/** The measure a kind's lags are reported as (`lag.credits` …), with the promise in force. */
function measureOf(ctx: ScenarioContext, spec: KindSpec): MeasureSpec {
  return {
    name: `lag.${spec.kind}`,
    title: `how long ${spec.title} took to be seen in every lane (its check allows the promise + ${MARGIN_MS / 1000} s for the poll's step)`,
    unit: 'ms',
    promise: promiseOf(ctx, spec),
  };
}

/** One change's lag as a sample of its measure; never seen or never answered: unknown. */
function reportLag(ctx: ScenarioContext, spec: KindSpec, measured: Measured): void {
  ctx.measure(measureOf(ctx, spec), 'lagMs' in measured ? measured.lagMs : undefined);
}

/** Why overrides cannot be measured (a live target without a rate-limit namespace), or undefined. */
async function namespaceProblem(ctx: ScenarioContext, f: VisibilityFixtures): Promise<string | undefined> {
  try {
    await namespaceOf(ctx, f);
    return undefined;
  } catch (error) {
    return `no rate-limit namespace for the overrides: ${error instanceof Error ? error.message : String(error)}`;
  }
}

/** The check of one kind over its repetitions. */
function judgeKind(ctx: ScenarioContext, spec: KindSpec, results: readonly Measured[], maxWaitMs: number, time: ScenarioTime): CheckResult {
  const name = nameOf(ctx, spec);
  const limitMs = promiseOf(ctx, spec) + MARGIN_MS;
  const lags = results.flatMap((r) => ('lagMs' in r ? [r.lagMs] : []));
  const never = results.flatMap((r) => ('neverMs' in r ? [r] : []));
  const unknown = results.flatMap((r) => ('unknown' in r ? [r.unknown] : []));
  const parts = [
    `lag ${lagSummary(lags)} over ${lags.length} changes (${time.source}${time.moved ? ', moved' : ''}), promise ${limitMs / 1000} s with margin (${ctx.promises.name})`,
  ];
  if (never.length > 0) parts.push(`never seen within ${maxWaitMs / 1000} s in ${never.map((n) => n.lanes.join(', ')).join('; ')}`);
  if (unknown.length > 0) parts.push(`not judged: ${unknown.join('; ')}`);
  const late = lags.filter((lag) => lag > limitMs);
  if (late.length > 0) parts.unshift(`${late.length} changes seen later than the promise`);
  // A change never seen breaks the promise only when the scenario waited longer than it.
  const neverBreaks = never.length > 0 && maxWaitMs > limitMs;
  // Nothing measured and nothing breached: no verdict either way.
  const detail = lags.length === 0 && !neverBreaks ? `not judged: ${parts.join('; ')}` : parts.join('; ');
  return checkResult(name, late.length === 0 && !neverBreaks, detail, spec.rules);
}

export default defineScenario<VisibilityFixtures>({
  name: 'visibility',
  rules: ['credits.update-credits', 'verify.disabled', 'keys.delete', 'verify.not-found', 'ratelimit.override-exact', 'verify.expired'],
  description: 'Live-safe: how long a credit set, a key disabled, deleted or expired, an override take to be seen in every region (or connection)',
  defaults: { rate: 2, durationMs: 1_000, warmupMs: 0 },
  async setup(ctx) {
    const apiId = await createTaggedApi(ctx, 'visibility');
    const { key } = await createKey(ctx, { apiId, name: `${ctx.tag}-visibility-load`, credits: { remaining: CREDITS } });
    return { apiId, key, namespace: undefined, overrides: 0 };
  },
  // The load only reads one key of its own (cost 0); the measurements come after it.
  mix: [{ name: 'verifyKey cost 0', weight: 1, build: (f) => ({ op: 'keys.verifyKey', body: { key: f.key, credits: { cost: 0 } } }) }],
  async finish(ctx, f) {
    const maxWaitMs = durationEnv('KEYSIM_VISIBILITY_MAX_WAIT', '90s');
    const repeats = Math.max(1, Math.round(Number(process.env.KEYSIM_VISIBILITY_REPEATS ?? '3')) || 3);
    const lanes = await lanesOf(ctx);
    const time = await scenarioTime(ctx);
    ctx.log(
      `visibility: ${lanes.count} ${lanes.regions === undefined ? 'connections (the target names no regions)' : 'regions'}, ${repeats} changes per kind, at most ${maxWaitMs / 1000} s each`,
    );
    const checks: CheckResult[] = [];
    for (const spec of KINDS) {
      const results: Measured[] = [];
      const skipped = spec.kind === 'override' ? await namespaceProblem(ctx, f) : undefined;
      if (skipped !== undefined) {
        checks.push(checkResult(nameOf(ctx, spec), true, `not judged: ${skipped}`));
        continue;
      }
      for (let i = 0; i < repeats; i++) {
        const measured = await measureOnce(ctx, lanes, time, spec, f, maxWaitMs);
        results.push(measured);
        reportLag(ctx, spec, measured);
        // A change never seen is not asked again: each would wait the whole max wait.
        if ('neverMs' in measured) break;
      }
      checks.push(judgeKind(ctx, spec, results, maxWaitMs, time));
    }
    return checks;
  },
  thresholds: ['errors == 0', 'checks == 0'],
});
