/** `--segment i/N` and `--start-at ISO` of `keysim run` (docs/distributed.md#segments). */
import { type Segment, parseSegment, segmentCount, segmentText } from '../load/plan.js';
import type { LoadSettings } from '../load/scenario.js';
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

/** Parses `--start-at`: an ISO-8601 instant, not past and at most MAX_START_AHEAD_MS ahead of `nowMs`. */
export function startAtFlag(text: string | undefined, nowMs: number): Date | undefined {
  if (text === undefined) return undefined;
  const ms = /^\d{4}-\d{2}-\d{2}T/.test(text.trim()) ? Date.parse(text.trim()) : Number.NaN;
  if (!Number.isFinite(ms)) throw new UsageError(`--start-at "${text}" is not an ISO-8601 instant: write e.g. ${new Date(nowMs + 60_000).toISOString()} (UTC, with its Z or offset).`);
  if (ms <= nowMs) {
    throw new UsageError(`--start-at ${new Date(ms).toISOString()} is already past (it is ${new Date(nowMs).toISOString()}): choose an instant far enough ahead for every segment to start and set up, e.g. now + 30 s.`);
  }
  if (ms - nowMs > MAX_START_AHEAD_MS) {
    throw new UsageError(`--start-at ${new Date(ms).toISOString()} is more than 24 h ahead: that is likely a wrong date or time zone; choose an instant within the next 24 h.`);
  }
  return new Date(ms);
}
