/** The run report and its renderers: pure functions from one `RunReport` value to text. */
export { renderJson, parseReport, type ParseReportResult } from './json.js';
export { renderMarkdown } from './markdown.js';
export { renderHtml } from './html.js';
export {
  REPORT_SCHEMA,
  REPORT_VERSION,
  type CheckResult,
  type OperationStats,
  type Percentiles,
  type PhaseReport,
  type RunReport,
  type ThresholdResult,
  type TimelinePoint,
  type TransportErrorKind,
} from './model.js';
