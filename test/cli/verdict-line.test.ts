/**
 * The final line of keysim run / merge / check: PASS, FAIL or INCONCLUSIVE with the exit code and
 * the reason; ✓/✗ and colour on a terminal only; the history: line only for a history that is there;
 * and the per-response checks' count of requests that got no answer.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { historyLineOf } from '../../src/cli/history-line.js';
import { EXIT } from '../../src/cli/exit-codes.js';
import { VerdictReasons, lineStyle, verdictLine } from '../../src/cli/verdict-line.js';
import { Recorder } from '../../src/load/metrics/recorder.js';
import { type RunEnd, endOfRunChecks } from '../../src/load/run/run-report.js';
import { completedReport } from '../fixtures/reports.js';

const ESC = '\x1b[';

test('the final line says PASS, FAIL or INCONCLUSIVE with the exit code and one reason', () => {
  const plain = { marks: false, color: false };
  expect(verdictLine(EXIT.thresholdFailed, 'threshold p99(keys.verifyKey) < 50ms failed (measured 67 ms)', plain)).toBe(
    'FAIL (exit 99): threshold p99(keys.verifyKey) < 50ms failed (measured 67 ms)',
  );
  expect(verdictLine(EXIT.generatorLimited, 'the load generator could not keep its schedule', plain)).toMatch(/^INCONCLUSIVE \(exit 97\): /);
  expect(verdictLine(EXIT.ok, 'nothing failed', plain)).toBe('PASS (exit 0): nothing failed');
  expect(verdictLine(EXIT.ok, 'x', { marks: true, color: true })).toBe(`${ESC}1;32m✓ PASS${ESC}0m (exit 0): x`);
});

test('the final line has no marks or colour in a CI log or a pipe, and NO_COLOR turns colour off on a terminal', () => {
  const tty = { isTTY: true };
  expect(lineStyle(tty, {})).toEqual({ marks: true, color: true });
  expect(lineStyle({ isTTY: false }, {})).toEqual({ marks: false, color: false });
  expect(lineStyle({}, {})).toEqual({ marks: false, color: false });
  expect(lineStyle(tty, { CI: 'true' })).toEqual({ marks: false, color: false });
  expect(lineStyle(tty, { NO_COLOR: '1' })).toEqual({ marks: true, color: false });
  // no-color.org: an empty NO_COLOR does not count.
  expect(lineStyle(tty, { NO_COLOR: '' })).toEqual({ marks: true, color: true });
  expect(lineStyle({ isTTY: false }, { FORCE_COLOR: '1' })).toEqual({ marks: false, color: true });
  expect(lineStyle({ isTTY: false }, { FORCE_COLOR: '1', NO_COLOR: '1' })).toEqual({ marks: false, color: false });
});

test('after several scenarios the final line gives the reason of the run that decided the exit code', () => {
  const reasons = new VerdictReasons();
  const passing = completedReport();
  const failing = completedReport();
  failing.thresholds[0] = { expression: 'p99(keys.verifyKey) < 50ms', passed: false, actual: 67, detail: '' };
  expect(reasons.report(passing, 'first')).toBe(EXIT.ok);
  expect(reasons.report(failing, 'second')).toBe(EXIT.thresholdFailed);
  expect(reasons.line(EXIT.thresholdFailed, { marks: false, color: false })).toBe(
    'FAIL (exit 99): second: threshold p99(keys.verifyKey) < 50ms failed (measured 67 ms)',
  );
});

test('no history: line is printed for a run that wrote no history file', () => {
  const folder = mkdtempSync(join(tmpdir(), 'keysim-history-line-'));
  const path = join(folder, 'history.jsonl.gz');
  expect(historyLineOf(undefined)).toBe('');
  expect(historyLineOf(path)).toBe('');
  writeFileSync(path, '');
  expect(historyLineOf(path)).toBe(`history: ${path} (keysim check re-checks it)\n`);
});

test('the per-response checks do not count requests that got no answer as answers that passed', async () => {
  const recorder = new Recorder();
  const sample = { operation: 'keys.verifyKey', intendedMs: 0, sentMs: 0, doneMs: 1, body: undefined, checkFailed: false, warmup: false };
  for (let i = 0; i < 446; i++) recorder.record({ ...sample, status: 200, transportError: undefined, body: { data: { valid: true, code: 'VALID' } } });
  for (let i = 0; i < 354; i++) recorder.record({ ...sample, status: undefined, transportError: 'timeout' });
  const end = { recorder, targetStopped: undefined, interrupted: false, scenario: { name: 'x' }, runStartMs: 0, totalMs: 1 } as unknown as RunEnd;
  const { checks } = await endOfRunChecks(end);
  const check = checks.find((c) => c.name === 'per-response checks');
  expect(check?.detail).toBe('446 answers passed; 354 requests got no answer (unknown)');
  expect(check?.counts).toEqual({ failed: 0, total: 800, unanswered: 354 });
});
