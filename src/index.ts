/**
 * keysim as a library: the engine, the simulator as a server for your own tests, and what a
 * scenario file of your own project needs (`defineScenario`, its types and helpers).
 */
export * from './engine/index.js';
export {
  createSimulator,
  JournalReplayer,
  type FaultsConfig,
  type FaultsView,
  type JournalEntry,
  type JournalStart,
  type Simulator,
  type SimulatorOptions,
  type SimulatorProfile,
  REGION_HEADER,
} from './http/index.js';
export { defineConfig, type KeysimConfig, type ConfigStage } from './cli/config.js';
export {
  OPERATIONS,
  MEASURE_FAMILIES,
  defineScenario,
  type ApiResponse,
  type MeasureSpec,
  type LoadSettings,
  type MixEntry,
  type Operation,
  type PhaseSpec,
  type RequestSpec,
  type RunResults,
  type Scenario,
  type ScenarioClock,
  type ScenarioContext,
  type ServiceApi,
  type SimulatorAdmin,
} from './load/scenario/index.js';
export type { CheckResult, Measure, MeasureUnit, OperationStats, RunReport } from './report/model.js';
export {
  type Json,
  checkResult,
  codeCount,
  cutOff,
  expectError,
  isInt,
  isRecord,
  okData,
  okList,
  sameJson,
  shown,
  statusCount,
  transportErrors,
  unexpectedCodes,
  withoutAnswer,
  withoutAnswerText,
  serverErrors,
  notJudged,
  isServiceBody,
  neverCameReason,
  answerEffectUnknown,
} from './load/scenario/index.js';
export { type CallOutcome, LostAnswers, READ_ATTEMPTS, callOutcome, isLostAnswerError, readOutcome } from './load/scenario/index.js';
export {
  type CreatedKey,
  SETUP_CONCURRENCY,
  createIdentity,
  createKey,
  createTaggedApi,
  deleteQuietly,
  ensureNamespace,
  inParallel,
  sleep,
} from './load/scenario/index.js';
export { iso, moveClockTo, requireAdmin } from './load/scenario/index.js';
/** Drawing a mix's keys: a Zipf-skewed index, so that a few keys are hot. */
export { zipfSampler } from './load/scenario/index.js';
/** A duration as keysim's flags write it (`90s`, `5m`), in milliseconds. */
export { parseDurationMs } from './load/plan/index.js';
/**
 * Promise sets (`--consistency`, docs/consistency.md): what a run judges the target against, as a
 * scenario's context gives it (`ctx.promises`); `judgesExactly` tells whether it is the exact one.
 */
export {
  type ConsistencyName,
  type PromiseFigures,
  type PromiseSet,
  type RateLimitBand,
  judgesExactly,
  promiseSet,
  rateLimitBandOf,
} from './load/promises/index.js';
/**
 * keysim's own HTTP/1.1 client, for a scenario that reads the target beside the service API (the
 * built-in scenarios read its Date header): the same `--ca`, timeouts and body decoding as a run.
 */
export { type ClientAnswer, Http1Client, decodeBody, serviceJsonOf } from './load/http1/index.js';
