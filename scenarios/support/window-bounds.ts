/**
 * Judging rate-limit decisions on a live target, where nobody controls or reads the service
 * clock exactly: every decision is placed by the window its answer names (`reset`, the end of the
 * window it was decided in; the service's windows are aligned to the Unix epoch, so every counter
 * of one duration shares its edges) and by keysim's own monotonic clock around the request.
 *
 * The sliding window (two epoch-aligned fixed windows; `used = current + floor(previous × (1 −
 * elapsed))`) gives two bounds that hold whatever the pace of the machine:
 *
 * - Per window: the admissions decided in window k never exceed the limit (used ≥ current).
 * - Across an edge: let I be the latest send of any request answered in window k (the edge came
 *   after it) and T the answer of an admission in window k + 1. At most (T − I) of the window had
 *   elapsed when any admission answered by T was decided, so the A admissions of window k + 1
 *   answered by T, after P admissions in window k, satisfy A + floor(P × (1 − (T − I)/D)) ≤ L.
 *   Both clocks run at the same rate, so their offset cancels out.
 *
 * A slow machine only widens (T − I) and weakens the second bound: a busy run is inconclusive
 * (reported as such), never a false alarm. A fixed-window limiter admits a full second burst
 * right after an edge, which breaks the second bound as soon as the burst follows the edge
 * closely; an off-by-one limit breaks the first.
 *
 * Under a promise set whose regions count rate limits apart (`--consistency production`) the
 * limit of both bounds is the band's upper end, and a burst may be refused from its lower end
 * (`band`, support/promised.ts); without a band both are the limit, exactly as before.
 */
import { performance } from 'node:perf_hooks';

/** Monotonic local time, ms (only differences matter). */
export const localNowMs = (): number => performance.now();

/** One decision of one counter. */
export interface Decision {
  invokeMs: number;
  completeMs: number;
  admitted: boolean;
  /** The end of the window the answer names (service time, Unix ms). */
  resetMs: number;
}

/** What a window may admit at most, and from how much held it may refuse (both the limit when exact). */
export interface Band {
  admitUpTo: number;
  denyAbove: number;
}

export interface CounterRecord {
  /** How reports name it, e.g. `limit std (1 s)` or `key 2 per-second`. */
  label: string;
  limit: number;
  durationMs: number;
  decisions: Decision[];
}

export interface BoundsVerdict {
  problems: string[];
  /** Window edges where the previous window still weighed at least one admission: the edge bound had teeth. */
  edgesJudged: number;
  /** Window edges with admissions before them and decisions after them. */
  edgesSeen: number;
}

/**
 * Checks the per-window and across-edge bounds of each counter. `evidence` holds further
 * decisions (any counter of the same duration, e.g. cost-0 probes) that place window edges.
 */
export function checkWindowBounds(
  counters: readonly CounterRecord[],
  evidence: readonly Decision[] = [],
  bandOf: (limit: number) => Band = (limit) => ({ admitUpTo: limit, denyAbove: limit }),
): BoundsVerdict {
  const problems: string[] = [];
  let edgesJudged = 0;
  let edgesSeen = 0;
  for (const c of counters) {
    const D = c.durationMs;
    const most = Math.floor(bandOf(c.limit).admitUpTo);
    const limitText = most === c.limit ? `limit ${c.limit}` : `limit ${c.limit}, at most ${most} within the promise`;
    const admittedBy = new Map<number, Decision[]>();
    for (const d of c.decisions) if (d.admitted) admittedBy.set(d.resetMs, [...(admittedBy.get(d.resetMs) ?? []), d]);
    // Latest send answered in each window, from this counter and the evidence of the same duration.
    const lastSend = new Map<number, number>();
    for (const d of [...c.decisions, ...evidence]) {
      lastSend.set(d.resetMs, Math.max(lastSend.get(d.resetMs) ?? Number.NEGATIVE_INFINITY, d.invokeMs));
    }
    const resets = new Set(c.decisions.map((d) => d.resetMs));
    for (const reset of resets) {
      const admitted = admittedBy.get(reset) ?? [];
      if (admitted.length > most) {
        problems.push(`${c.label}: ${admitted.length} admitted in the window ending ${new Date(reset).toISOString()}, ${limitText}`);
        continue;
      }
      const previous = admittedBy.get(reset - D)?.length ?? 0;
      const edgeSend = lastSend.get(reset - D);
      if (previous === 0 || edgeSend === undefined) continue;
      edgesSeen++;
      const carriedAt = (t: number) => Math.floor(previous * (1 - Math.min(1, Math.max(0, (t - edgeSend) / D))));
      // Judged when the first answer after the edge still had the previous window weighing on it.
      const firstAfter = Math.min(...c.decisions.filter((d) => d.resetMs === reset).map((d) => d.completeMs));
      const judged = carriedAt(firstAfter) >= 1;
      const sorted = [...admitted].sort((a, b) => a.completeMs - b.completeMs);
      for (const [i, x] of sorted.entries()) {
        const carried = carriedAt(x.completeMs);
        if (i + 1 + carried > most) {
          problems.push(
            `${c.label}: ${i + 1} admitted within ${Math.round(x.completeMs - edgeSend)} ms of the window edge at ${new Date(reset - D).toISOString()}, ` +
              `after ${previous} in the window before it: a sliding window of ${D} ms admits at most ${most - carried} there (${limitText}) — a fixed window admits a full limit again`,
          );
          break;
        }
      }
      if (judged) edgesJudged++;
    }
  }
  return { problems, edgesJudged, edgesSeen };
}

/**
 * The exact admissions of a burst of requests on a counter with nothing admitted in the window
 * before: min(asked, limit) when every decision fell in one window. `burst` holds the decisions
 * answered; `unknown` more were asked whose outcome is unknown (their answer never came: each may
 * have been admitted or refused, or not run at all), so the answered admissions must lie in
 * [min(asked, limit) − unknown, min(asked, limit)]. Undefined when they do, a message when they do
 * not, 'straddled' (not judged) when the burst straddled an edge, 'not judged' when no answer came.
 */
export function exactBurstProblem(
  c: CounterRecord,
  burst: readonly Decision[],
  unknown = 0,
  band: Band = { admitUpTo: c.limit, denyAbove: c.limit },
): string | undefined | 'straddled' | 'not judged' {
  if (burst.length === 0) return 'not judged';
  const resets = new Set(burst.map((d) => d.resetMs));
  if (resets.size !== 1) return 'straddled';
  const [reset] = resets;
  const before = c.decisions.filter((d) => d.admitted && d.resetMs === (reset as number) - c.durationMs).length;
  if (before > 0) return 'straddled';
  const admitted = burst.filter((d) => d.admitted).length;
  const asked = burst.length + unknown;
  const expected = Math.min(asked, c.limit);
  // A band admits up to its upper end, and may refuse the request that would hold more than its
  // lower end: at least floor(denyAbove) are admitted. Exact: both are the limit.
  const fewest = Math.min(asked, Math.floor(band.denyAbove));
  const most = Math.min(asked, Math.floor(band.admitUpTo));
  const lo = Math.max(0, fewest - unknown);
  const hi = Math.min(most, burst.length);
  if (admitted >= lo && admitted <= hi) return undefined;
  if (fewest !== expected || most !== expected)
    return `${c.label}: a burst of ${asked} in one fresh window admitted ${admitted}${unknown > 0 ? ` of the ${burst.length} answered (${unknown} answers never came)` : ''}, the limit ${c.limit} within the promise admits between ${lo} and ${hi}`;
  return unknown === 0
    ? `${c.label}: a burst of ${asked} in one fresh window admitted ${admitted}, the limit ${c.limit} admits exactly ${expected}`
    : `${c.label}: a burst of ${asked} in one fresh window admitted ${admitted} of the ${burst.length} answered (${unknown} answers never came), the limit ${c.limit} admits exactly ${expected}: between ${lo} and ${hi} of those answered`;
}
