/** `--segment i/N` and `--start-at ISO` of `keysim run` (docs/distributed.md#segments). */
import { type Segment, parseSegment, segmentCount, segmentText } from '../load/plan/index.js';
import type { LoadSettings } from '../load/scenario/index.js';
import type { Argv } from 'yargs';
import { UsageError } from './exit-codes.js';

/** How far ahead a start instant may be: further is taken for a mistake (a wrong date or time zone). */
export const MAX_START_AHEAD_MS = 24 * 3_600_000;

export function segmentFlag(text: string | undefined): Segment | undefined {
  if (text === undefined) return undefined;
  const parsed = parseSegment(text);
  if (typeof parsed === 'string') throw new UsageError(parsed);
  return parsed;
}

/**
 * A segment's settings. The open model's arrivals are striped by the plan; the closed model has no
 * arrivals, so its connections are divided instead: connection c (0…C−1) belongs to segment c mod N.
 */
export function segmentSettings(settings: LoadSettings, segment: Segment, scenario: string): LoadSettings {
  if (settings.model !== 'closed') return settings;
  const connections = segmentCount(settings.connections, segment);
  if (connections === 0) {
    throw new UsageError(
      `Segment ${segmentText(segment)} of "${scenario}" gets none of its ${settings.connections} closed-model connections (connection c goes to segment c mod ${segment.count}): give --connections ${segment.count} or more, or use fewer segments.`,
    );
  }
  return { ...settings, connections };
}

/**
 * Set by `run --workers` in its children's environment: their `--start-at` is the parent's, and a
 * child that a busy machine started after it starts late (the runner says so) instead of refusing —
 * a refusal there once ended a whole run with exit 2 because the machine was slow.
 */
export const WORKER_CHILD_ENV = 'KEYSIM_WORKER_CHILD';

/**
 * Parses `--start-at`: an ISO-8601 instant, at most MAX_START_AHEAD_MS ahead of `nowMs`, and not
 * past — unless `pastAllowed` (a child of `run --workers`, see WORKER_CHILD_ENV).
 */
export function startAtFlag(text: string | undefined, nowMs: number, pastAllowed = false): Date | undefined {
  if (text === undefined) return undefined;
  const ms = /^\d{4}-\d{2}-\d{2}T/.test(text.trim()) ? Date.parse(text.trim()) : Number.NaN;
  if (!Number.isFinite(ms))
    throw new UsageError(`--start-at "${text}" is not an ISO-8601 instant: write e.g. ${new Date(nowMs + 60_000).toISOString()} (UTC, with its Z or offset).`);
  if (ms <= nowMs && !pastAllowed) {
    throw new UsageError(
      `--start-at ${new Date(ms).toISOString()} is already past (it is ${new Date(nowMs).toISOString()}): choose an instant far enough ahead for every segment to start and set up, e.g. now + 30 s.`,
    );
  }
  if (ms - nowMs > MAX_START_AHEAD_MS) {
    throw new UsageError(
      `--start-at ${new Date(ms).toISOString()} is more than 24 h ahead: that is likely a wrong date or time zone; choose an instant within the next 24 h.`,
    );
  }
  return new Date(ms);
}

/** The run command's flags for segments, shared set-ups and workers (docs/distributed.md). */
export function segmentOptions<T>(y: Argv<T>): Argv<T> {
  return y
    .option('segment', {
      type: 'string',
      describe:
        'i/N: send only segment i of N of the plan (arrival k goes to segment k mod N; closed model: connections c with c mod N = i) and write a partial report for keysim merge',
    })
    .option('start-at', {
      type: 'string',
      describe: 'ISO instant at which the load starts, e.g. 2026-01-01T12:00:00Z (segments of one plan share it; refused when past or more than 24 h ahead)',
    })
    .option('setup-only', {
      type: 'boolean',
      describe: "Run the scenario's setup only and write its fixtures and run tag to --fixtures FILE, for segments to share (no load; a URL --target)",
    })
    .option('fixtures', {
      type: 'string',
      describe: 'With --setup-only: the file to write; otherwise: skip the setup and use the fixtures of this file (written by --setup-only)',
    })
    .option('workers', {
      type: 'number',
      describe: 'Run the plan as N segment processes on this machine (each --segment i/N, one shared start instant), merged into one report at the end',
    });
}
