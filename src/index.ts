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
} from './http/index.js';
export { defineConfig, type KeysimConfig, type ConfigStage } from './cli/config.js';
export {
  OPERATIONS,
  defineScenario,
  type ApiResponse,
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
export type { CheckResult, OperationStats, RunReport } from './report/model.js';
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
