/**
 * Helpers for a scenario's checks: reading the service's answers (per-response checks) and the
 * figures of a run (end-of-run checks). Each answer helper returns what it found or a message
 * saying what was wrong, never throws, so that a check can return the message as it is.
 */
import type { CheckResult, OperationStats } from '../../report/model.js';
import type { ApiResponse } from './scenario.js';
import { answerEffectUnknown, isServiceBody, neverCameReason } from '../answers/index.js';

export { answerEffectUnknown, isServiceBody, neverCameReason };

/** A JSON object, as the service's answers hold them. */
export type Json = Record<string, unknown>;

/** True for a plain object (not null, not an array). */
export function isRecord(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** True for a safe integer. */
export function isInt(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value);
}

/** A short rendering of an answer for check messages: the status and at most 240 characters of its body. */
export function shown(response: ApiResponse): string {
  const text = JSON.stringify(response.body) ?? 'no body';
  return `${response.status} ${text.length > 240 ? `${text.slice(0, 240)}…` : text}`;
}

/** `data` of a 200 answer that is an object, or a message saying what was wrong. */
export function okData(response: ApiResponse): Json | string {
  if (response.status !== 200) return `expected 200, got ${shown(response)}`;
  if (!isRecord(response.body) || !isRecord(response.body.data)) return `expected {data: {…}}, got ${shown(response)}`;
  return response.body.data;
}

/** `data` of a 200 answer that is an array (list operations), with the body's pagination; or a message saying what was wrong. */
export function okList(response: ApiResponse): { items: unknown[]; pagination: Json } | string {
  if (response.status !== 200) return `expected 200, got ${shown(response)}`;
  const body = response.body;
  if (!isRecord(body) || !Array.isArray(body.data)) return `expected {data: […]}, got ${shown(response)}`;
  return { items: body.data, pagination: isRecord(body.pagination) ? body.pagination : {} };
}

/**
 * Undefined when the answer is the error `status` whose `error.type` ends in `/typeSuffix`
 * (e.g. `expectError(res, 404, 'not_found')`), else a message saying what came instead.
 */
export function expectError(response: ApiResponse, status: number, typeSuffix: string): string | undefined {
  if (response.status !== status) return `expected ${status} ${typeSuffix}, got ${shown(response)}`;
  const error = isRecord(response.body) ? response.body.error : undefined;
  if (!isRecord(error) || typeof error.type !== 'string' || !error.type.endsWith(`/${typeSuffix}`)) {
    return `expected an error of type …/${typeSuffix}, got ${shown(response)}`;
  }
  return undefined;
}

/** Compares JSON values structurally (key order ignored). */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => sameJson(x, b[i]));
  if (isRecord(a) && isRecord(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => k in b && sameJson(a[k], b[k]));
  }
  return false;
}

/**
 * An end-of-run check's result, as `finish` returns them; `rules`: the service rules it judges
 * (src/load/rules/rules.ts ids), for the report's rule coverage.
 */
export function checkResult(name: string, passed: boolean, detail: string, rules?: readonly string[]): CheckResult {
  return { name, passed, detail, ...(rules === undefined ? {} : { rules: [...rules] }) };
}

/**
 * A check that could not be judged because answers it depends on never came: it passes (nothing
 * wrong was seen) and says so, e.g. `not judged: 2 answers never came (504 from a gateway)`.
 */
export function notJudged(name: string, lost: number, why: string, rules?: readonly string[]): CheckResult {
  return {
    name,
    passed: true,
    detail: `not judged: ${lost} ${lost === 1 ? 'answer' : 'answers'} never came (${why})`,
    ...(rules === undefined ? {} : { rules: [...rules] }),
  };
}

/** How many verifications of an operation answered `code` (e.g. 'VALID', 'USAGE_EXCEEDED'); 0 when none or never called. */
export function codeCount(stats: OperationStats | undefined, code: string): number {
  return stats?.codes[code] ?? 0;
}

/** How many requests of an operation got the HTTP `status`; 0 when none or never called. */
export function statusCount(stats: OperationStats | undefined, status: number): number {
  return stats?.statuses[String(status)] ?? 0;
}

/** Requests of an operation that got no HTTP answer (their effect on the service is unknown); part of `requests`. */
export function transportErrors(stats: OperationStats | undefined): number {
  if (stats === undefined) return 0;
  const t = stats.transportErrors;
  return t.timeout + t.reset + t.refused + t.other;
}

/**
 * Requests of an operation cut off at the end of a closed-model phase: sent, answer abandoned, so
 * their effect on the service is unknown too. Not part of `requests`, not errors; 0 in the open model.
 */
export function cutOff(stats: OperationStats | undefined): number {
  return stats?.cutOff ?? 0;
}

/** Requests of an operation answered with a 5xx (a gateway's 502/504 or the service's own): their effect is unknown. */
export function serverErrors(stats: OperationStats | undefined): number {
  return Object.entries(stats?.statuses ?? {}).reduce((n, [status, count]) => (Number(status) >= 500 ? n + count : n), 0);
}

/**
 * Requests of an operation whose effect on the service is unknown: transport errors, 5xx answers
 * (a gateway that timed out may have forwarded the request, and the service executed it) and cut
 * off — the outcomes the invariant checkers take as unknown too (unknown-outcome.ts). An exact
 * count (e.g. "VALID equals the credits") must allow this many either way.
 */
export function withoutAnswer(stats: OperationStats | undefined): number {
  return transportErrors(stats) + serverErrors(stats) + cutOff(stats);
}

/** `n requests without answer`, saying how many of them were cut off at a phase's end. */
export function withoutAnswerText(lost: number, cut: number, noun = 'requests without answer'): string {
  return `${lost} ${noun}${cut > 0 ? ` (${cut} cut off at the end of a closed-model phase)` : ''}`;
}

/** Verification codes of an operation other than the listed ones, e.g. ["NOT_FOUND×2"]; empty when none. */
export function unexpectedCodes(stats: OperationStats | undefined, allowed: readonly string[]): string[] {
  return Object.entries(stats?.codes ?? {})
    .filter(([code, n]) => n > 0 && !allowed.includes(code))
    .map(([code, n]) => `${code}×${n}`);
}
