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
      const possibilities = limitPossibilities(overrides, req.namespace, req.identifier, { limit: req.limit, durationMs: req.duration }, t, ok, segment);
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
          possibilities: limitPossibilities(overrides, l.namespace, l.identifier, { limit: l.limit, durationMs: l.duration }, t, answer, segment),
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
      if (known === undefined) keyCounters.set(keyId, (known = new Map<string, VerifyCounterInfo>()));
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
        possibilities: [
          {
            counter: info.counter,
            subject: info.subject,
            durationMs: info.durationMs,
            limit: info.limit,
            ...windows(t, info.durationMs, undefined),
            source: undefined,
          },
        ],
        exceeded: false,
      });
    }
    for (const named of req.ratelimits ?? []) {
      if (req.keyId === undefined || named.limit === undefined || named.duration === undefined) continue;
      const counter = `key:${req.keyId}\0${named.name}\0${named.duration}`;
      if (known?.has(counter) === true) continue;
      entries.push({
        cost: named.cost ?? 1,
        possibilities: [
          {
            counter,
            subject: `${req.keyId}/${named.name}`,
            durationMs: named.duration,
            limit: named.limit,
            ...windows(t, named.duration, undefined),
            source: undefined,
          },
        ],
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
