/**
 * A full disk used to surface after the load as a 0-byte report.json, as if all was fine. A report
 * write that fails is an error naming the file and the reason, and leaves no empty file behind.
 * /dev/full (every write fails with ENOSPC) stands in for the full disk, through a link.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { ReportWriteError, writeFileChecked, writeReport } from '../../src/cli/report-files.js';
import { minimalReport } from '../helpers/report-fixture.js';

const temps: string[] = [];
afterAll(() => {
  for (const dir of temps) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'keysim-report-files-'));
  temps.push(dir);
  return dir;
}

const report = minimalReport({ operations: [{ operation: 'keys.verifyKey', latenciesMs: [1, 2, 3] }] });

describe.skipIf(!existsSync('/dev/full'))('a full disk surfaces as a 0-byte report.json', () => {
  test('writing report.json on a full disk throws ReportWriteError (ENOSPC) and leaves no report.json', () => {
    const folder = tempDir();
    symlinkSync('/dev/full', join(folder, 'report.json'));
    const error = (() => {
      try {
        writeReport(report, folder);
        return undefined;
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(ReportWriteError);
    expect((error as ReportWriteError).code).toBe('ENOSPC');
    expect((error as Error).message).toMatch(/Writing .*report\.json failed: ENOSPC \(no space left on the device: free some space, or choose another --out\)/);
    expect(existsSync(join(folder, 'report.json'))).toBe(false);
    // The device itself is untouched.
    expect(existsSync('/dev/full')).toBe(true);
  });
});

test('a report written to a writable folder: the three files, complete', () => {
  const folder = tempDir();
  const written = writeReport(report, folder);
  expect(JSON.parse(readFileSync(written.json, 'utf8'))).toMatchObject({ scenario: report.scenario });
  expect(readFileSync(written.markdown, 'utf8').length).toBeGreaterThan(0);
  expect(readFileSync(written.html, 'utf8')).toMatch(/<html/i);
});

test('a folder that is gone: the error names the file', () => {
  expect(() => writeFileChecked(join(tempDir(), 'gone', 'report.json'), '{}')).toThrow(/report\.json failed: ENOENT/);
});
