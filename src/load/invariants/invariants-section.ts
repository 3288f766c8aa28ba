/**
 * The run report's invariants section, built from the history checkers' verdict: a pure function
 * (the report package knows only the `RunReport` type, so the translation from checker values to
 * report values lives here). Witness operations become one-line summaries with their times.
 */
import type { InvariantReport, Violation } from './judge.js';
import { HISTORY_FILE, type HistoryEvent } from '../history/index.js';
import { formatInstant } from '../../report/format.js';
import type { InvariantsSection, InvariantViolation, OracleDifference, OracleSection, WitnessOperation } from '../../report/model.js';

/** The most violations the section lists (`violationsTotal` counts all). */
export const SECTION_VIOLATIONS_MAX = 20;
/** The most oracle differences the section lists (`differences` counts all). */
export const ORACLE_EXAMPLES_MAX = 20;

export interface InvariantsSectionOptions {
  /** Events in the history. */
  operations: number;
  /** File name of the history beside the report (default `history.jsonl.gz`). */
  history?: string;
  /** The oracle's comparison (simulator only; oracle.ts's OracleResult fits); examples are capped, put in seq order and shortened to one line. */
  oracle?: OracleSection;
  /** Notes to add after the checkers' own (e.g. why the history was not checked). */
  notes?: readonly string[];
}

/** The longest oracle value the section keeps, in characters (answers can hold long lists). */
const ORACLE_VALUE_MAX = 300;

/** One line, whatever a value from the service contains. */
function oneLine(text: string): string {
  return text.replace(/\s*[\r\n\u2028\u2029]+\s*/g, ' ').trim();
}

/** Shortens a value to `max` characters, marking the cut. */
function clip(text: string, max: number): string {
  const chars = Array.from(text); // code points: never split a surrogate pair
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join('')}…`;
}

/** What was asked, in a few words: `key_x cost 1`, `ns/user_1 limit 10/60000 ms cost 1`. */
export function describeRequest(e: HistoryEvent): string {
  const r = e.request;
  const parts: string[] = [];
  if (r.keyId !== undefined) parts.push(r.keyId);
  if (r.namespace !== undefined || r.identifier !== undefined) parts.push(`${r.namespace ?? '?'}/${r.identifier ?? '?'}`);
  if (r.credits === null) parts.push('credits unlimited');
  else if (r.credits !== undefined) {
    const c = r.credits;
    const refill =
      c.refill === undefined
        ? ''
        : c.refill === null
          ? ' refill none'
          : ` refill ${c.refill.interval} ${c.refill.amount}${c.refill.refillDay === undefined ? '' : ` day ${c.refill.refillDay}`}`;
    parts.push(`credits ${c.remaining === undefined ? '(kept)' : c.remaining === null ? 'unlimited' : c.remaining}${refill}`);
  }
  if (r.operation !== undefined) parts.push(`${r.operation} ${r.value === null ? 'null' : (r.value ?? '')}`.trim());
  if (r.limit !== undefined) parts.push(`limit ${r.limit}/${r.duration ?? '?'} ms`);
  if (r.cost !== undefined || e.op === 'keys.verifyKey' || e.op === 'ratelimit.limit') parts.push(`cost ${r.cost ?? 1}`);
  for (const l of r.ratelimits ?? [])
    parts.push(`ratelimit ${l.name}${l.limit === undefined ? '' : ` ${l.limit}/${l.duration ?? '?'} ms`}${l.cost === undefined ? '' : ` cost ${l.cost}`}`);
  if (r.limits !== undefined) parts.push(r.limits.map((l) => `${l.namespace}/${l.identifier} ${l.limit}/${l.duration} ms cost ${l.cost ?? 1}`).join(', '));
  return oneLine(parts.join(' ')) || '–';
}

/** What came back, in a few words: `VALID credits 3`, `denied limit 10`, `404 data:key_not_found`, `unknown (no answer)`. */
export function describeOutcome(e: HistoryEvent): string {
  const o = e.outcome;
  if (o === 'unknown') return 'unknown (no answer)';
  if (o.status !== 200) return oneLine(`${o.status}${o.error === undefined ? '' : ` ${o.error}`}`);
  const parts: string[] = [];
  if (o.code !== undefined) parts.push(o.code);
  if (o.keyId !== undefined && e.op === 'keys.createKey') parts.push(o.keyId);
  if (o.credits !== undefined) parts.push(`credits ${o.credits}`);
  if (o.remaining !== undefined) parts.push(`remaining ${o.remaining === null ? 'unlimited' : o.remaining}`);
  if (o.success !== undefined) parts.push(o.success ? 'admitted' : 'denied');
  if (o.limit !== undefined) parts.push(`limit ${o.limit}`);
  if (o.reset !== undefined) parts.push(`reset ${formatInstant(o.reset)}`);
  if (o.overrideId !== undefined) parts.push(`override ${o.overrideId}`);
  for (const r of o.ratelimits ?? []) parts.push(`${r.name} ${r.exceeded ? 'exceeded' : 'ok'} (${r.remaining}/${r.limit})`);
  for (const l of o.limits ?? []) parts.push(`${l.namespace}/${l.identifier} ${l.passed ? 'passed' : 'denied'}`);
  return oneLine(parts.length === 0 ? '200' : parts.join(' '));
}

/** A history event as a witness row of the report. */
export function witnessOperation(e: HistoryEvent): WitnessOperation {
  const op: WitnessOperation = {
    seq: e.seq,
    op: e.op,
    invokeMs: e.invokeMs,
    completeMs: e.completeMs,
    request: describeRequest(e),
    outcome: describeOutcome(e),
  };
  if (e.serviceInvokeMs !== undefined) op.serviceInvokeMs = e.serviceInvokeMs;
  if (e.serviceCompleteMs !== undefined) op.serviceCompleteMs = e.serviceCompleteMs;
  if (e.origin !== undefined) op.origin = e.origin;
  return op;
}

/** When a violation became visible: the latest completion among its witness (wall clock); none sorts last. */
function visibleAtMs(v: Violation): number {
  return v.witness.length === 0 ? Number.POSITIVE_INFINITY : Math.max(...v.witness.map((e) => e.completeMs));
}

/**
 * The violations to list: at most `max`, the earliest first, and the earliest of every broken
 * invariant always among them (so a flood of one kind cannot hide another).
 */
function selectViolations(violations: readonly Violation[], max: number): Violation[] {
  const ordered = violations.map((v, index) => ({ v, index, at: visibleAtMs(v) })).sort((a, b) => (a.at === b.at ? a.index - b.index : a.at < b.at ? -1 : 1));
  const chosen = new Set<number>();
  const firstOf = new Set<string>();
  for (const { v, index } of ordered) {
    if (chosen.size >= max) break;
    if (firstOf.has(v.invariant)) continue;
    firstOf.add(v.invariant);
    chosen.add(index);
  }
  for (const { index } of ordered) {
    if (chosen.size >= max) break;
    chosen.add(index);
  }
  return ordered.filter(({ index }) => chosen.has(index)).map(({ v }) => v);
}

function violationOf(v: Violation): InvariantViolation {
  return {
    invariant: v.invariant,
    subject: v.subject,
    message: v.message,
    occurrences: v.occurrences,
    witness: [...v.witness].sort((a, b) => a.seq - b.seq).map(witnessOperation),
  };
}

function oracleOf(o: OracleSection): OracleSection {
  const examples: OracleDifference[] = [...o.examples]
    .sort((a, b) => a.seq - b.seq)
    .slice(0, ORACLE_EXAMPLES_MAX)
    .map((d) => ({
      seq: d.seq,
      op: d.op,
      field: d.field,
      expected: clip(oneLine(d.expected), ORACLE_VALUE_MAX),
      received: clip(oneLine(d.received), ORACLE_VALUE_MAX),
    }));
  const out: OracleSection = {
    verdict: o.verdict,
    compared: o.compared,
    skipped: o.skipped,
    differences: Math.max(o.differences, o.examples.length),
    examples,
  };
  if (o.note !== undefined) out.note = o.note;
  return out;
}

/**
 * The invariants section of a run report. `judged` is the invariants judged over the history, or
 * undefined when the history was saved but not checked (an interrupted run): the verdict is then
 * `not-checked` and the invariants list is empty.
 */
export function invariantsSection(judged: InvariantReport | undefined, options: InvariantsSectionOptions): InvariantsSection {
  const notes = [...(judged?.notes ?? []), ...(options.notes ?? [])];
  const section: InvariantsSection =
    judged === undefined
      ? {
          verdict: 'not-checked',
          history: options.history ?? HISTORY_FILE,
          operations: options.operations,
          checked: { keys: 0, verifications: 0, rateLimitChecks: 0 },
          invariants: [],
          violations: [],
          violationsTotal: 0,
          notes,
        }
      : {
          verdict: judged.passed && judged.violations.length === 0 ? 'clean' : 'violated',
          history: options.history ?? HISTORY_FILE,
          operations: options.operations,
          checked: { ...judged.checked },
          invariants: judged.invariants.map((inv) => ({
            id: inv.id,
            title: inv.title,
            passed: inv.passed,
            state: inv.state,
            ...(inv.measured === undefined ? {} : { measured: inv.measured }),
            checked: inv.checked,
            violations: inv.violations,
            ...(inv.notJudged === undefined ? {} : { notJudged: inv.notJudged }),
          })),
          violations: selectViolations(judged.violations, SECTION_VIOLATIONS_MAX).map(violationOf),
          violationsTotal: judged.violations.length,
          notes,
        };
  if (options.oracle !== undefined) section.oracle = oracleOf(options.oracle);
  if (judged?.promises !== undefined) section.promises = { ...judged.promises };
  return section;
}
