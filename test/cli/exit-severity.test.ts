/** worseExitCode (src/cli/exit-severity.ts): one order over every exit code of EXIT. */
import { describe, expect, test } from 'vitest';
import { EXIT, type ExitCode } from '../../src/cli/exit-codes.js';
import { EXIT_SEVERITY, worseExitCode } from '../../src/cli/exit-severity.js';

const CODES = [...new Set(Object.values(EXIT))] as ExitCode[];

describe('worseExitCode', () => {
  test('worseExitCode lacks exit codes 92 and 94: every code of EXIT has a rank, and none is forgotten', () => {
    expect([...EXIT_SEVERITY].sort((a, b) => a - b)).toEqual([...CODES].sort((a, b) => a - b));
    for (const code of CODES) {
      // A code that is never worse than ok, or loses to itself, has no rank.
      if (code !== EXIT.ok) expect(worseExitCode(EXIT.ok, code), `exit ${code} against 0`).toBe(code);
      if (code !== EXIT.ok) expect(worseExitCode(code, EXIT.ok), `0 against exit ${code}`).toBe(code);
    }
  });

  test('is a total order: symmetric, and the worse of two is one of them', () => {
    for (const a of CODES) {
      for (const b of CODES) {
        const w = worseExitCode(a, b);
        expect([a, b]).toContain(w);
        expect(worseExitCode(b, a)).toBe(w);
      }
    }
  });

  test('a partial merge outranks a violated invariant, a cut-short history ranks below a failed threshold', () => {
    expect(worseExitCode(EXIT.invariantViolated, EXIT.mergePartial)).toBe(EXIT.mergePartial);
    expect(worseExitCode(EXIT.historyTruncated, EXIT.thresholdFailed)).toBe(EXIT.thresholdFailed);
    expect(worseExitCode(EXIT.historyTruncated, EXIT.generatorLimited)).toBe(EXIT.historyTruncated);
    expect(worseExitCode(EXIT.mergePartial, EXIT.interrupted)).toBe(EXIT.interrupted);
  });
});
