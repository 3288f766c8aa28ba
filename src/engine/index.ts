export { Engine, type EngineOptions, type EngineStats } from './engine.js';
export {
  type Clock,
  type ClockMode,
  type ClockPosition,
  type ControllableClock,
  type EpochMs,
  ClockMoveError,
  MAX_INSTANT_MS,
  ManualClock,
  SystemClock,
} from './clock.js';
export { Random } from './random.js';
export { type EngineFaults, type EngineFaultsView, ENGINE_FAULT_RATES, faultSeed, isRate } from './faults.js';
export { sha256Base64Url, sha256Digest, sha256Hex } from './sha256.js';
export { digestOfHash, hashOfDigest } from './key-digest.js';
export { base58Encode, BASE58_ALPHABET } from './base58.js';
export { type Compat } from './context.js';
export { ERROR_CODES, type EngineError, type ErrorCode, type FieldError, type Result } from './errors.js';
export {
  MS_PER_DAY,
  civilFromDays,
  daysFromCivil,
  daysInMonth,
  isLeapYear,
  monthlyRefillInstant,
  nextRefillBoundary,
  type RefillInterval,
} from './calendar.js';
export { type PermissionQuery, parsePermissionQuery, satisfiesPermissionQuery } from './permission-query.js';
export { CheckedSnapshot, type EngineSnapshot, SNAPSHOT_FORMAT, SNAPSHOT_MAX_DEPTH, SNAPSHOT_VERSION } from './snapshot.js';
export { SnapshotReader, snapshotMode } from './snapshot-reader.js';
export { SnapshotBuilder } from './snapshot-builder.js';
export { JsonReader, type JsonReaderSink, type ReadMode } from './json-reader.js';
export { MAX_META_BYTES, MAX_META_DEPTH, MAX_META_PROPERTIES, MAX_TOTAL_META_BYTES, metaProblem, nestingDepth } from './meta.js';
export type { JsonObject, JsonValue } from './state.js';
export type { CreateApiInput, CreateWorkspaceInput, CreateWorkspaceOutput, ConfigureApiInput } from './workspace.js';
export type { CreateKeyInput, CreateKeyOutput, CreditsInput, DeleteKeyInput, GetKeyInput, KeyCreditsView, KeyView, UpdateKeyInput } from './keys.js';
export type { CreditsOperation, RefillInput, RefillView, UpdateCreditsInput, UpdateCreditsOutput } from './credits.js';
export {
  VERIFICATION_CODES,
  MAX_VERIFY_COST,
  type VerificationCode,
  type VerifyKeyInput,
  type VerifyKeyOutput,
  type VerifyRateLimitInput,
  type VerifyRateLimitView,
} from './verify.js';
export type { RateLimitInput, RateLimitView } from './attached-ratelimits.js';
export type { CreateIdentityInput, IdentityRef, IdentityView, ListIdentitiesInput, ListIdentitiesOutput, UpdateIdentityInput } from './identities.js';
export {
  MAX_LIMIT_DURATION_MS,
  MIN_LIMIT_DURATION_MS,
  type LimitInput,
  type LimitOutput,
  type ListOverridesInput,
  type MultiLimitEntry,
  type OverrideRefInput,
  type OverrideView,
  type SetOverrideInput,
} from './ratelimit.js';
export { readWindow, fitsWindow, decideWindows, windowCounterKey, type WindowCheck, type WindowView } from './ratelimit-window.js';
export {
  ProductionProfile,
  PRODUCTION_FIGURES,
  MAX_REGIONS,
  checkFigures,
  type EngineSurface,
  type ProductionFigures,
  type ProductionProfileOptions,
  type ProductionStats,
  type RegionStats,
} from './production/index.js';
