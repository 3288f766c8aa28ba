/**
 * Several histories of one run — the set-up's and its segments' — combined into one, so that the
 * invariant checkers judge a key or a rate limit that several segments used over the union of
 * their operations (docs/checking.md#across-segments).
 *
 * Why this is sound: the checkers accept every order of the operations consistent with each
 * one's time interval, so they need no order between segments beyond what the times prove. An
 * operation keeps its intervals: the service-clock bracket (the one target's clock) as recorded,
 * the wall interval as recorded when every history comes from one machine (one clock), widened by
 * a bound on how far the machines' clocks are apart otherwise. A history's `seq` is unique within
 * it only, so the combined events are renumbered (in invoke order) and keep where they came from
 * in `origin` (`segment 1/4 #817`): the identity of an operation is its history and its number.
 *
 * What is refused, because the union would not be one run's: histories of different scenarios,
 * seeds or targets; a set-up whose tag is not the one its segments used; segments of different
 * cuts, one segment twice, or some of a plan's segments missing (their operations could explain
 * what the others saw); a whole run's history beside others.
 */
import { type HistoryEvent, type HistoryHeader, DEFAULT_WALL_SKEW_MS } from './history-format.js';
import { checkablePrefix } from './history-reader.js';

/** Bound on how far the wall clocks of several machines are apart, ms, when none is given. */
export const DEFAULT_HOST_SKEW_MS = 1_000;

/** One history to combine: its name (a path, for messages), its header, its events. */
export interface HistoryPart {
  name: string;
  header: HistoryHeader;
  events: readonly HistoryEvent[];
  /** The file was cut short (a killed run). */
  truncated: boolean;
}

export interface CombineOptions {
  /** Bound on |service clock − wall clock| for events without service times (default: the largest the histories name). */
  wallSkewMs?: number;
  /** Bound on how far the recording processes' wall clocks are apart (default DEFAULT_HOST_SKEW_MS across machines, 0 on one). */
  hostSkewMs?: number;
}

export interface CombinedHistory {
  header: HistoryHeader;
  /** Every part's events (those that can be judged, when a part was cut short), renumbered from 0 in invoke order. */
  events: HistoryEvent[];
  /** The skew bound the checkers must use for events without service times. */
  wallSkewMs: number;
  /** How far each wall interval was widened (0: one machine). */
  hostSkewMs: number;
  /** What the parts were, e.g. `set-up`, `segment 0/2`, in the order given. */
  labels: string[];
  /** When a part was cut short: what was read, and what could be judged. */
  truncated?: { parts: string[]; read: number; leftOut: number; untilMs: number | undefined };
  notes: string[];
}

/** Histories that are not of one run: the message says which and why. */
export class HistoryCombineError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'HistoryCombineError';
  }
}

/** What a part is, for messages and origins. */
export function partLabel(header: HistoryHeader): string {
  const run = header.run;
  if (run?.setUp === 'setup-only') return 'set-up';
  if (run?.segment !== undefined) return `segment ${run.segment.index}/${run.segment.count}`;
  return header.combined !== undefined ? 'combined history' : 'whole run';
}

function describeRun(h: HistoryHeader): string {
  const r = h.run;
  return `${r?.scenario ?? '?'} seed ${r?.seed ?? '?'} on ${r?.target ?? '?'}`;
}

/** Refuses parts that are not the set-up and segments of one run (see the module comment). */
function checkOneRun(parts: readonly HistoryPart[]): void {
  for (const p of parts) {
    const r = p.header.run;
    if (r?.scenario === undefined || r.seed === undefined || r.tag === undefined) {
      throw new HistoryCombineError(
        `${p.name} does not say which run it records (no scenario, seed or tag in its header: recorded by an older keysim, or by hand): it cannot be matched with the others. Check it alone.`,
      );
    }
    if (r.segment === undefined && r.setUp !== 'setup-only') {
      throw new HistoryCombineError(
        `${p.name} is the history of a ${p.header.combined === undefined ? 'whole run' : 'combined history'}, not of a segment or a set-up: check it alone.`,
      );
    }
  }
  const first = parts[0] as HistoryPart;
  for (const p of parts) {
    if (
      p.header.run?.scenario !== first.header.run?.scenario ||
      p.header.run?.seed !== first.header.run?.seed ||
      p.header.run?.target !== first.header.run?.target
    ) {
      throw new HistoryCombineError(
        `${p.name} records another run (${describeRun(p.header)}) than ${first.name} (${describeRun(first.header)}): give the histories of one run's segments (and of its set-up).`,
      );
    }
  }
  const setUps = parts.filter((p) => p.header.run?.setUp === 'setup-only');
  if (setUps.length > 1) throw new HistoryCombineError(`${setUps.map((p) => p.name).join(' and ')} are both set-ups: one run has one set-up.`);
  const segments = parts.filter((p) => p.header.run?.segment !== undefined);
  const setUp = setUps[0];
  const shared = segments.filter((p) => p.header.run?.setUp === 'shared');
  if (shared.length > 0 && shared.length < segments.length) {
    const own = segments.find((p) => p.header.run?.setUp !== 'shared') as HistoryPart;
    throw new HistoryCombineError(
      `${own.name} ran its own setup while ${(shared[0] as HistoryPart).name} used a shared one: they are not segments of one run.`,
    );
  }
  if (setUp !== undefined && segments.length > 0 && shared.length === 0) {
    throw new HistoryCombineError(`${(segments[0] as HistoryPart).name} ran its own setup: the set-up ${setUp.name} was not theirs.`);
  }
  // Segments of one shared set-up carry its tag: another tag is another set-up, another run.
  const tagged = setUp ?? shared[0];
  for (const p of [...shared, ...setUps]) {
    if (tagged !== undefined && p.header.run?.tag !== tagged.header.run?.tag) {
      throw new HistoryCombineError(
        `${p.name} belongs to the set-up tagged ${p.header.run?.tag} but ${tagged.name} to ${tagged.header.run?.tag}: their fixtures differ; give the histories of one run.`,
      );
    }
  }
  if (segments.length === 0) return;
  const count = (segments[0] as HistoryPart).header.run?.segment?.count as number;
  const seen = new Map<number, string>();
  for (const p of segments) {
    const s = p.header.run?.segment as { index: number; count: number };
    if (s.count !== count)
      throw new HistoryCombineError(
        `${p.name} is segment ${s.index}/${s.count} but ${(segments[0] as HistoryPart).name} is of ${count} segments: two cuts of the plan are not one run.`,
      );
    const twice = seen.get(s.index);
    if (twice !== undefined) throw new HistoryCombineError(`segment ${s.index}/${count} is given twice (${twice} and ${p.name}).`);
    seen.set(s.index, p.name);
  }
  const missing = Array.from({ length: count }, (_, i) => i).filter((i) => !seen.has(i));
  if (missing.length > 0) {
    throw new HistoryCombineError(
      `segments ${missing.map((i) => `${i}/${count}`).join(', ')} of the plan are missing: their operations could explain what the others saw, so the union of the rest cannot be judged. Give every segment's history.`,
    );
  }
}

/** Combines the histories of one run (throws a HistoryCombineError when they are not). */
export function combineHistories(given: readonly HistoryPart[], options: CombineOptions = {}): CombinedHistory {
  if (given.length === 0) throw new HistoryCombineError('no history to combine.');
  checkOneRun(given);
  // The set-up first, then the segments in order, whatever order they were given in.
  const rank = (p: HistoryPart) => (p.header.run?.setUp === 'setup-only' ? -1 : (p.header.run?.segment?.index ?? 0));
  const parts = [...given].sort((a, b) => rank(a) - rank(b));
  const hosts = new Set(parts.map((p) => p.header.host));
  const oneMachine = hosts.size === 1 && !hosts.has(undefined);
  // Given, it holds even on one machine (a clock stepped between two processes' starts).
  const hostSkewMs = options.hostSkewMs ?? (oneMachine ? 0 : DEFAULT_HOST_SKEW_MS);
  const skews = parts.map((p) => p.header.wallSkewMs).filter((s): s is number => s !== undefined);
  // The widest bound holds for every part (each measured or assumed its own).
  const wallSkewMs = options.wallSkewMs ?? (skews.length > 0 ? Math.max(...skews) : DEFAULT_WALL_SKEW_MS);
  const labels = parts.map((p) => partLabel(p.header));

  // Every wall interval widened by the clocks' bound: it then holds the operation in any machine's time.
  const tagged = parts.flatMap((p, part) =>
    p.events.map((e) => ({ part, e: hostSkewMs === 0 ? e : { ...e, invokeMs: e.invokeMs - hostSkewMs, completeMs: e.completeMs + hostSkewMs } })),
  );
  // A part cut short hides operations that any part's later operations may have seen: judge only
  // what completed before the earliest instant a lost operation may have been sent.
  const cut = parts.filter((p) => p.truncated);
  let untilMs = Number.POSITIVE_INFINITY;
  for (const [part, p] of parts.entries()) {
    if (!p.truncated) continue;
    const prefix = checkablePrefix(tagged.filter((t) => t.part === part).map((t) => t.e));
    untilMs = Math.min(untilMs, prefix.untilMs ?? Number.NEGATIVE_INFINITY);
  }
  const kept = tagged.filter((t) => t.e.completeMs < untilMs);
  kept.sort((a, b) => a.e.invokeMs - b.e.invokeMs || a.part - b.part || a.e.seq - b.e.seq);
  const events = kept.map(({ part, e }, seq) => ({ ...e, seq, origin: e.origin ?? `${labels[part] as string} #${e.seq}` }));

  const notes: string[] = [];
  notes.push(
    `Combined from ${parts.length} histories (${labels.join(', ')}): each operation is judged with its own time interval, with no order between segments but what the times prove.`,
  );
  if (hostSkewMs > 0)
    notes.push(
      `The histories come from ${oneMachine ? 'one machine' : 'several machines (or do not say which)'}: every wall interval was widened by ${hostSkewMs} ms for the difference between their clocks.`,
    );
  const segments = parts.filter((p) => p.header.run?.setUp === 'shared');
  if (segments.length > 0 && !parts.some((p) => p.header.run?.setUp === 'setup-only')) {
    notes.push(
      `The segments share a set-up whose history is not among these: keys it created cannot be followed (add its history, written by keysim run --setup-only --history).`,
    );
  }
  const first = parts[0] as HistoryPart;
  const startedAt = parts
    .map((p) => p.header.startedAt)
    .filter((s): s is string => s !== undefined)
    .sort()[0];
  const run = first.header.run ?? {};
  const sharedTag = parts.find((p) => p.header.run?.setUp !== 'own')?.header.run?.tag;
  const header: HistoryHeader = {
    format: first.header.format,
    version: first.header.version,
    ...(startedAt === undefined ? {} : { startedAt }),
    run: {
      ...(run.scenario === undefined ? {} : { scenario: run.scenario }),
      ...(run.seed === undefined ? {} : { seed: run.seed }),
      ...(run.target === undefined ? {} : { target: run.target }),
      // The shared set-up's tag; segments that each ran their own setup have no one tag.
      ...(sharedTag === undefined ? {} : { tag: sharedTag }),
    },
    wallSkewMs,
    ...(oneMachine ? { host: first.header.host as string } : {}),
    combined: labels,
  };
  const read = tagged.length;
  return {
    header,
    events,
    wallSkewMs,
    hostSkewMs,
    labels,
    ...(cut.length === 0
      ? {}
      : { truncated: { parts: cut.map((p) => p.name), read, leftOut: read - events.length, untilMs: Number.isFinite(untilMs) ? untilMs : undefined } }),
    notes,
  };
}
