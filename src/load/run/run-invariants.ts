/**
 * The end of a run that recorded a history: the history is closed, read back and checked, and the
 * oracle's replay compared with it — the report's invariants section. Apart from the runner because
 * it is a stage of its own, with its own notes (the oracle, the measured clock skew).
 */
import type { InvariantsSection, Measure } from '../../report/model.js';
import { judgeInvariants } from '../invariants/index.js';
import { type RunSkew, remeasuredRunSkew } from './clock-skew.js';
import { type HistoryWriter, readHistory } from '../history/index.js';
import { invariantsSection } from '../invariants/index.js';
import type { Oracle } from '../oracle/index.js';
import type { Target } from '../target/index.js';
import type { PromiseSet } from '../promises/index.js';

/** The invariants section, and the figures the checkers measured against the promise set (none when the history was not judged). */
export interface HistoryVerdict {
  section: InvariantsSection;
  measures: Measure[];
}

/**
 * Reads the saved history back, checks every invariant over it and compares the oracle's replay
 * (simulator only) with the answers recorded: the report's invariants section, and the checkers' measures.
 */
async function invariantsReport(
  path: string,
  oracle: Oracle | undefined,
  notes: readonly string[],
  wallSkewMs: number | undefined,
  segment: HistoryEnd['segment'],
  promises: PromiseSet | undefined,
): Promise<HistoryVerdict> {
  const { header, events } = await readHistory(path);
  const skew = wallSkewMs ?? header.wallSkewMs;
  const oracleSection = oracle === undefined ? undefined : await oracle.compare(events);
  const verdict = judgeInvariants(events, {
    ...(skew === undefined ? {} : { wallSkewMs: skew }),
    ...(segment === undefined ? {} : { segment }),
    ...(promises === undefined ? {} : { promises }),
  });
  const section = invariantsSection(verdict, {
    operations: events.length,
    notes,
    ...(oracleSection === undefined ? {} : { oracle: oracleSection }),
  });
  return { section, measures: verdict.measures ?? [] };
}

/** The run's history and what checks it, as the runner holds them when the load is over. */
export interface HistoryEnd {
  history: HistoryWriter;
  /** Where the history was written. */
  path: string;
  interrupted: boolean;
  oracle: Oracle | undefined;
  /** The oracle's drain timer: stopped before the last drain, so that the two do not overlap. */
  oracleTimer: ReturnType<typeof setInterval> | undefined;
  /** Why the oracle did not start, if it did not. */
  oracleProblem: string | undefined;
  /** On a live target: the bound on its clock's skew measured before the run. */
  skew: RunSkew | undefined;
  target: Target;
  timeoutMs: number;
  /**
   * Set when the run is one segment: its verdict judges only what is sound without the other
   * segments' operations (checks/segment-scope.ts); `sharedKeyIds` are a shared set-up's keys.
   */
  segment?: { sharedKeyIds?: readonly string[] };
  /** The promise set the verdict judges against (default exact). */
  promises?: PromiseSet;
}

/** Closes the history and checks it; an interrupted run's history is saved, not checked. */
export async function historyInvariants(end: HistoryEnd): Promise<HistoryVerdict> {
  const { history, oracle, target } = end;
  await history.close();
  if (end.interrupted) {
    const section = invariantsSection(undefined, {
      operations: history.written,
      notes: ['Interrupted: the history was saved but not checked (run keysim check on it).'],
    });
    return { section, measures: [] };
  }
  if (oracle !== undefined) {
    clearInterval(end.oracleTimer);
    await oracle.drain();
  }
  const sectionNotes = end.oracleProblem === undefined ? [] : [`The oracle did not run: ${end.oracleProblem}`];
  // The bound must still hold at the end of the run: a wider one if the clocks drifted apart.
  const skew = end.skew === undefined ? undefined : await remeasuredRunSkew(target, end.skew, { timeoutMs: end.timeoutMs });
  if (skew !== undefined) sectionNotes.push(skew.note);
  if (oracle === undefined && target.kind === 'live') sectionNotes.push("No oracle on a live target: it replays the simulator's journal.");
  return invariantsReport(end.path, oracle, sectionNotes, skew?.wallSkewMs, end.segment, end.promises);
}
