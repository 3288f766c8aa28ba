/**
 * Stages (a ramping arrival rate) as a report shows them: the short form of the settings line, and
 * the target rate over the measured timeline with the stage boundaries (docs/load-shapes.md#stages).
 */
import { formatDuration } from './format.js';
import type { RunReport, StageReport } from './model.js';

/** A rate as written on the command line (300, 12.5): stages are round numbers people chose. */
const plain = (rate: number): string => (Number.isFinite(rate) ? String(Math.round(rate * 100) / 100) : '?');

/** `30s:100`-style text of a stage, as on the command line. */
export function stageLabel(stage: StageReport): string {
  const ms = stage.durationMs;
  const d = ms > 0 && ms % 60_000 === 0 ? `${ms / 60_000}m` : ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
  return `${d}:${plain(stage.target)}`;
}

/** "stages 30s:100 2m:2000 30s:0 from 0 req/s", or undefined for a constant rate. */
export function stagesSummary(settings: RunReport['settings']): string | undefined {
  if (settings.stages === undefined || settings.model !== 'open') return undefined;
  return `stages ${settings.stages.map(stageLabel).join(' ')} from ${plain(settings.startRate ?? 0)} req/s`;
}

/** One row of a stages table: where it starts in its phase, how long, from which rate to which. */
export interface StageRow {
  startMs: number;
  durationMs: number;
  from: number;
  to: number;
}

export function stageRows(startRate: number, stages: readonly StageReport[]): StageRow[] {
  let at = 0;
  let from = startRate;
  return stages.map((s) => {
    const row = { startMs: at, durationMs: s.durationMs, from, to: s.target };
    at += s.durationMs;
    from = s.target;
    return row;
  });
}

/** The intended rate over the measured timeline: a polyline (seconds, req/s) and the stage boundaries. */
export interface TargetLine {
  points: Array<{ second: number; rate: number }>;
  boundaries: number[];
  peak: number;
}

/**
 * The target line of the measured phases when one of them ramps through stages; undefined when none
 * does (a constant rate keeps its flat line). Seconds count from the start of the measured part,
 * like the timeline, and each phase is placed where it really started.
 */
export function targetLine(report: RunReport): TargetLine | undefined {
  if (report.settings.model !== 'open') return undefined;
  const measured = report.phases.filter((p) => !p.warmup);
  if (!measured.some((p) => p.stages !== undefined)) return undefined;
  const origin = measured[0]?.startMs ?? 0;
  const points: TargetLine['points'] = [];
  const boundaries: number[] = [];
  for (const p of measured) {
    const t0 = (p.startMs - origin) / 1000;
    if (p.stages === undefined) {
      points.push({ second: t0, rate: p.rate }, { second: t0 + p.durationMs / 1000, rate: p.rate });
      continue;
    }
    let at = t0;
    points.push({ second: at, rate: p.startRate ?? 0 });
    for (const [i, s] of p.stages.entries()) {
      at += s.durationMs / 1000;
      points.push({ second: at, rate: s.target });
      if (i < p.stages.length - 1) boundaries.push(at);
    }
  }
  const peak = points.reduce((max, q) => (Number.isFinite(q.rate) ? Math.max(max, q.rate) : max), 0);
  return { points, boundaries, peak };
}

/** Markdown-free text of a stage row, for tables. */
export function stageRowCells(row: StageRow): [string, string, string] {
  return [`+${formatDuration(row.startMs)}`, formatDuration(row.durationMs), `${plain(row.from)} → ${plain(row.to)} req/s`];
}
