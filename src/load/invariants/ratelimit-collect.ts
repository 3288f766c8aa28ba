/**
 * Reads the rate-limit decisions out of a history: for every ratelimit.limit, multiLimit entry
 * and verification limit, the counters it may have used, the limit in force and the windows it
 * may fall in (see the checker's comment in ratelimit.ts).
 */
import { type HistoryEvent, type TimeBracket, effectUnknown, okOutcome, timeBracket } from '../history/index.js';
import { INF, windows } from './ratelimit-counters.js';
import { Overrides } from './ratelimit-overrides.js';

/** One counter a decision may have used, with the limit in force and the possible windows. */
export interface Possibility {
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

export interface Entry {
  cost: number;
  possibilities: Possibility[];
  /** For a denial: whether the answer names this limit as the one exceeded. */
  exceeded: boolean;
}

export interface Decision {
  event: HistoryEvent;
  t: TimeBracket;
  kind: 'limit' | 'multi' | 'verify';
  admitted: 'yes' | 'no' | 'maybe';
  entries: Entry[];
}

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
  segment: boolean,
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
    // In a segment, another segment may have changed the override this history set: the limit the
    // answer reports, when higher, keeps over-admission sound (checks/segment-scope.ts).
    limit: segment && answer?.limit !== undefined ? Math.max(c.limit, answer.limit) : c.limit,
    ...windows(t, c.durationMs, answer?.reset),
    source: c.source,
  }));
}

export interface CollectedRateLimits {
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

export function collect(events: readonly HistoryEvent[], wallSkewMs: number, segment = false): CollectedRateLimits {
  const collector = new DecisionCollector(wallSkewMs, segment);
  // Overrides first: a request is judged against every override change, whatever the file order.
  for (const event of events) collector.override(event);
  for (const event of events) collector.decision(event);
  // A verification without an answer may have consumed on every limit its key is seen with.
  const unattributedSince = collector.unknownVerifications();
  return { decisions: collector.decisions, unattributedSince, unjudgeable: collector.unjudgeable() };
}

/** The history's overrides, then its decisions, each request's counters as it could have hit them. */
class DecisionCollector {
  readonly decisions: Decision[] = [];
  readonly #wallSkewMs: number;
  readonly #segment: boolean;
  readonly #overrides = new Overrides();
  readonly #brackets = new Map<HistoryEvent, TimeBracket>();
  /** Per key id, the counters its answered verifications named. */
  readonly #keyCounters = new Map<string, Map<string, VerifyCounterInfo>>();
  readonly #unknownVerifies: HistoryEvent[] = [];
  /** Namespace and identifier prefixes an override unknown to the history applied to. */
  readonly #foreignOverrides = new Set<string>();
  /** Per key, limit name and duration: the counters it was seen under (more than one: aliased). */
  readonly #countersByKeyName = new Map<string, Set<string>>();

  constructor(wallSkewMs: number, segment: boolean) {
    this.#wallSkewMs = wallSkewMs;
    this.#segment = segment;
  }

  #bracket(e: HistoryEvent): TimeBracket {
    let t = this.#brackets.get(e);
    if (t === undefined) this.#brackets.set(e, (t = timeBracket(e, this.#wallSkewMs)));
    return t;
  }

  /** Files a setOverride or deleteOverride that may have taken effect. */
  override(event: HistoryEvent): void {
    if (event.op !== 'ratelimit.setOverride' && event.op !== 'ratelimit.deleteOverride') return;
    const ok = okOutcome(event);
    if (ok === undefined && !effectUnknown(event)) return;
    const { namespace, identifier, limit, duration } = event.request;
    if (namespace === undefined || identifier === undefined) return;
    if (event.op === 'ratelimit.setOverride') {
      if (limit === undefined || duration === undefined) return;
      if (ok?.overrideId !== undefined) this.#overrides.knownIds.add(ok.overrideId);
      this.#overrides.add(namespace, identifier, { t: this.#bracket(event), event, state: { limit, durationMs: duration } });
    } else {
      this.#overrides.add(namespace, identifier, { t: this.#bracket(event), event, state: null });
    }
  }

  #noteForeign(namespace: string, identifier: string, answer: { overrideId?: string | undefined } | undefined): void {
    if (answer?.overrideId !== undefined && !this.#overrides.knownIds.has(answer.overrideId)) this.#foreignOverrides.add(`ns:${namespace}\0${identifier}\0`);
  }

  /** Files the decision of a limit, multiLimit or verifyKey that may have taken effect. */
  decision(event: HistoryEvent): void {
    const ok = okOutcome(event);
    const unknown = effectUnknown(event);
    if (ok === undefined && !unknown) return;
    const t = this.#bracket(event);
    if (event.op === 'ratelimit.limit') this.#limit(event, t, ok);
    else if (event.op === 'ratelimit.multiLimit') this.#multiLimit(event, t, ok);
    else if (event.op === 'keys.verifyKey') this.#verify(event, t, ok);
  }

  #limit(event: HistoryEvent, t: TimeBracket, ok: ReturnType<typeof okOutcome>): void {
    const req = event.request;
    if (req.namespace === undefined || req.identifier === undefined || req.limit === undefined || req.duration === undefined) return;
    if (ok !== undefined && ok.success === undefined) return;
    this.#noteForeign(req.namespace, req.identifier, ok);
    const requested = { limit: req.limit, durationMs: req.duration };
    const possibilities = limitPossibilities(this.#overrides, req.namespace, req.identifier, requested, t, ok, this.#segment);
    this.decisions.push({
      event,
      t,
      kind: 'limit',
      admitted: ok === undefined ? 'maybe' : ok.success === true ? 'yes' : 'no',
      entries: [{ cost: req.cost ?? 1, possibilities, exceeded: ok?.success === false }],
    });
  }

  #multiLimit(event: HistoryEvent, t: TimeBracket, ok: ReturnType<typeof okOutcome>): void {
    const limits = event.request.limits ?? [];
    if (limits.length === 0 || (ok !== undefined && (ok.success === undefined || ok.limits?.length !== limits.length))) return;
    const entries = limits.map((l, i): Entry => {
      const answer = ok?.limits?.[i];
      this.#noteForeign(l.namespace, l.identifier, answer);
      return {
        cost: l.cost ?? 1,
        possibilities: limitPossibilities(this.#overrides, l.namespace, l.identifier, { limit: l.limit, durationMs: l.duration }, t, answer, this.#segment),
        exceeded: answer?.passed === false,
      };
    });
    this.decisions.push({ event, t, kind: 'multi', admitted: ok === undefined ? 'maybe' : ok.success === true ? 'yes' : 'no', entries });
  }

  #verify(event: HistoryEvent, t: TimeBracket, ok: ReturnType<typeof okOutcome>): void {
    if (ok === undefined) {
      this.#unknownVerifies.push(event);
      return;
    }
    const req = event.request;
    const keyId = req.keyId ?? ok.keyId;
    const code = ok.code;
    if (ok.ratelimits === undefined || ok.ratelimits.length === 0 || keyId === undefined) return;
    if (code !== 'RATE_LIMITED' && code !== 'VALID' && code !== 'USAGE_EXCEEDED') return;
    let known = this.#keyCounters.get(keyId);
    if (known === undefined) this.#keyCounters.set(keyId, (known = new Map<string, VerifyCounterInfo>()));
    const entries = ok.ratelimits.map((r): Entry => {
      const named = req.ratelimits?.find((n) => n.name === r.name);
      const inline = named?.limit !== undefined && named.duration !== undefined;
      const counter = inline ? `key:${keyId}\0${r.name}\0${r.duration}` : `rl:${r.id}\0${r.duration}`;
      const subject = inline ? `${keyId}/${r.name}` : `${r.name} (${r.id})`;
      known.set(counter, { counter, subject, durationMs: r.duration, limit: r.limit, name: r.name });
      const byName = `${keyId}\0${r.name}\0${r.duration}`;
      let seen = this.#countersByKeyName.get(byName);
      if (seen === undefined) this.#countersByKeyName.set(byName, (seen = new Set()));
      seen.add(counter);
      return {
        cost: named === undefined ? 1 : (named.cost ?? 1),
        possibilities: [{ counter, subject, durationMs: r.duration, limit: r.limit, ...windows(t, r.duration, r.reset), source: undefined }],
        exceeded: r.exceeded,
      };
    });
    this.decisions.push({ event, t, kind: 'verify', admitted: code === 'RATE_LIMITED' ? 'no' : 'yes', entries });
  }

  /**
   * Files the verifications without an answer, on every counter their key was seen with (and
   * their inline limits); returns the earliest invoke of one whose key's counters are unknown.
   */
  unknownVerifications(): number {
    let unattributedSince = INF;
    for (const event of this.#unknownVerifies) {
      const t = this.#bracket(event);
      const req = event.request;
      const known = req.keyId === undefined ? undefined : this.#keyCounters.get(req.keyId);
      const entries: Entry[] = [];
      for (const info of known?.values() ?? []) {
        const named = req.ratelimits?.find((n) => n.name === info.name);
        const cost = named === undefined ? 1 : (named.cost ?? 1);
        entries.push(unknownEntry(cost, info.counter, info.subject, info.durationMs, info.limit, t));
      }
      for (const named of req.ratelimits ?? []) {
        if (req.keyId === undefined || named.limit === undefined || named.duration === undefined) continue;
        const counter = `key:${req.keyId}\0${named.name}\0${named.duration}`;
        if (known?.has(counter) === true) continue;
        entries.push(unknownEntry(named.cost ?? 1, counter, `${req.keyId}/${named.name}`, named.duration, named.limit, t));
      }
      if (known === undefined || known.size === 0) unattributedSince = Math.min(unattributedSince, t.inv);
      if (entries.length > 0) this.decisions.push({ event, t, kind: 'verify', admitted: 'maybe', entries });
    }
    return unattributedSince;
  }

  /** Counters whose denials are not judged (CollectedRateLimits.unjudgeable). */
  unjudgeable(): (counter: string) => boolean {
    const aliased = new Set<string>();
    for (const counters of this.#countersByKeyName.values()) if (counters.size > 1) for (const c of counters) aliased.add(c);
    const foreignOverrides = this.#foreignOverrides;
    return (counter: string): boolean => {
      if (aliased.has(counter)) return true;
      if (foreignOverrides.size === 0 || !counter.startsWith('ns:')) return false;
      return foreignOverrides.has(counter.slice(0, counter.lastIndexOf('\0') + 1));
    };
  }
}

/** One counter a verification without an answer may have consumed on (never exceeded: it has no answer). */
function unknownEntry(cost: number, counter: string, subject: string, durationMs: number, limit: number, t: TimeBracket): Entry {
  return { cost, possibilities: [{ counter, subject, durationMs, limit, ...windows(t, durationMs, undefined), source: undefined }], exceeded: false };
}
