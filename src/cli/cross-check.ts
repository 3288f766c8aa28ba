/**
 * The invariants of a merged report judged across segments: the set-up's and the segments'
 * histories combined into one (docs/checking.md#across-segments), checked, and written beside the
 * merged report as its history, so that `keysim check` on the merged folder judges the same union.
 * Used by `keysim merge` and by `keysim run --workers`.
 */
import { existsSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { PromiseSet } from '../load/promises/index.js';
import { judgeInvariants } from '../load/invariants/index.js';
import {
  type CombinedHistory,
  HISTORY_FILE,
  HistoryCombineError,
  HistoryFileError,
  type HistoryPart,
  HistoryWriter,
  combineHistories,
  readHistory,
} from '../load/history/index.js';
import { invariantsSection } from '../load/invariants/index.js';
import type { InvariantsSection, RunReport } from '../report/model.js';
import { UsageError } from './exit-codes.js';
import { withHistoryMeasures } from '../report/index.js';

/** The history of a part (a run folder or its report.json), when it recorded one. */
export function partHistoryFile(path: string): string | undefined {
  if (!existsSync(path)) return undefined;
  const folder = statSync(path).isDirectory() ? path : dirname(path);
  const file = join(folder, HISTORY_FILE);
  return existsSync(file) ? file : undefined;
}

export interface CrossCheckInput {
  /** The merged report (segments' verdicts combined, as report/merge.ts makes it). */
  merged: RunReport;
  /** Every segment's history, or undefined for a segment that recorded none. */
  segmentHistories: ReadonlyArray<string | undefined>;
  /** More histories given (the set-up's). */
  extraHistories: readonly string[];
  /** Where the combined history is written (beside the merged report). */
  out: string;
  hostSkewMs?: number;
  /** The promise set the run judges against (--consistency, --promise); undefined: exact. */
  promises?: PromiseSet;
}

function withNote(section: InvariantsSection | undefined, note: string): InvariantsSection | undefined {
  return section === undefined ? undefined : { ...section, notes: [note, ...section.notes] };
}

/**
 * The merged report with its invariants judged over the union of the histories, or with a note
 * saying why they could not be (a partial merge, a segment without history). Throws a UsageError
 * when the histories are not of one run.
 */
export async function crossCheckMerged(input: CrossCheckInput): Promise<RunReport> {
  const { merged } = input;
  const given = [...input.extraHistories, ...input.segmentHistories.filter((h): h is string => h !== undefined)];
  if (given.length === 0) return merged;
  const keep = (note: string): RunReport => {
    const invariants = withNote(merged.invariants, note);
    return invariants === undefined ? merged : { ...merged, invariants };
  };
  if (merged.merge?.partial === true)
    return keep(
      "Not judged across segments: the merge is partial, and the missing operations could explain what the others saw. These are the segments' own verdicts.",
    );
  const without = input.segmentHistories.filter((h) => h === undefined).length;
  if (without > 0)
    return keep(
      `Not judged across segments: ${without} segment${without === 1 ? '' : 's'} recorded no history (run them with --history). These are the segments' own verdicts.`,
    );

  const parts: HistoryPart[] = [];
  for (const file of given) {
    try {
      parts.push({ name: file, ...(await readHistory(file, { allowTruncated: true })) });
    } catch (error) {
      if (error instanceof HistoryFileError) throw new UsageError(`${error.message} — not a readable keysim history.`);
      throw error;
    }
  }
  let combined: CombinedHistory;
  try {
    combined = combineHistories(parts, input.hostSkewMs === undefined ? {} : { hostSkewMs: input.hostSkewMs });
  } catch (error) {
    if (error instanceof HistoryCombineError) throw new UsageError(`The histories cannot be checked together: ${error.message}`);
    throw error;
  }
  await writeCombinedHistory(join(input.out, HISTORY_FILE), combined);
  const notes = [...combined.notes];
  const oracle = merged.invariants?.oracle;
  if (combined.truncated !== undefined) {
    const section = invariantsSection(undefined, {
      operations: combined.events.length,
      notes: [
        `Not checked: ${combined.truncated.parts.join(', ')} ${combined.truncated.parts.length === 1 ? 'was' : 'were'} cut short; keysim check on the merged folder judges the part that can be.`,
        ...notes,
      ],
      ...(oracle === undefined ? {} : { oracle }),
    });
    return { ...merged, invariants: section };
  }
  const verdict = judgeInvariants(combined.events, { wallSkewMs: combined.wallSkewMs, ...(input.promises === undefined ? {} : { promises: input.promises }) });
  const section = invariantsSection(verdict, { operations: combined.events.length, notes, ...(oracle === undefined ? {} : { oracle }) });
  // The checkers' measures over the union replace the segments' own; the scenario's stay.
  const judged: RunReport = { ...merged, invariants: section };
  const measures = withHistoryMeasures(merged.measures, verdict.measures);
  if (measures === undefined) delete judged.measures;
  else judged.measures = measures;
  return judged;
}

/** Writes a combined history (so that `keysim check` on the merged folder judges the same union). */
export async function writeCombinedHistory(path: string, combined: CombinedHistory): Promise<void> {
  const { header } = combined;
  const writer = await HistoryWriter.create(path, {
    ...(header.startedAt === undefined ? {} : { startedAt: header.startedAt }),
    ...(header.run === undefined ? {} : { run: header.run }),
    wallSkewMs: combined.wallSkewMs,
    ...(header.host === undefined ? {} : { host: header.host }),
    ...(header.combined === undefined ? {} : { combined: header.combined }),
  });
  for (const event of combined.events) if (!writer.record(event)) await writer.drain();
  await writer.close();
}
