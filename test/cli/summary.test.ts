/** The run summary printed on the terminal: requests cut off at a phase's end appear only when there are some. */
import { describe, expect, test } from 'vitest';
import { renderSummary } from '../../src/cli/summary.js';
import { closedCutOffReport, completedReport } from '../fixtures/reports.js';

describe('renderSummary', () => {
  test('a closed run with requests cut off at the end of its phase: on the first line (not as errors) and in the outcomes of their operations', () => {
    const lines = renderSummary(closedCutOffReport()).split('\n');
    expect(lines[0]).toMatch(/^mixed: \d+ requests in 3\.0 s \([\d.]+\/s\), 0 errors, 4 cut off at a phase's end \(effect unknown\), 0 late, 0 dropped$/);
    expect(lines.find((l) => l.startsWith('keys.verifyKey'))).toMatch(/, cut off 3$/);
    expect(lines.find((l) => l.startsWith('ratelimit.limit'))).toMatch(/, cut off 1$/);
    expect(lines.find((l) => l.startsWith('all'))).toMatch(/, cut off 4$/);
  });

  test('nothing about cut-off requests when there are none', () => {
    const text = renderSummary(completedReport());
    expect(text.split('\n')[0]).toMatch(/ errors, \d+ late, 0 dropped$/);
    expect(text).not.toContain('cut off');
  });
});
