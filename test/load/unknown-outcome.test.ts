/**
 * One rule for answers that never came (src/load/unknown-outcome.ts), as the history records them
 * and as the scenario checks judge them: a gateway's page or a body that is not the service's JSON
 * is an unknown outcome, like a transport error; the service's own answers are judged.
 */
import { describe, expect, test } from 'vitest';
import { recordedOutcome } from '../../src/load/history/history-recording.js';
import { answerEffectUnknown, neverCameReason, withoutAnswer } from '../../src/load/scenario/scenario-checks.js';
import type { OperationStats } from '../../src/report/model.js';
import { type CounterRecord, exactBurstProblem } from '../../scenarios/support/window-bounds.js';

const service = (status: number, body: object) => ({ status, body: { meta: { requestId: 'req_1' }, ...body } });

describe('answers that never came', () => {
  test('a 200 whose body is not the service JSON is recorded unknown in the history, not as a known refusal', () => {
    expect(recordedOutcome({ status: 200, body: undefined })).toBe('unknown');
    expect(recordedOutcome({ status: 200, body: { data: { code: 'VALID' } } })).toBe('unknown');
    expect(recordedOutcome({ status: 504, body: undefined })).toBe('unknown');
    expect(recordedOutcome({ status: 500, body: service(500, {}).body })).toBe('unknown');
    const answered = service(200, { data: { valid: true, code: 'VALID' } });
    expect(recordedOutcome(answered)).toBe(answered);
    const refused = service(404, { error: { type: 'x/not_found' } });
    expect(recordedOutcome(refused)).toBe(refused);
  });

  test("a gateway's 502/503/504 never came; the service's own 5xx came, with an unknown effect", () => {
    for (const status of [502, 503, 504]) expect(neverCameReason({ status, body: undefined })).toBe(`${status} from a gateway`);
    expect(neverCameReason({ status: 404, body: '<html>' })).toMatch(/not the service/);
    expect(neverCameReason(service(503, {}))).toBeUndefined();
    expect(answerEffectUnknown(service(503, {}))).toBe(true);
    expect(answerEffectUnknown(service(200, { data: {} }))).toBe(false);
  });

  test('withoutAnswer counts 5xx answers as unknown outcomes, as the invariant checkers do', () => {
    const stats = {
      statuses: { '200': 10, '504': 2, '500': 1, '429': 3 },
      transportErrors: { timeout: 1, reset: 1, refused: 0, other: 0 },
      cutOff: 1,
    } as unknown as OperationStats;
    expect(withoutAnswer(stats)).toBe(6);
  });
});

describe('a burst with answers that never came', () => {
  const counter = (): CounterRecord => ({ label: 'c', limit: 4, durationMs: 1_000, decisions: [] });
  const decisions = (admitted: number, refused: number) =>
    Array.from({ length: admitted + refused }, (_, i) => ({ invokeMs: 0, completeMs: 1, admitted: i < admitted, resetMs: 2_000 }));

  test('a burst of 5 with 5 answers lost (a gateway timed them out after the service ran them) is not judged, not "admitted 0"', () => {
    expect(exactBurstProblem(counter(), [], 5)).toBe('not judged');
  });

  test('the answered admissions of a burst with k lost answers lie in [limit − k, limit]', () => {
    expect(exactBurstProblem(counter(), decisions(2, 1), 2)).toBeUndefined();
    expect(exactBurstProblem(counter(), decisions(3, 0), 2)).toBeUndefined();
    expect(exactBurstProblem(counter(), decisions(4, 0), 1)).toBeUndefined();
    expect(exactBurstProblem(counter(), decisions(1, 2), 2)).toMatch(/admitted 1 of the 3 answered \(2 answers never came\).*between 2 and 3/);
    // With every answer in, the limit is exact as before.
    expect(exactBurstProblem(counter(), decisions(3, 2), 0)).toMatch(/admitted 3, the limit 4 admits exactly 4/);
    expect(exactBurstProblem(counter(), decisions(4, 1), 0)).toBeUndefined();
  });
});
