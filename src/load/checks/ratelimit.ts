/**
 * Rate-limit invariants over a recorded history (service-facts §8), with counter-style bounds.
 *
 * A counter is what the service counts per window: (namespace, identifier, duration) for
 * ratelimit.limit and multiLimit, the limit's `rl_` id and duration for a key's or identity's
 * limit checked by verifyKey (an identity's limit is shared by its keys), and (key, name,
 * duration) for an inline limit. The effective limit and duration of a ratelimit.limit request
 * are an override's when one applies: the overrides set and deleted in the history are replayed
 * (an exact identifier beats a wildcard), and when an override's change is concurrent with a
 * request, every possibility is kept. An override the history never set but the answer names
 * is taken as the answer reports it (its window identified by `reset`). Namespaces are matched
 * by the string the requests used (name or id, consistently). Where this model may split what the
 * service counts as one counter (such a foreign override; one limit name of a key seen under
 * several ids or also inline), only over-admission is judged: splitting can only under-count.
 *
 * Each decision falls in the fixed window floor(t / duration) of its service time t: the service
 * bracket when recorded, else the wall times widened by the skew; a bracket crossing a window
 * boundary is narrowed by the answer's `reset` (a correct service reports its own window), else
 * the decision may be in either window. Per counter and window:
 *
 *   sure(k)     = admitted cost of confirmed answers surely in window k (one counter, one window)
 *   possible(k) = admitted or unknown (timeout) cost possibly in window k
 *
 * (1) No over-admission: sure(k) ≤ the largest effective limit among them; and each admitted
 * request X must have fitted: (sure cost in k completed before X was invoked) + floor(sure(k−1) ·
 * (1 − latest elapsed)) + cost(X) ≤ limit(X), the sliding-window rule with every term a lower
 * bound. (2) No false denial: a denied request X is legal only if, for some possible counter and
 * window, (possible cost in k invoked before X completed) + floor(possible(k−1) · (1 − earliest
 * elapsed)) + cost(X) > limit — an upper bound on what the service could have seen (plus the
 * cost of earlier entries of the same multiLimit on the same counter: the service counts those
 * first). A denial of cost 0 is always wrong. Unknown outcomes count only toward upper bounds.
 *
 * Sums are prefix sums over each window's decisions sorted by time (binary search), so the work
 * is O(n log n); decisions whose window range is wide (an unknown outcome may land in any later
 * window) sit in a per-counter list scanned by the denial checks, which is short in practice.
 */
import { type HistoryEvent, type TimeBracket, DEFAULT_WALL_SKEW_MS, effectUnknown, okOutcome, timeBracket } from '../history.js';
import type { CheckOptions, CheckerResult, InvariantId, Violation } from './index.js';
import { countLE, countLT } from './sorted.js';
import { ViolationLog, witness } from './violation-log.js';

const INF = Number.POSITIVE_INFINITY;
/** A decision possibly in more windows than this is kept in the counter's wide list. */
const MAX_WINDOW_SPREAD = 3;

/** One counter a decision may have used, with the limit in force and the possible windows. */
interface Possibility {
  counter: string;
  subject: string;
  /** Undefined for an override the history never set: the window is then identified by `reset`. */
  durationMs: number | undefined;
  limit: number;
  kLo: number;
  kHi: number;
  /** The override operation that gave this limit, for witnesses. */
  source: HistoryEvent | undefined;
}

interface Entry {
  cost: number;
  possibilities: Possibility[];
  /** For a denial: whether the answer names this limit as the one exceeded. */
  exceeded: boolean;
}

interface Decision {
  event: HistoryEvent;
  t: TimeBracket;
  kind: 'limit' | 'multi' | 'verify';
  admitted: 'yes' | 'no' | 'maybe';
  entries: Entry[];
}

interface Item {
  inv: number;
  comp: number;
  sComp: number;
  cost: number;
  limit: number;
  event: HistoryEvent;
  source: HistoryEvent | undefined;
}

interface WideItem extends Item {
  kLo: number;
  kHi: number;
}

class Bucket {
  readonly sure: Item[] = [];
  readonly possible: Item[] = [];
  #sureComps = new Float64Array(0);
  #sureCum = new Float64Array(1);
  #possibleInvs = new Float64Array(0);
  #possibleCum = new Float64Array(1);
  sureTotal = 0;
  possibleTotal = 0;
  maxSureLimit = 0;

  finish(): void {
    this.sure.sort((a, b) => a.comp - b.comp);
    this.possible.sort((a, b) => a.inv - b.inv);
    this.#sureComps = Float64Array.from(this.sure, (i) => i.comp);
    this.#sureCum = new Float64Array(this.sure.length + 1);
    for (const [i, item] of this.sure.entries()) {
      this.#sureCum[i + 1] = (this.#sureCum[i] as number) + item.cost;
      this.maxSureLimit = Math.max(this.maxSureLimit, item.limit);
    }
    this.#possibleInvs = Float64Array.from(this.possible, (i) => i.inv);
    this.#possibleCum = new Float64Array(this.possible.length + 1);
    for (const [i, item] of this.possible.entries()) this.#possibleCum[i + 1] = (this.#possibleCum[i] as number) + item.cost;
    this.sureTotal = this.#sureCum[this.sure.length] as number;
    this.possibleTotal = this.#possibleCum[this.possible.length] as number;
  }

  /** Sure cost completed before `t`. */
  sureCompLT(t: number): number {
    return this.#sureCum[countLT(this.#sureComps, t)] as number;
  }

  /** Possible cost invoked at or before `t`. */
  possibleInvLE(t: number): number {
    return this.#possibleCum[countLE(this.#possibleInvs, t)] as number;
  }
}

class Counter {
  readonly buckets = new Map<number, Bucket>();
  readonly wide: WideItem[] = [];
  constructor(
    readonly subject: string,
    readonly durationMs: number | undefined,
  ) {}

  bucket(k: number): Bucket {
    let b = this.buckets.get(k);
    if (b === undefined) {
      b = new Bucket();
      this.buckets.set(k, b);
    }
    return b;
  }
}


function iso(ms: number): string {
  const date = new Date(ms);
  return Number.isFinite(ms) && !Number.isNaN(date.getTime()) ? date.toISOString() : String(ms);
}

function windowText(p: { durationMs: number | undefined }, k: number): string {
  if (p.durationMs === undefined) return `the window ending ${iso(k)}`;
  return `the window ${iso(k * p.durationMs)} … ${iso((k + 1) * p.durationMs)}`;
}

/** Window range of a service bracket for one duration, narrowed by the answer's `reset`. */
function windows(t: TimeBracket, durationMs: number, reset: number | undefined): { kLo: number; kHi: number } {
  const kLo = Math.floor(t.sInv / durationMs);
  const kHi = Number.isFinite(t.sComp) ? Math.floor(t.sComp / durationMs) : INF;
  if (reset !== undefined && Number.isInteger(reset / durationMs)) {
    const k = reset / durationMs - 1;
    if (k >= kLo && k <= kHi) return { kLo: k, kHi: k };
  }
  return { kLo, kHi };
}

// ── overrides ─────────────────────────────────────────────────────────────────────────────

interface OverrideOp {
  t: TimeBracket;
  event: HistoryEvent;
  /** The override after this operation; null = deleted. */
  state: { limit: number; durationMs: number } | null;
}

function wildcard(pattern: string): RegExp {
  const escaped = pattern.split('*').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${escaped.join('.*')}$`, 's');
}

/** The states one override identifier may be in when X takes effect (state null = absent). */
function possibleStates(ops: readonly OverrideOp[], x: TimeBracket): Array<Pick<OverrideOp, 'state'> & { event: HistoryEvent | undefined }> {
  const before = ops.filter((o) => o.t.inv <= x.comp);
  const sure = before.filter((o) => o.t.comp < x.inv);
  const latestSureInv = sure.reduce((m, o) => Math.max(m, o.t.inv), Number.NEGATIVE_INFINITY);
  const states: Array<Pick<OverrideOp, 'state'> & { event: HistoryEvent | undefined }> = before.filter((o) => !(o.t.comp < latestSureInv));
  // Before any change surely took effect, the override may still be in its initial state: absent.
  if (sure.length === 0) states.push({ state: null, event: undefined });
  return states;
}

class Overrides {
  readonly #byNamespace = new Map<string, Map<string, OverrideOp[]>>();
  readonly #patterns = new Map<string, RegExp>();
  readonly knownIds = new Set<string>();

  add(namespace: string, identifier: string, op: OverrideOp): void {
    let byIdentifier = this.#byNamespace.get(namespace);
    if (byIdentifier === undefined) this.#byNamespace.set(namespace, (byIdentifier = new Map()));
    let ops = byIdentifier.get(identifier);
    if (ops === undefined) byIdentifier.set(identifier, (ops = []));
    ops.push(op);
  }

  /**
   * The possible (limit, duration, source) in force for X: the exact identifier's states; while
   * it may be absent, also the matching wildcards' and the request's own (unless a wildcard is
   * surely present).
   */
  configs(namespace: string, identifier: string, request: { limit: number; durationMs: number }, x: TimeBracket): Array<{ limit: number; durationMs: number; source: HistoryEvent | undefined }> {
    const byIdentifier = this.#byNamespace.get(namespace);
    const out: Array<{ limit: number; durationMs: number; source: HistoryEvent | undefined }> = [];
    const push = (c: { limit: number; durationMs: number; source: HistoryEvent | undefined }) => {
      if (!out.some((o) => o.limit === c.limit && o.durationMs === c.durationMs)) out.push(c);
    };
    const exact = byIdentifier?.get(identifier);
    const exactStates = exact === undefined ? [{ state: null, event: undefined }] : possibleStates(exact, x);
    for (const s of exactStates) if (s.state !== null) push({ ...s.state, source: s.event });
    if (exactStates.every((s) => s.state !== null)) return out;
    let wildcardSurelyPresent = false;
    for (const [pattern, ops] of byIdentifier ?? []) {
      if (pattern === identifier || !pattern.includes('*')) continue;
      let regex = this.#patterns.get(pattern);
      if (regex === undefined) this.#patterns.set(pattern, (regex = wildcard(pattern)));
      if (!regex.test(identifier)) continue;
      const states = possibleStates(ops, x);
      if (states.every((s) => s.state !== null)) wildcardSurelyPresent = true;
      for (const s of states) if (s.state !== null) push({ ...s.state, source: s.event });
    }
    if (!wildcardSurelyPresent) push({ ...request, source: undefined });
    return out;
  }
}

// ── collecting ────────────────────────────────────────────────────────────────────────────

interface VerifyCounterInfo {
  counter: string;
  subject: string;
  durationMs: number;
  limit: number;
  name: string;
}

function limitPossibilities(
  overrides: Overrides,
  namespace: string,
  identifier: string,
  request: { limit: number; durationMs: number },
  t: TimeBracket,
  answer: { limit?: number | undefined; reset?: number | undefined; overrideId?: string | undefined } | undefined,
): Possibility[] {
  const subject = `${namespace}/${identifier}`;
  if (answer?.overrideId !== undefined && !overrides.knownIds.has(answer.overrideId) && answer.reset !== undefined) {
    return [
      {
        counter: `ns:${namespace}\0${identifier}\0override:${answer.overrideId}`,
        subject,
        durationMs: undefined,
        limit: answer.limit ?? request.limit,
        kLo: answer.reset,
        kHi: answer.reset,
        source: undefined,
      },
    ];
  }
  return overrides.configs(namespace, identifier, request, t).map((c) => ({
    counter: `ns:${namespace}\0${identifier}\0${c.durationMs}`,
    subject,
    durationMs: c.durationMs,
    limit: c.limit,
    ...windows(t, c.durationMs, answer?.reset),
    source: c.source,
  }));
}

interface CollectedRateLimits {
  decisions: Decision[];
  /** Earliest invoke of an unknown verification whose limits cannot be told: later verification denials are not judged. */
  unattributedSince: number;
  /**
   * Counters whose service-side counter may also hold cost this model files elsewhere, so their
   * denials are not judged: identifiers that an override unknown to the history applied to, and a
   * key's limit name seen under several ids or both attached and inline.
   */
  unjudgeable: (counter: string) => boolean;
}

function collect(events: readonly HistoryEvent[], wallSkewMs: number): CollectedRateLimits {
  const overrides = new Overrides();
  const brackets = new Map<HistoryEvent, TimeBracket>();
  const bracket = (e: HistoryEvent) => {
    let t = brackets.get(e);
    if (t === undefined) brackets.set(e, (t = timeBracket(e, wallSkewMs)));
    return t;
  };
  // Overrides first: a request is judged against every override change, whatever the file order.
  for (const event of events) {
    if (event.op !== 'ratelimit.setOverride' && event.op !== 'ratelimit.deleteOverride') continue;
    const ok = okOutcome(event);
    if (ok === undefined && !effectUnknown(event)) continue;
    const { namespace, identifier, limit, duration } = event.request;
    if (namespace === undefined || identifier === undefined) continue;
    if (event.op === 'ratelimit.setOverride') {
      if (limit === undefined || duration === undefined) continue;
      if (ok?.overrideId !== undefined) overrides.knownIds.add(ok.overrideId);
      overrides.add(namespace, identifier, { t: bracket(event), event, state: { limit, durationMs: duration } });
    } else {
      overrides.add(namespace, identifier, { t: bracket(event), event, state: null });
    }
  }

  const decisions: Decision[] = [];
  const keyCounters = new Map<string, Map<string, VerifyCounterInfo>>();
  const unknownVerifies: HistoryEvent[] = [];
  const foreignOverrides = new Set<string>();
  const countersByKeyName = new Map<string, Set<string>>();
  const noteForeign = (namespace: string, identifier: string, answer: { overrideId?: string | undefined } | undefined) => {
    if (answer?.overrideId !== undefined && !overrides.knownIds.has(answer.overrideId)) foreignOverrides.add(`ns:${namespace}\0${identifier}\0`);
  };
  for (const event of events) {
    const ok = okOutcome(event);
    const unknown = effectUnknown(event);
    if (ok === undefined && !unknown) continue;
    const req = event.request;
    const t = bracket(event);
    if (event.op === 'ratelimit.limit') {
      if (req.namespace === undefined || req.identifier === undefined || req.limit === undefined || req.duration === undefined) continue;
      if (ok !== undefined && ok.success === undefined) continue;
      noteForeign(req.namespace, req.identifier, ok);
      const possibilities = limitPossibilities(overrides, req.namespace, req.identifier, { limit: req.limit, durationMs: req.duration }, t, ok);
      decisions.push({
        event,
        t,
        kind: 'limit',
        admitted: ok === undefined ? 'maybe' : ok.success === true ? 'yes' : 'no',
        entries: [{ cost: req.cost ?? 1, possibilities, exceeded: ok?.success === false }],
      });
    } else if (event.op === 'ratelimit.multiLimit') {
      const limits = req.limits ?? [];
      if (limits.length === 0 || (ok !== undefined && (ok.success === undefined || ok.limits?.length !== limits.length))) continue;
      const entries = limits.map((l, i): Entry => {
        const answer = ok?.limits?.[i];
        noteForeign(l.namespace, l.identifier, answer);
        return {
          cost: l.cost ?? 1,
          possibilities: limitPossibilities(overrides, l.namespace, l.identifier, { limit: l.limit, durationMs: l.duration }, t, answer),
          exceeded: answer?.passed === false,
        };
      });
      decisions.push({ event, t, kind: 'multi', admitted: ok === undefined ? 'maybe' : ok.success === true ? 'yes' : 'no', entries });
    } else if (event.op === 'keys.verifyKey') {
      if (ok === undefined) {
        unknownVerifies.push(event);
        continue;
      }
      const keyId = req.keyId ?? ok.keyId;
      const code = ok.code;
      if (ok.ratelimits === undefined || ok.ratelimits.length === 0 || keyId === undefined) continue;
      if (code !== 'RATE_LIMITED' && code !== 'VALID' && code !== 'USAGE_EXCEEDED') continue;
      let known = keyCounters.get(keyId);
      if (known === undefined) keyCounters.set(keyId, (known = new Map()));
      const entries = ok.ratelimits.map((r): Entry => {
        const named = req.ratelimits?.find((n) => n.name === r.name);
        const inline = named?.limit !== undefined && named.duration !== undefined;
        const counter = inline ? `key:${keyId}\0${r.name}\0${r.duration}` : `rl:${r.id}\0${r.duration}`;
        const subject = inline ? `${keyId}/${r.name}` : `${r.name} (${r.id})`;
        known.set(counter, { counter, subject, durationMs: r.duration, limit: r.limit, name: r.name });
        const byName = `${keyId}\0${r.name}\0${r.duration}`;
        let seen = countersByKeyName.get(byName);
        if (seen === undefined) countersByKeyName.set(byName, (seen = new Set()));
        seen.add(counter);
        return {
          cost: named === undefined ? 1 : (named.cost ?? 1),
          possibilities: [{ counter, subject, durationMs: r.duration, limit: r.limit, ...windows(t, r.duration, r.reset), source: undefined }],
          exceeded: r.exceeded,
        };
      });
      decisions.push({ event, t, kind: 'verify', admitted: code === 'RATE_LIMITED' ? 'no' : 'yes', entries });
    }
  }

  // A verification without an answer may have consumed on every limit its key is seen with.
  let unattributedSince = INF;
  for (const event of unknownVerifies) {
    const t = bracket(event);
    const req = event.request;
    const known = req.keyId === undefined ? undefined : keyCounters.get(req.keyId);
    const entries: Entry[] = [];
    for (const info of known?.values() ?? []) {
      const named = req.ratelimits?.find((n) => n.name === info.name);
      entries.push({
        cost: named === undefined ? 1 : (named.cost ?? 1),
        possibilities: [{ counter: info.counter, subject: info.subject, durationMs: info.durationMs, limit: info.limit, ...windows(t, info.durationMs, undefined), source: undefined }],
        exceeded: false,
      });
    }
    for (const named of req.ratelimits ?? []) {
      if (req.keyId === undefined || named.limit === undefined || named.duration === undefined) continue;
      const counter = `key:${req.keyId}\0${named.name}\0${named.duration}`;
      if (known?.has(counter) === true) continue;
      entries.push({
        cost: named.cost ?? 1,
        possibilities: [{ counter, subject: `${req.keyId}/${named.name}`, durationMs: named.duration, limit: named.limit, ...windows(t, named.duration, undefined), source: undefined }],
        exceeded: false,
      });
    }
    if (known === undefined || known.size === 0) unattributedSince = Math.min(unattributedSince, t.inv);
    if (entries.length > 0) decisions.push({ event, t, kind: 'verify', admitted: 'maybe', entries });
  }
  const aliased = new Set<string>();
  for (const counters of countersByKeyName.values()) if (counters.size > 1) for (const c of counters) aliased.add(c);
  const unjudgeable = (counter: string): boolean => {
    if (aliased.has(counter)) return true;
    if (foreignOverrides.size === 0 || !counter.startsWith('ns:')) return false;
    return foreignOverrides.has(counter.slice(0, counter.lastIndexOf('\0') + 1));
  };
  return { decisions, unattributedSince, unjudgeable };
}

// ── violations ────────────────────────────────────────────────────────────────────────────


// ── the checker ───────────────────────────────────────────────────────────────────────────

/** Checks the rate-limit invariants of a history (see the block comment at the top). */
export function checkRateLimits(events: Iterable<HistoryEvent>, options: CheckOptions = {}): CheckerResult {
  const wallSkewMs = options.wallSkewMs ?? DEFAULT_WALL_SKEW_MS;
  const all = Array.isArray(events) ? (events as HistoryEvent[]) : [...events];
  const { decisions, unattributedSince, unjudgeable } = collect(all, wallSkewMs);
  const counters = new Map<string, Counter>();
  const counterOf = (p: Possibility): Counter => {
    let c = counters.get(p.counter);
    if (c === undefined) counters.set(p.counter, (c = new Counter(p.subject, p.durationMs)));
    return c;
  };
  let rateLimitChecks = 0;
  const counts = { 'ratelimit.no-over-admission': 0, 'ratelimit.no-false-denial': 0 };

  for (const d of decisions) {
    if (d.admitted !== 'maybe') rateLimitChecks += d.entries.length;
    if (d.admitted === 'no') continue;
    for (const entry of d.entries) {
      if (entry.cost === 0) continue;
      const definite = d.admitted === 'yes' && entry.possibilities.length === 1;
      for (const p of entry.possibilities) {
        const counter = counterOf(p);
        const item: Item = { inv: d.t.inv, comp: d.t.comp, sComp: d.t.sComp, cost: entry.cost, limit: p.limit, event: d.event, source: p.source };
        if (p.kHi - p.kLo > MAX_WINDOW_SPREAD) {
          counter.wide.push({ ...item, kLo: p.kLo, kHi: p.kHi });
          continue;
        }
        for (let k = p.kLo; k <= p.kHi; k++) counter.bucket(k).possible.push(item);
        if (definite && p.kLo === p.kHi) counter.bucket(p.kLo).sure.push(item);
      }
    }
  }
  for (const counter of counters.values()) for (const bucket of counter.buckets.values()) bucket.finish();

  const log = new ViolationLog();

  // (1) No over-admission.
  for (const counter of counters.values()) {
    const d = counter.durationMs;
    for (const [k, bucket] of counter.buckets) {
      if (bucket.sure.length === 0) continue;
      counts['ratelimit.no-over-admission'] += bucket.sure.length;
      if (bucket.sureTotal > bucket.maxSureLimit) {
        const sure = bucket.sure;
        log.add('ratelimit.no-over-admission', counter.subject, (sure[sure.length - 1] as Item).comp, () => ({
          message: `${sure.length} requests with a total cost of ${bucket.sureTotal} were admitted in ${windowText(counter, k)}, but the effective limit is ${bucket.maxSureLimit}${sure.some((i) => i.source !== undefined) ? ' (an override)' : ''}.`,
          witness: witness([sure.find((i) => i.source !== undefined)?.source], sure.slice(0, 2).map((i) => i.event), sure.slice(-3).map((i) => i.event)),
        }));
      }
      if (d === undefined) continue;
      const previous = counter.buckets.get(k - 1)?.sureTotal ?? 0;
      const windowEnd = (k + 1) * d;
      for (const x of bucket.sure) {
        const before = bucket.sureCompLT(x.inv);
        const latest = Math.min(x.sComp, windowEnd - 1);
        const weight = Math.floor((previous * (windowEnd - latest)) / d);
        if (before + weight + x.cost <= x.limit) continue;
        log.add('ratelimit.no-over-admission', counter.subject, x.comp, () => ({
          message:
            `#${x.event.seq} was admitted (cost ${x.cost}) in ${windowText(counter, k)} although requests admitted earlier in that window cost at least ${before}` +
            `${weight > 0 ? ` and the previous window still weighed at least ${weight}` : ''}: ${before + weight + x.cost} > limit ${x.limit}.`,
          witness: witness(
            [x.source],
            bucket.sure
              .filter((i) => i.comp < x.inv)
              .slice(-4)
              .map((i) => i.event),
            [x.event],
          ),
        }));
      }
    }
  }

  // (2) No false denial.
  let unjudged = 0;
  for (const dn of decisions) {
    if (dn.admitted !== 'no') continue;
    if (dn.kind === 'verify' && dn.t.comp > unattributedSince) {
      unjudged++;
      continue;
    }
    if (dn.entries.length === 0) continue;
    counts['ratelimit.no-false-denial'] += 1;
    const x = dn.t;
    let legal = false;
    let zeroCost = false;
    let explanation: { used: number; limit: number; cost: number; p: Possibility; k: number; bucket: Bucket | undefined } | undefined;
    for (const [i, entry] of dn.entries.entries()) {
      if (!entry.exceeded) continue;
      if (entry.cost === 0) {
        zeroCost = true;
        continue;
      }
      for (const p of entry.possibilities) {
        // Entries of one request that share a counter see the cost of those before them.
        const sameRequest = dn.entries.slice(0, i).reduce((n, e) => (e.possibilities.some((q) => q.counter === p.counter) ? n + e.cost : n), 0);
        const d = p.durationMs;
        if (d === undefined || p.kHi - p.kLo > MAX_WINDOW_SPREAD || unjudgeable(p.counter)) {
          legal = true;
          break;
        }
        const counter = counters.get(p.counter);
        for (let k = p.kLo; k <= p.kHi && !legal; k++) {
          const bucket = counter?.buckets.get(k);
          let current = (bucket?.possibleInvLE(x.comp) ?? 0) + sameRequest;
          let previous = counter?.buckets.get(k - 1)?.possibleTotal ?? 0;
          for (const w of counter?.wide ?? []) {
            if (w.kLo <= k && k <= w.kHi && w.inv <= x.comp) current += w.cost;
            if (w.kLo <= k - 1 && k - 1 <= w.kHi) previous += w.cost;
          }
          const earliest = Math.max(x.sInv, k * d);
          const weight = Math.floor((previous * ((k + 1) * d - earliest)) / d);
          const used = current + weight;
          if (used + entry.cost > p.limit) legal = true;
          else if (explanation === undefined || used > explanation.used) explanation = { used, limit: p.limit, cost: entry.cost, p, k, bucket };
        }
        if (legal) break;
      }
      if (legal) break;
    }
    if (legal) continue;
    if (!zeroCost && explanation === undefined) continue; // the answer names no exceeded limit: nothing to weigh
    const e = explanation;
    const subject = e?.p.subject ?? dn.entries[0]?.possibilities[0]?.subject ?? `#${dn.event.seq}`;
    log.add('ratelimit.no-false-denial', subject, x.comp, () => ({
      message:
        e === undefined
          ? `#${dn.event.seq} was denied for a limit checked with cost 0, which never fails.`
          : `#${dn.event.seq} was denied (cost ${e.cost}) although at most ${e.used} of the limit ${e.limit} could have been used in ${windowText(e.p, e.k)}: ${e.used} + ${e.cost} ≤ ${e.limit}.`,
      witness: witness(
        [e?.p.source],
        [dn.event],
        (e?.bucket?.possible ?? [])
          .filter((i) => i.inv <= x.comp)
          .slice(-4)
          .map((i) => i.event),
      ),
    }));
  }

  const notes: string[] = [];
  if (unjudged > 0) {
    notes.push(
      `A verification without an answer, on a key whose limits no answer showed, was sent at ${iso(unattributedSince)}: ${unjudged} later RATE_LIMITED verifications were not judged.`,
    );
  }
  return { violations: log.violations(), checked: { keys: 0, verifications: 0, rateLimitChecks }, counts, notes };
}
