/**
 * The `ratelimit.limit` / `multiLimit` operations (docs/service-model.md#rate-limits). Namespaces
 * are in ratelimit-namespaces.ts, overrides in ratelimit-overrides.ts, the window algorithm itself
 * in ratelimit-window.ts; this module also exports theirs the engine uses.
 */
import type { EngineContext } from './context.js';
import { type Caller, authenticate } from './auth.js';
import { type EngineError, type Result, invalid, ok } from './errors.js';
import {
  MAX_LIMIT_DURATION_MS,
  MIN_LIMIT_DURATION_MS,
  decideWindow,
  decideWindows,
  windowCounterKey,
  type WindowCheck,
  type WindowDecision,
} from './ratelimit-window.js';
import { namespaceForUse } from './ratelimit-namespaces.js';
import { matchOverride } from './ratelimit-overrides.js';
import { strikes } from './faults.js';
import type { OverrideRecord } from './state.js';

export { MAX_LIMIT_DURATION_MS, MIN_LIMIT_DURATION_MS } from './ratelimit-window.js';
export { createNamespace, deleteNamespace, findNamespace } from './ratelimit-namespaces.js';
export {
  type ListOverridesInput,
  type OverrideRefInput,
  type OverrideView,
  type SetOverrideInput,
  deleteOverride,
  getOverride,
  listOverrides,
  matchOverride,
  setOverride,
} from './ratelimit-overrides.js';

export interface LimitInput {
  namespace: string;
  identifier: string;
  limit: number;
  /** Window length in ms. */
  duration: number;
  /** Default 1; 0 checks without consuming. */
  cost?: number;
}

export interface LimitOutput {
  /** The effective limit (an override's when one matched). */
  limit: number;
  remaining: number;
  /** Unix ms at which the current window ends. */
  reset: number;
  success: boolean;
  overrideId?: string;
}

const DURATION_RULE = `The duration is in milliseconds: an integer from ${MIN_LIMIT_DURATION_MS} to ${MAX_LIMIT_DURATION_MS}.`;

/**
 * The first problem of one limit request, in order, or undefined. `at` is the request's location
 * (`body`, `body[2]`); a field's location is built only for a failure, never on the hot path.
 */
function limitInputProblem(input: LimitInput, at: string): { ok: false; error: EngineError } | undefined {
  const length = input.identifier.length;
  if (length < 1 || length > 255) return invalid(`${at}.identifier`, 'An identifier must be 1 to 255 characters.');
  if (!(Number.isInteger(input.limit) && input.limit >= 1)) return invalid(`${at}.limit`, 'The limit must be an integer ≥ 1.');
  const duration = input.duration;
  if (!Number.isInteger(duration) || duration < MIN_LIMIT_DURATION_MS || duration > MAX_LIMIT_DURATION_MS) return invalid(`${at}.duration`, DURATION_RULE);
  const cost = input.cost;
  if (!(cost === undefined || (Number.isInteger(cost) && cost >= 0))) return invalid(`${at}.cost`, 'The cost must be an integer ≥ 0.');
  return undefined;
}

interface PlannedLimit {
  check: WindowCheck;
  override: OverrideRecord | undefined;
}

/** Authorises and resolves one checked request: its namespace, the override that applies, its window. */
function planLimit(ctx: EngineContext, caller: Caller, input: LimitInput): Result<PlannedLimit> {
  const namespace = namespaceForUse(ctx, caller, input.namespace, 'limit');
  if (!namespace.ok) return namespace;
  const id = namespace.value.id;
  // A region of the production profile knows overrides from its own cache (regional.ts).
  const regional = ctx.regional ?? null;
  const override =
    regional === null ? matchOverride(ctx, id, input.identifier) : regional.matchOverride(id, input.identifier, () => matchOverride(ctx, id, input.identifier));
  const durationMs = override === undefined ? input.duration : override.durationMs;
  return ok({
    override,
    check: {
      key: windowCounterKey(`ns:${id}`, input.identifier, durationMs),
      limit: override === undefined ? input.limit : override.limit,
      durationMs,
      cost: input.cost ?? 1,
    },
  });
}

/** Checks every request, then authorises and resolves each, before anything is consumed. */
function planLimits(ctx: EngineContext, caller: Caller, inputs: readonly LimitInput[]): Result<PlannedLimit[]> {
  for (let i = 0; i < inputs.length; i++) {
    const problem = limitInputProblem(inputs[i] as LimitInput, `body[${i}]`);
    if (problem !== undefined) return problem;
  }
  const planned: PlannedLimit[] = [];
  for (const input of inputs) {
    const one = planLimit(ctx, caller, input);
    if (!one.ok) return one;
    planned.push(one.value);
  }
  return ok(planned);
}

/**
 * The over-admission fault (faults.ts): a request the window refuses is answered as admitted,
 * with nothing counted — the answer is wrong, the window is not.
 */
function overAdmits(ctx: EngineContext, operation: string): boolean {
  const faults = ctx.faults;
  return faults !== null && strikes(faults, faults.overAdmitRate, operation);
}

export function limit(ctx: EngineContext, rootKey: string | undefined, input: LimitInput): Result<LimitOutput> {
  const caller = authenticate(ctx, rootKey);
  if (!caller.ok) return caller;
  const problem = limitInputProblem(input, 'body');
  if (problem !== undefined) return problem;
  const planned = planLimit(ctx, caller.value, input);
  if (!planned.ok) return planned;
  const { check, override } = planned.value;
  // One window: decided without the arrays and bookkeeping of several (ratelimit-window.ts).
  // A region of the production profile decides on its own counters (regional.ts).
  const regional = ctx.regional ?? null;
  const decision =
    regional === null
      ? decideWindow(ctx.state.windows, check, ctx.clock.now())
      : (regional.decideWindows([check], ctx.clock.now()).decisions[0] as WindowDecision);
  const out: LimitOutput = {
    limit: check.limit,
    remaining: decision.remaining,
    reset: decision.view.resetAtMs,
    success: !decision.exceeded || overAdmits(ctx, 'ratelimit.limit'),
  };
  if (override !== undefined) out.overrideId = override.id;
  return ok(out);
}

export interface MultiLimitEntry {
  namespace: string;
  identifier: string;
  limit: number;
  remaining: number;
  reset: number;
  passed: boolean;
  overrideId?: string;
}

/** Several limits decided together, all or nothing. */
export function multiLimit(
  ctx: EngineContext,
  rootKey: string | undefined,
  inputs: readonly LimitInput[],
): Result<{ passed: boolean; limits: MultiLimitEntry[] }> {
  const caller = authenticate(ctx, rootKey);
  if (!caller.ok) return caller;
  if (inputs.length === 0) return invalid('body', 'Send at least one limit request.');
  const planned = planLimits(ctx, caller.value, inputs);
  if (!planned.ok) return planned;
  const checks = planned.value.map((p) => p.check);
  const regional = ctx.regional ?? null;
  const decided = regional === null ? decideWindows(ctx.state.windows, checks, ctx.clock.now()) : regional.decideWindows(checks, ctx.clock.now());
  const { decisions } = decided;
  const overAdmitted = !decided.passed && overAdmits(ctx, 'ratelimit.multiLimit');
  const passed = decided.passed || overAdmitted;
  const limits = planned.value.map((p, i): MultiLimitEntry => {
    const decision = decisions[i] as (typeof decisions)[number];
    const input = inputs[i] as LimitInput;
    const entry: MultiLimitEntry = {
      namespace: input.namespace,
      identifier: input.identifier,
      limit: p.check.limit,
      remaining: decision.remaining,
      reset: decision.view.resetAtMs,
      passed: overAdmitted || !decision.exceeded,
    };
    if (p.override !== undefined) entry.overrideId = p.override.id;
    return entry;
  });
  return ok({ passed, limits });
}
