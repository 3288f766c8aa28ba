/**
 * The production profile's calls recorded as a history, as a run records them (request and answer
 * through the history's own readers, the answering region in `region`): what the checkers'
 * properties over the real profile judge.
 */
import type { Result } from '../../src/engine/index.js';
import { DEFAULT_ERRORS_URL, PROBLEMS, errorTypeUrl } from '../../src/http/problems.js';
import type { HistoryEvent } from '../../src/load/history/history.js';
import { KeyDirectory, historyOutcome, historyRequest } from '../../src/load/history/history-events.js';
import type { Operation } from '../../src/load/scenario/scenario.js';
import { type ProfileFixture, makeProfile } from './production.js';

const MINUTE = 60_000;
/** A minute's start: nothing of an earlier window weighs on the first one. */
export const PROFILE_START_MS = Math.ceil(Date.UTC(2027, 0, 15, 12) / MINUTE) * MINUTE;

/** The profile's calls recorded as a history: service time from the manual clock, wall time in call order. */
export class ProfileRecorder {
  readonly events: HistoryEvent[] = [];
  readonly #keys = new KeyDirectory();
  constructor(readonly fx: ProfileFixture) {}

  call<T>(region: number, op: Operation, body: unknown, run: () => Result<T>): Result<T> {
    const now = this.fx.clock.now();
    const seq = this.events.length;
    const result = run();
    const meta = { requestId: 'req_profile' };
    let status = 200;
    let answer: unknown = { meta, data: result.ok ? result.value : undefined };
    if (!result.ok) {
      const problem = PROBLEMS[result.error.code];
      status = problem.status;
      answer = { meta, error: { type: errorTypeUrl(result.error.code, DEFAULT_ERRORS_URL), title: problem.title, status, detail: result.error.detail } };
    }
    this.#keys.observe(op, body, status, answer);
    // Wall times a microsecond apart in call order (each call is answered before the next is sent), service times the clock's.
    this.events.push({
      seq,
      op,
      invokeMs: now + seq * 1e-3,
      completeMs: now + seq * 1e-3 + 5e-4,
      serviceInvokeMs: now,
      serviceCompleteMs: now,
      request: historyRequest(op, body, (plaintext) => this.#keys.keyIdOf(plaintext)),
      outcome: historyOutcome(op, status, answer),
      region: String(region),
    });
    return result;
  }
}

/** One ratelimit.limit call: the region (0-based, taken modulo the regions), its cost, then how far the clock moves. */
export interface LimitOp {
  region: number;
  cost: number;
  advanceMs: number;
}

/** ratelimit.limit calls on one identifier's limit across the regions; `roundRobin`: every region in turn. */
export interface LimitCase {
  seed: number;
  regions: number;
  limit: number;
  durationMs: number;
  roundRobin?: boolean;
  ops: readonly LimitOp[];
}

export function limitHistory(c: LimitCase): HistoryEvent[] {
  const fx = makeProfile({ startMs: PROFILE_START_MS, seed: c.seed, regions: c.regions });
  const rec = new ProfileRecorder(fx);
  for (const [index, op] of c.ops.entries()) {
    const region = 1 + ((c.roundRobin === true ? index : op.region) % c.regions);
    const body = { namespace: 'ns', identifier: 'user', limit: c.limit, duration: c.durationMs, cost: op.cost };
    rec.call(region, 'ratelimit.limit', body, () => fx.region(region).ratelimit.limit(fx.rootKey, body));
    fx.clock.advance(op.advanceMs);
  }
  return rec.events;
}
