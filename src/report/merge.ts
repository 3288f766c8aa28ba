/**
 * Merging the partial reports of a plan's segments (`keysim run --segment i/N`) into one report,
 * a pure function (docs/distributed.md#merge). Exact where it can be: counts are summed and the
 * encoded HDR histograms are added, per operation and per second, and every percentile is read
 * from the merged histogram — never averaged from the segments' percentiles, which would be wrong.
 * Thresholds are not evaluated here (the report layer does not parse them): the caller evaluates
 * them on the merged report.
 */
import { answersPassedText } from './checks-text.js';
import { decodeHistogram, encodeHistogram, mergeHistograms, percentilesMs } from './histogram.js';
import type {
  CheckResult,
  GeneratorSection,
  InvariantsSection,
  MergeSection,
  OperationStats,
  ResourcesSection,
  RulesSection,
  RunReport,
  TimelineOperation,
  TimelinePoint,
  TransportErrorKind,
} from './model.js';
import { TRANSPORT_ERROR_KINDS } from './model.js';
import { mergeRulesSections } from './rules-text.js';
import { mergeMeasures } from './merge-measures.js';

/** The segments' rule coverage as one (rules-text.ts mergeRulesSections); undefined when none has one. */
function rulesOf(reports: readonly RunReport[]): RulesSection | undefined {
  return mergeRulesSections(reports.flatMap((r) => (r.rules === undefined ? [] : [r.rules])));
}

/** Why a set of reports cannot be merged at all (not the same run, not segments). */
export class MergeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MergeError';
  }
}

const segmentName = (index: number, count: number) => `${index}/${count}`;

function sumRecords(records: ReadonlyArray<Record<string, number>>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of records) for (const [k, v] of Object.entries(r)) out[k] = (out[k] ?? 0) + v;
  return out;
}

const sum = <T>(items: readonly T[], f: (item: T) => number): number => items.reduce((acc, item) => acc + f(item), 0);

/** One operation's stats over all segments: counts summed, histograms added, percentiles re-read. */
export function mergeOperationStats(operation: string, parts: readonly OperationStats[], measuredMs: number): OperationStats {
  const corrected = mergeHistograms(parts.map((p) => decodeHistogram(p.histograms.corrected)));
  const uncorrected = mergeHistograms(parts.map((p) => decodeHistogram(p.histograms.uncorrected)));
  const requests = sum(parts, (p) => p.requests);
  const transportErrors = Object.fromEntries(TRANSPORT_ERROR_KINDS.map((k) => [k, sum(parts, (p) => p.transportErrors[k])])) as Record<
    TransportErrorKind,
    number
  >;
  const cutOffs = parts.filter((p) => p.cutOff !== undefined);
  // The on-time latency only when every segment kept it: a part missing would skew the figure.
  const onTimes = parts.flatMap((p) => (p.onTime === undefined ? [] : [p.onTime.histogram]));
  const onTime = onTimes.length === parts.length ? mergeHistograms(onTimes.map(decodeHistogram)) : undefined;
  return {
    operation,
    requests,
    ratePerSec: Math.round((requests / Math.max(measuredMs / 1000, 1e-9)) * 100) / 100,
    latency: { corrected: percentilesMs(corrected), uncorrected: percentilesMs(uncorrected) },
    histograms: { corrected: encodeHistogram(corrected), uncorrected: encodeHistogram(uncorrected) },
    ...(onTime === undefined ? {} : { onTime: { latency: percentilesMs(onTime), histogram: encodeHistogram(onTime) } }),
    statuses: sumRecords(parts.map((p) => p.statuses)),
    codes: sumRecords(parts.map((p) => p.codes)),
    ratelimit: { allowed: sum(parts, (p) => p.ratelimit.allowed), denied: sum(parts, (p) => p.ratelimit.denied) },
    transportErrors,
    ...(cutOffs.length === parts.length ? { cutOff: sum(parts, (p) => p.cutOff ?? 0) } : {}),
    checkFailures: sum(parts, (p) => p.checkFailures),
  };
}

/** The timelines merged second by second (seconds count from each segment's measured start: the shared --start-at). */
function mergeTimelines(parts: readonly RunReport[]): TimelinePoint[] {
  const bySecond = new Map<number, TimelinePoint[]>();
  for (const part of parts) for (const point of part.timeline) bySecond.set(point.second, [...(bySecond.get(point.second) ?? []), point]);
  return [...bySecond.entries()]
    .sort(([a], [b]) => a - b)
    .map(([second, points]) => {
      const byOperation = new Map<string, TimelineOperation[]>();
      for (const point of points) for (const o of point.operations ?? []) byOperation.set(o.operation, [...(byOperation.get(o.operation) ?? []), o]);
      const operations = [...byOperation.entries()]
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([operation, ops]): TimelineOperation & { merged: ReturnType<typeof mergeHistograms> } => {
          const merged = mergeHistograms(ops.map((o) => decodeHistogram(o.histogram)));
          return {
            operation,
            requests: sum(ops, (o) => o.requests),
            errors: sum(ops, (o) => o.errors),
            latency: percentilesMs(merged),
            histogram: encodeHistogram(merged),
            merged,
          };
        });
      const point: TimelinePoint = { second, requests: sum(points, (p) => p.requests), errors: sum(points, (p) => p.errors), p50Ms: 0, p99Ms: 0 };
      // A second's percentiles come from its operations' histograms when every segment kept them.
      if (points.every((p) => p.operations !== undefined)) {
        const overall = percentilesMs(mergeHistograms(operations.map((o) => o.merged)));
        point.p50Ms = overall.p50;
        point.p99Ms = overall.p99;
        point.operations = operations.map(({ merged: _merged, ...o }) => o);
      } else {
        // Older reports without per-second histograms: the worst segment's figure, said to be so in a note.
        point.p50Ms = Math.max(...points.map((p) => p.p50Ms));
        point.p99Ms = Math.max(...points.map((p) => p.p99Ms));
      }
      return point;
    });
}

/**
 * A check of the same name in several segments is one check: it passes only when it passed in
 * every segment that ran it; raw counts are summed, and the detail names the segments that failed.
 */
export function mergeChecks(parts: readonly RunReport[]): CheckResult[] {
  const byName = new Map<string, Array<{ segment: string; check: CheckResult }>>();
  for (const part of parts) {
    const segment = part.segment === undefined ? '?' : segmentName(part.segment.index, part.segment.count);
    for (const check of part.checks) byName.set(check.name, [...(byName.get(check.name) ?? []), { segment, check }]);
  }
  return [...byName.entries()].map(([name, entries]) => {
    const passed = entries.every((e) => e.check.passed);
    const counted = entries.every((e) => e.check.counts !== undefined);
    const unanswered = sum(entries, (e) => e.check.counts?.unanswered ?? 0);
    const counts = counted
      ? {
          failed: sum(entries, (e) => e.check.counts?.failed ?? 0),
          total: sum(entries, (e) => e.check.counts?.total ?? 0),
          ...(unanswered > 0 ? { unanswered } : {}),
        }
      : undefined;
    const failed = entries.filter((e) => !e.check.passed);
    let detail: string;
    if (counts !== undefined && passed) detail = `${answersPassedText(counts.total, unanswered)}, over ${entries.length} segments`;
    else if (counts !== undefined)
      detail = `${counts.failed} of ${counts.total} answers failed their check; ${failed.map((e) => `segment ${e.segment}: ${e.check.detail}`).join(' | ')}`;
    else if (passed)
      detail = `passed in all ${entries.length} segments${entries[0] === undefined ? '' : `; segment ${entries[0].segment}: ${entries[0].check.detail}`}`;
    else detail = failed.map((e) => `segment ${e.segment}: ${e.check.detail}`).join(' | ');
    return { name, passed, detail, ...(counts === undefined ? {} : { counts }) };
  });
}

/**
 * The segments' invariant verdicts combined. Each segment checked its own history; invariants
 * that span segments (the same key spent from two machines) need the histories checked together:
 * `keysim check` over all of them (the note says so).
 */
function mergeInvariants(parts: readonly RunReport[]): InvariantsSection | undefined {
  const sections = parts.map((p) => p.invariants).filter((s): s is InvariantsSection => s !== undefined);
  const first = sections[0];
  if (first === undefined) return undefined;
  const verdict = sections.some((s) => s.verdict === 'violated')
    ? 'violated'
    : sections.every((s) => s.verdict === 'clean') && sections.length === parts.length
      ? 'clean'
      : 'not-checked';
  const byId = new Map<string, InvariantsSection['invariants'][number]>();
  for (const s of sections) {
    for (const inv of s.invariants) {
      const seen = byId.get(inv.id);
      const notJudged = seen?.notJudged === undefined && inv.notJudged === undefined ? {} : { notJudged: (seen?.notJudged ?? 0) + (inv.notJudged ?? 0) };
      byId.set(
        inv.id,
        seen === undefined
          ? { ...inv }
          : { ...seen, passed: seen.passed && inv.passed, checked: seen.checked + inv.checked, violations: seen.violations + inv.violations, ...notJudged },
      );
    }
  }
  const oracles = sections.map((s) => s.oracle).filter((o) => o !== undefined);
  return {
    verdict,
    history: first.history,
    operations: sum(sections, (s) => s.operations),
    checked: {
      keys: sum(sections, (s) => s.checked.keys),
      verifications: sum(sections, (s) => s.checked.verifications),
      rateLimitChecks: sum(sections, (s) => s.checked.rateLimitChecks),
    },
    invariants: [...byId.values()],
    violations: sections.flatMap((s) => s.violations).slice(0, 20),
    violationsTotal: sum(sections, (s) => s.violationsTotal),
    notes: [
      `Combined from ${sections.length} segments' own verdicts, each over its own history; keysim merge with every segment's history (and the set-up's, --history) judges the invariants across segments.`,
      // Each segment says the same of itself: once is enough.
      ...new Set(sections.flatMap((s) => s.notes)),
    ],
    ...(oracles.length === 0
      ? {}
      : {
          oracle: {
            verdict: oracles.some((o) => o.verdict === 'differs') ? 'differs' : oracles.every((o) => o.verdict === 'agrees') ? 'agrees' : 'not-run',
            compared: sum(oracles, (o) => o.compared),
            skipped: sum(oracles, (o) => o.skipped),
            differences: sum(oracles, (o) => o.differences),
            examples: oracles.flatMap((o) => o.examples).slice(0, 10),
            ...(oracles.some((o) => o.note !== undefined)
              ? { note: [...new Set(oracles.flatMap((o) => (o.note === undefined ? [] : [o.note])))].join(' ') }
              : {}),
          },
        }),
  };
}

function mergeGenerator(parts: readonly RunReport[]): GeneratorSection | undefined {
  const sections = parts.flatMap((p) => (p.generator === undefined ? [] : [{ segment: p.segment, g: p.generator }]));
  const first = sections[0];
  if (first === undefined) return undefined;
  const label = (s: (typeof sections)[number]) => (s.segment === undefined ? '' : `segment ${segmentName(s.segment.index, s.segment.count)}: `);
  return {
    limited: sections.some((s) => s.g.limited),
    reasons: sections.flatMap((s) => s.g.reasons.map((r) => `${label(s)}${r}`)),
    limits: first.g.limits,
    phases: sections.flatMap((s) => s.g.phases.map((p) => ({ ...p, name: `${label(s)}${p.name}` }))),
    loadAverage: Math.max(...sections.map((s) => s.g.loadAverage)),
  };
}

function mergeResources(parts: readonly RunReport[]): ResourcesSection | undefined {
  const sections = parts.map((p) => p.resources).filter((r): r is ResourcesSection => r !== undefined);
  const first = sections[0];
  if (first === undefined) return undefined;
  const kinds = new Map<string, ResourcesSection['kinds'][number]>();
  for (const s of sections) {
    for (const k of s.kinds) {
      const seen = kinds.get(k.kind);
      kinds.set(
        k.kind,
        seen === undefined
          ? { ...k }
          : {
              kind: k.kind,
              created: seen.created + k.created,
              deleted: seen.deleted + k.deleted,
              left: seen.left + k.left,
              leftExpected: seen.leftExpected + k.leftExpected,
            },
      );
    }
  }
  const command = sections.find((s) => s.cleanupCommand !== undefined)?.cleanupCommand;
  return {
    tag: first.tag,
    disposal: first.disposal,
    kinds: [...kinds.values()],
    unexpectedlyLeft: sum(sections, (s) => s.unexpectedlyLeft),
    ...(command === undefined ? {} : { cleanupCommand: command }),
    notes: [...new Set(sections.flatMap((s) => s.notes))],
  };
}

/** Which segments are there, missing or incomplete. Throws a MergeError for reports that are not segments of one plan. */
export function mergeSection(parts: readonly RunReport[]): MergeSection {
  const first = parts[0];
  if (first === undefined) throw new MergeError('no reports to merge: name the partial reports of the segments (their run folders or report.json files).');
  const unsegmented = parts.findIndex((p) => p.segment === undefined);
  if (unsegmented >= 0)
    throw new MergeError(`report ${unsegmented + 1} is not a segment's partial report (it was not run with --segment i/N): only segments of one plan merge.`);
  const n = first.segment?.count ?? 1;
  const seen = new Set<number>();
  for (const part of parts) {
    const segment = part.segment as { index: number; count: number };
    if (segment.count !== n)
      throw new MergeError(
        `the reports are segments of different cuts (segment ${segmentName(segment.index, segment.count)} beside ${segmentName(first.segment?.index ?? 0, n)}): merge the segments of one plan.`,
      );
    if (part.scenario.name !== first.scenario.name)
      throw new MergeError(`the reports are of different scenarios ("${first.scenario.name}" and "${part.scenario.name}"): merge the segments of one run.`);
    if (part.seed !== first.seed || part.settings.model !== first.settings.model)
      throw new MergeError(
        `segment ${segmentName(segment.index, n)} was run with another seed or load model than segment ${segmentName(first.segment?.index ?? 0, n)}: merge the segments of one run.`,
      );
    if (seen.has(segment.index)) throw new MergeError(`segment ${segmentName(segment.index, n)} is given twice: name each segment's report once.`);
    seen.add(segment.index);
  }
  const indices = [...seen].sort((a, b) => a - b);
  const missing = Array.from({ length: n }, (_, i) => i)
    .filter((i) => !seen.has(i))
    .map((i) => segmentName(i, n));
  const incomplete = parts
    .filter((p) => p.status !== 'completed')
    .map((p) => `${segmentName(p.segment?.index ?? 0, n)} (${p.status})`)
    .sort();
  return { segments: n, merged: indices.map((i) => segmentName(i, n)), missing, incomplete, partial: missing.length > 0 || incomplete.length > 0 };
}

/** The partial reports of a plan's segments merged into one report (thresholds left empty for the caller). */
export function mergeReports(parts: readonly RunReport[]): RunReport {
  const merge = mergeSection(parts);
  const sorted = [...parts].sort((a, b) => (a.segment?.index ?? 0) - (b.segment?.index ?? 0));
  const rules = rulesOf(sorted);
  const first = sorted[0] as RunReport;
  const measuredMs = Math.max(...sorted.map((p) => p.measuredMs));
  const names = [...new Set(sorted.flatMap((p) => p.operations.map((o) => o.operation)))].sort();
  const operations = names.map((name) =>
    mergeOperationStats(
      name,
      sorted.flatMap((p) => p.operations.filter((o) => o.operation === name)),
      measuredMs,
    ),
  );
  const overall = mergeOperationStats(
    first.overall.operation,
    sorted.map((p) => p.overall),
    measuredMs,
  );
  const status: RunReport['status'] = sorted.some((p) => p.status === 'failed')
    ? 'failed'
    : sorted.some((p) => p.status === 'interrupted')
      ? 'interrupted'
      : 'completed';
  const cutOffs = sorted.filter((p) => p.totals.cutOff !== undefined);
  const invariants = mergeInvariants(sorted);
  const generator = mergeGenerator(sorted);
  const resources = mergeResources(sorted);
  const measures = mergeMeasures(sorted);
  const notes: string[] = [];
  if (merge.partial) {
    const what = [
      merge.missing.length > 0 ? `missing ${merge.missing.join(', ')}` : '',
      merge.incomplete.length > 0 ? `incomplete ${merge.incomplete.join(', ')}` : '',
    ]
      .filter((t) => t !== '')
      .join('; ');
    notes.push(`PARTIAL: merged from ${merge.merged.length} of ${merge.segments} segments (${what}): the figures do not cover the whole plan.`);
  } else {
    notes.push(
      `Merged from all ${merge.segments} segments (${merge.merged.join(', ')}): totals summed, latency histograms added, percentiles read from the merged histograms.`,
    );
  }
  if (sorted.some((p) => p.timeline.some((t) => t.operations === undefined)))
    notes.push("Some segments kept no per-second histograms: those seconds show the worst segment's p50 and p99.");
  notes.push(...sorted.flatMap((p) => p.notes.map((n) => `segment ${segmentName(p.segment?.index ?? 0, merge.segments)}: ${n}`)));
  return {
    schema: first.schema,
    version: first.version,
    scenario: first.scenario,
    status,
    seed: first.seed,
    startedAt: sorted.map((p) => p.startedAt).sort()[0] ?? first.startedAt,
    finishedAt:
      sorted
        .map((p) => p.finishedAt)
        .sort()
        .at(-1) ?? first.finishedAt,
    measuredMs,
    target: first.target,
    settings: first.settings,
    environment: first.environment,
    phases: first.phases,
    totals: {
      requests: sum(sorted, (p) => p.totals.requests),
      errors: sum(sorted, (p) => p.totals.errors),
      ...(cutOffs.length === sorted.length ? { cutOff: sum(sorted, (p) => p.totals.cutOff ?? 0) } : {}),
      ratePerSec: overall.ratePerSec,
      late: sum(sorted, (p) => p.totals.late),
      lateThresholdMs: first.totals.lateThresholdMs,
      dropped: sum(sorted, (p) => p.totals.dropped),
    },
    overall,
    operations,
    timeline: mergeTimelines(sorted),
    checks: mergeChecks(sorted),
    thresholds: [],
    ...(invariants === undefined ? {} : { invariants }),
    ...(generator === undefined ? {} : { generator }),
    ...(resources === undefined ? {} : { resources }),
    // The segments ran one scenario: a rule any segment judged is exercised.
    ...(rules === undefined ? {} : { rules }),
    ...(measures === undefined ? {} : { measures }),
    merge,
    notes,
  };
}
