/**
 * What every text renderer of the run report owes on every fixture report, registered once for
 * each renderer's test file: the same text twice without touching the report, and no value that
 * leaked unformatted (NaN, undefined, Infinity, [object Object]).
 */
import { expect, it } from 'vitest';
import type { RunReport } from '../../src/report/index.js';
import { allFixtureReports } from '../fixtures/reports.js';

export function itRendersEveryFixtureCleanly(render: (report: RunReport) => string): void {
  const fixtures = allFixtureReports();

  it.each(fixtures)('$name: rendering is pure — twice the same text, the report untouched', ({ report }) => {
    const before = structuredClone(report);
    const first = render(report);
    expect(render(report)).toBe(first);
    expect(report).toEqual(before);
  });

  it.each(fixtures)('$name: no NaN, undefined, Infinity or [object Object]', ({ report }) => {
    expect(render(report)).not.toMatch(/NaN|undefined|Infinity|\[object/);
  });
}
