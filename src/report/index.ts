/** The run report and its renderers: pure functions from one `RunReport` value to text. */
export { renderJson, parseReport, type ParseReportResult } from './json.js';
export { renderMarkdown } from './markdown.js';
export { renderHtml } from './html.js';
export { renderJunit, type JunitRun } from './junit.js';
export { renderSeries, seriesLines, type SeriesLine, type SeriesLatency, type SeriesOperation } from './series.js';
export { renderHgrm, hgrmFiles, HGRM_SCALING_RATIO } from './hgrm.js';
export { MergeError, mergeReports, mergeSection } from './merge.js';
export { mergeMeasures, withHistoryMeasures } from './merge-measures.js';
export { measureLine } from './measures-text.js';
export { GENERATOR_ADVICE, generatorBanner, thresholdVerdict } from './generator-text.js';
export {
  READABLE_REPORT_VERSIONS,
  REPORT_SCHEMA,
  REPORT_VERSION,
  type CheckResult,
  type GeneratorPhase,
  type GeneratorSection,
  type InvariantResult,
  type InvariantViolation,
  type InvariantsSection,
  type MergeSection,
  type OperationStats,
  type OracleDifference,
  type OracleSection,
  type Percentiles,
  type PhaseReport,
  type ReportVersion,
  type RunReport,
  type ThresholdResult,
  type TimelinePoint,
  type TransportErrorKind,
  type WitnessOperation,
} from './model.js';
