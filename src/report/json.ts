/**
 * `report.json`: the run report as stable, pretty JSON, and the reader that checks a file is a
 * report this keysim understands before anything trusts its contents.
 *
 * One outline of {@link RunReport} drives both directions: the writer emits fields in its order
 * (records sorted by key) so two equal reports give the same bytes, and the reader checks every
 * field against it. The outline is typed against the model, so a field added to `RunReport`
 * without being added here is a compile error.
 */
import {
  READABLE_REPORT_VERSIONS,
  REPORT_SCHEMA,
  REPORT_VERSION,
  type CheckResult,
  type GeneratorPhase,
  type GeneratorSection,
  type InvariantResult,
  type PromisesSection,
  type InvariantViolation,
  type InvariantsSection,
  type Measure,
  type MergeSection,
  type OperationStats,
  type OracleDifference,
  type OracleSection,
  type Percentiles,
  type PhaseReport,
  type StageReport,
  type ResourceCount,
  type ResourcesSection,
  type RuleRef,
  type RulesSection,
  type RunReport,
  type ThresholdResult,
  type TimelineOperation,
  type TimelinePoint,
  type TransportErrorKind,
  type WitnessOperation,
} from './model.js';
import {
  MAX_ISSUES,
  arrayOf,
  base64,
  bool,
  canonical,
  count,
  describe,
  isPlainObject,
  nullable,
  num,
  object,
  oneOf,
  recordOf,
  str,
  validate,
} from './json-shape.js';

const percentilesShape = object<Percentiles>({ p50: num, p90: num, p95: num, p99: num, p999: num, max: num, mean: num, count }, ['p95']);

const operationShape = object<OperationStats>(
  {
    operation: str,
    requests: count,
    ratePerSec: num,
    latency: object<OperationStats['latency']>({ corrected: percentilesShape, uncorrected: percentilesShape }),
    histograms: object<OperationStats['histograms']>({ corrected: base64, uncorrected: base64 }),
    onTime: object<NonNullable<OperationStats['onTime']>>({ latency: percentilesShape, histogram: base64 }),
    statuses: recordOf(count),
    codes: recordOf(count),
    ratelimit: object<OperationStats['ratelimit']>({ allowed: count, denied: count }),
    transportErrors: object<Record<TransportErrorKind, number>>({ timeout: count, reset: count, refused: count, other: count }),
    cutOff: count,
    checkFailures: count,
  },
  ['cutOff', 'onTime'],
);

const witnessShape = object<WitnessOperation>(
  { seq: count, op: str, invokeMs: num, completeMs: num, serviceInvokeMs: num, serviceCompleteMs: num, request: str, outcome: str, origin: str },
  ['serviceInvokeMs', 'serviceCompleteMs', 'origin'],
);

const oracleShape = object<OracleSection>(
  {
    verdict: oneOf('agrees', 'differs', 'not-run'),
    compared: count,
    skipped: count,
    differences: count,
    examples: arrayOf(object<OracleDifference>({ seq: count, op: str, field: str, expected: str, received: str })),
    note: str,
  },
  ['note'],
);

const invariantsShape = object<InvariantsSection>(
  {
    verdict: oneOf('clean', 'violated', 'not-checked'),
    history: str,
    operations: count,
    checked: object<InvariantsSection['checked']>({ keys: count, verifications: count, rateLimitChecks: count }),
    invariants: arrayOf(
      object<InvariantResult>(
        {
          id: str,
          title: str,
          passed: bool,
          state: oneOf('exact', 'within-promise', 'violated', 'unknown'),
          measured: str,
          checked: count,
          violations: count,
          notJudged: count,
        },
        ['state', 'measured', 'notJudged'],
      ),
    ),
    violations: arrayOf(object<InvariantViolation>({ invariant: str, subject: str, message: str, occurrences: count, witness: arrayOf(witnessShape) })),
    violationsTotal: count,
    notes: arrayOf(str),
    oracle: oracleShape,
    promises: object<PromisesSection>({ name: str, text: str, regions: count, regionsFrom: oneOf('history', 'promise set') }),
  },
  ['oracle', 'promises'],
);

const generatorShape = object<GeneratorSection>({
  limited: bool,
  reasons: arrayOf(str),
  limits: object<GeneratorSection['limits']>({ lateShare: count, loopDelayP99Ms: count }),
  phases: arrayOf(
    object<GeneratorPhase>({
      name: str,
      scheduledSends: nullable(count),
      lateSends: nullable(count),
      loopDelayMs: object<GeneratorPhase['loopDelayMs']>({ p50: count, p99: count, max: count }),
      processCpuCores: count,
      mainThreadBusy: count,
    }),
  ),
  loadAverage: count,
});
const resourcesShape = object<ResourcesSection>(
  {
    tag: str,
    disposal: oneOf('cleaned', 'kept', 'discarded'),
    kinds: arrayOf(
      object<ResourceCount>({
        kind: oneOf('apis', 'keys', 'identities', 'overrides', 'namespaces'),
        created: count,
        deleted: count,
        left: count,
        leftExpected: count,
      }),
    ),
    unexpectedlyLeft: count,
    cleanupCommand: str,
    notes: arrayOf(str),
  },
  ['cleanupCommand'],
);

const ruleShape = object<RuleRef>({ id: str, title: str });
const rulesShape = object<RulesSection>({ total: count, exercised: arrayOf(ruleShape), notJudged: arrayOf(ruleShape), untouched: arrayOf(ruleShape) }, [
  'notJudged',
]);

const measureShape = object<Measure>(
  {
    name: str,
    title: str,
    unit: oneOf('ms', 'share', 'credits'),
    count,
    p50: num,
    p95: num,
    max: num,
    promise: num,
    unknown: count,
    source: oneOf('scenario', 'history'),
  },
  ['p50', 'p95', 'max', 'promise', 'unknown'],
);

const stageShape = object<StageReport>({ durationMs: count, target: count });

const reportShape = object<RunReport>(
  {
    schema: oneOf(REPORT_SCHEMA),
    version: oneOf(...READABLE_REPORT_VERSIONS),
    scenario: object<RunReport['scenario']>({ name: str, description: str }),
    status: oneOf('completed', 'interrupted', 'failed'),
    seed: num,
    startedAt: str,
    finishedAt: str,
    measuredMs: count,
    target: object<RunReport['target']>({ kind: oneOf('simulator', 'live'), url: str, remote: bool }, ['remote']),
    settings: object<RunReport['settings']>(
      {
        model: oneOf('open', 'closed'),
        rate: count,
        connections: count,
        pipelining: count,
        durationMs: count,
        warmupMs: count,
        timeoutMs: count,
        startRate: count,
        stages: arrayOf(stageShape),
      },
      ['startRate', 'stages'],
    ),
    environment: object<RunReport['environment']>({
      keysimVersion: str,
      node: str,
      platform: str,
      arch: str,
      cpus: count,
      cpuModel: str,
      totalMemoryBytes: count,
    }),
    phases: arrayOf(
      object<PhaseReport>(
        {
          name: str,
          startMs: num,
          durationMs: count,
          rate: count,
          warmup: bool,
          serviceClockFrom: str,
          serviceClockTo: str,
          startRate: count,
          stages: arrayOf(stageShape),
        },
        ['serviceClockFrom', 'serviceClockTo', 'startRate', 'stages'],
      ),
    ),
    totals: object<RunReport['totals']>(
      { requests: count, errors: count, cutOff: count, ratePerSec: num, late: count, lateThresholdMs: count, dropped: count },
      ['cutOff'],
    ),
    overall: operationShape,
    operations: arrayOf(operationShape),
    timeline: arrayOf(
      object<TimelinePoint>(
        {
          second: num,
          requests: count,
          errors: count,
          p50Ms: num,
          p99Ms: num,
          operations: arrayOf(object<TimelineOperation>({ operation: str, requests: count, errors: count, latency: percentilesShape, histogram: base64 })),
        },
        ['operations'],
      ),
    ),
    checks: arrayOf(
      object<CheckResult>(
        {
          name: str,
          passed: bool,
          detail: str,
          counts: object<NonNullable<CheckResult['counts']>>({ failed: count, total: count, unanswered: count }, ['unanswered']),
          rules: arrayOf(str),
        },
        ['counts', 'rules'],
      ),
    ),
    thresholds: arrayOf(object<ThresholdResult>({ expression: str, passed: bool, inconclusive: bool, actual: nullable(num), detail: str }, ['inconclusive'])),
    invariants: invariantsShape,
    generator: generatorShape,
    resources: resourcesShape,
    segment: object<NonNullable<RunReport['segment']>>({ index: count, count }),
    merge: object<MergeSection>({ segments: count, merged: arrayOf(str), missing: arrayOf(str), incomplete: arrayOf(str), partial: bool }),
    rules: rulesShape,
    measures: arrayOf(measureShape),
    notes: arrayOf(str),
  },
  ['invariants', 'generator', 'resources', 'segment', 'merge', 'rules', 'measures'],
);

/**
 * The report as pretty JSON (two-space indent, trailing newline). Stable: fields in the model's
 * order and count records sorted by key, so equal reports give identical text whatever order
 * their records were filled in.
 */
export function renderJson(report: RunReport): string {
  return `${JSON.stringify(canonical(report, reportShape), null, 2)}\n`;
}

export type ParseReportResult = { ok: true; report: RunReport } | { ok: false; error: string };

/**
 * Reads a `report.json`: checks it is JSON, a keysim run report (`schema`), of a version this
 * keysim reads (1 or 2: version 1 is version 2 without `invariants`, `cutOff` or `generator`), and that every field has
 * the model's type. The error names each offending field
 * by its path (`operations[0].latency.corrected.p99: expected a number, got string "fast"`).
 */
export function parseReport(text: string): ParseReportResult {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, error: `not a keysim report: the file is not valid JSON (${error instanceof Error ? error.message : String(error)})` };
  }
  if (!isPlainObject(value)) {
    return { ok: false, error: `not a keysim report: expected a JSON object, got ${describe(value)}` };
  }
  if (value['schema'] !== REPORT_SCHEMA) {
    return {
      ok: false,
      error: `not a keysim report: expected "schema": ${JSON.stringify(REPORT_SCHEMA)}, got ${describe(value['schema'])}`,
    };
  }
  const version = value['version'];
  if (!READABLE_REPORT_VERSIONS.some((readable) => readable === version)) {
    const newer = typeof version === 'number' && version > REPORT_VERSION;
    return {
      ok: false,
      error:
        `unsupported report version: got ${describe(version)}, this keysim reads versions ${READABLE_REPORT_VERSIONS.join(' and ')}` +
        (newer ? ' (the report was written by a newer keysim; upgrade keysim to read it)' : ''),
    };
  }
  const issues: string[] = [];
  validate(value, reportShape, '', issues);
  if (issues.length > 0) {
    const more = issues.length >= MAX_ISSUES ? `\n  (stopped after ${MAX_ISSUES} problems)` : '';
    return {
      ok: false,
      error: `invalid keysim report (version ${String(version)}): ${issues.length === 1 ? '1 problem' : `${issues.length} problems`}\n  - ${issues.join('\n  - ')}${more}`,
    };
  }
  return { ok: true, report: value as unknown as RunReport };
}
