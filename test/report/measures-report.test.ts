/**
 * Measures in every rendering: the JSON report carries them and parses back equal (and a report
 * without any keeps no `measures` field, as before), the terminal summary, Markdown and HTML show
 * each with its promise, JUnit lists them as properties — never as a test case, so one run keeps
 * one verdict — and keysim merge combines the segments' without inventing a percentile.
 */
import { describe, expect, test } from 'vitest';
import { renderSummary } from '../../src/cli/summary.js';
import { mergeParts } from '../../src/cli/commands/merge.js';
import { mergeMeasures, withHistoryMeasures } from '../../src/report/merge-measures.js';
import { measureLine } from '../../src/report/measures-text.js';
import { mergeReports } from '../../src/report/merge.js';
import type { Measure, RunReport } from '../../src/report/model.js';
import { parseReport, renderHtml, renderJson, renderJunit, renderMarkdown } from '../../src/report/index.js';
import { minimalReport } from '../helpers/report-fixture.js';
import { findAll, parseXml } from '../helpers/xml.js';

const CREDITS: Measure = {
  name: 'lag.credits',
  title: 'how long a credit update took to be seen in every lane',
  unit: 'ms',
  count: 3,
  p50: 0,
  p95: 11_000,
  max: 11_000,
  promise: 60_000,
  source: 'scenario',
};
const OVER: Measure = {
  name: 'ratelimit.over-admission.60s',
  title: 'admitted past the limit',
  unit: 'share',
  count: 2,
  p50: 0.02,
  p95: 0.07,
  max: 0.07,
  promise: 0.1,
  unknown: 1,
  source: 'history',
};

function withMeasures(measures: Measure[]): RunReport {
  return { ...minimalReport({ operations: [{ operation: 'keys.verifyKey', latenciesMs: [5, 6] }] }), measures };
}

describe('JSON', () => {
  test('a report with measures parses back equal', () => {
    const report = withMeasures([CREDITS, OVER]);
    const parsed = parseReport(renderJson(report));
    expect(parsed.ok).toBe(true);
    if (parsed.ok) expect(parsed.report.measures).toEqual([CREDITS, OVER]);
    if (parsed.ok) expect(renderJson(parsed.report)).toBe(renderJson(report));
  });

  test('a report that measured nothing has no measures field: its JSON is as before', () => {
    expect(renderJson(minimalReport({ operations: [{ operation: 'keys.verifyKey', latenciesMs: [5] }] }))).not.toContain('"measures"');
  });

  test('a measure with an unknown unit is refused when read', () => {
    const text = renderJson(withMeasures([CREDITS])).replace('"unit": "ms"', '"unit": "hours"');
    expect(parseReport(text).ok).toBe(false);
  });
});

describe('rendered with their promise', () => {
  test('the line: figures, promise, samples', () => {
    expect(measureLine(CREDITS)).toBe('lag.credits p50 0.0 s · p95 11.0 s · max 11.0 s — promise 60 s, 3 samples');
    expect(measureLine(OVER)).toBe('ratelimit.over-admission.60s p50 2.0 % · p95 7.0 % · max 7.0 % — promise 10.0 %, 2 samples, 1 unknown');
    expect(measureLine({ name: 'lag.disable', title: 't', unit: 'ms', count: 0, unknown: 2, source: 'scenario' })).toBe(
      'lag.disable no sample measured — no promise, 0 samples, 2 unknown',
    );
  });

  test('the terminal summary has a line per measure', () => {
    const text = renderSummary(withMeasures([CREDITS, OVER]));
    expect(text).toContain('note  measure lag.credits p50 0.0 s · p95 11.0 s · max 11.0 s — promise 60 s, 3 samples');
    expect(text).toContain('note  measure ratelimit.over-admission.60s');
    expect(renderSummary(withMeasures([]))).not.toContain('measure');
  });

  test('Markdown: a Measures section with a row per measure', () => {
    const md = renderMarkdown(withMeasures([CREDITS, OVER]));
    expect(md).toContain('## Measures');
    expect(md).toMatch(/\| `lag\.credits` \| 0\.0 s \| 11\.0 s \| 11\.0 s \| 60 s \| 3 \| 0 \| the scenario \|/);
    expect(md).toMatch(/\| `ratelimit\.over-admission\.60s` \| 2\.0 % \| 7\.0 % \| 7\.0 % \| 10\.0 % \| 2 \| 1 \| the history \|/);
    expect(renderMarkdown(withMeasures([]))).not.toContain('## Measures');
  });

  test('HTML: a Measures section with a row per measure, escaped', () => {
    const html = renderHtml(withMeasures([{ ...CREDITS, title: '<b>credits</b>' }]));
    expect(html).toContain('<h2 id="h-measures">Measures</h2>');
    expect(html).toContain('<th scope="row"><code>lag.credits</code></th><td class="num">0.0 s</td><td class="num">11.0 s</td>');
    expect(html).toContain('&lt;b&gt;credits&lt;/b&gt;');
    expect(html).not.toContain('<b>credits</b>');
    expect(renderHtml(withMeasures([]))).not.toContain('h-measures');
  });

  test('JUnit: each measure a property of the suite, no test case more', () => {
    const without = findAll(parseXml(renderJunit([{ report: withMeasures([]) }])), 'testcase').length;
    const root = parseXml(renderJunit([{ report: withMeasures([CREDITS, OVER]) }]));
    expect(findAll(root, 'testcase')).toHaveLength(without);
    const properties = findAll(root, 'property').map((p) => [p.attributes.name, p.attributes.value]);
    expect(properties).toContainEqual(['measure lag.credits', 'lag.credits p50 0.0 s · p95 11.0 s · max 11.0 s — promise 60 s, 3 samples']);
    expect(properties.some(([name]) => name === 'measure ratelimit.over-admission.60s')).toBe(true);
  });
});

describe('keysim merge', () => {
  test('counts and unknown summed, max of the maxima, p50 and p95 left out when two segments had samples', () => {
    const a: Measure = { ...CREDITS, count: 2, p50: 1_000, p95: 4_000, max: 4_000 };
    const b: Measure = { ...CREDITS, count: 3, p50: 2_000, p95: 9_000, max: 9_000, unknown: 1 };
    expect(mergeMeasures([{ measures: [a] }, { measures: [b] }])).toEqual([
      { name: 'lag.credits', title: CREDITS.title, unit: 'ms', count: 5, max: 9_000, promise: 60_000, unknown: 1, source: 'scenario' },
    ]);
  });

  test('one segment with samples: its p50 and p95 are the whole run’s', () => {
    const none: Measure = { name: 'lag.credits', title: CREDITS.title, unit: 'ms', count: 0, promise: 60_000, unknown: 2, source: 'scenario' };
    expect(mergeMeasures([{ measures: [none] }, { measures: [CREDITS] }, {}])).toEqual([{ ...CREDITS, unknown: 2 }]);
  });

  test('a promise the segments disagree on is left out; no segment measured anything: no measures', () => {
    const [m] = mergeMeasures([{ measures: [CREDITS] }, { measures: [{ ...CREDITS, promise: 0 }] }]) ?? [];
    expect(m?.promise).toBeUndefined();
    expect(mergeMeasures([{}, { measures: [] }])).toBeUndefined();
  });

  test('mergeReports carries the merged measures, the scenario’s before the history’s', () => {
    const part = (index: number, measures: Measure[]): RunReport => ({ ...withMeasures(measures), segment: { index, count: 2 } });
    const merged = mergeReports([part(0, [OVER, CREDITS]), part(1, [CREDITS])]);
    expect(merged.measures?.map((m) => [m.name, m.count])).toEqual([
      ['lag.credits', 6],
      ['ratelimit.over-admission.60s', 2],
    ]);
    expect(mergeReports([part(0, []), part(1, [])]).measures).toBeUndefined();
  });

  test('keysim merge judges thresholds on the merged measures: max across segments, and no p95 invented from two', () => {
    const part = (index: number, m: Measure): RunReport => ({ ...withMeasures([m]), segment: { index, count: 2 } });
    const merged = mergeParts(
      [part(0, { ...CREDITS, count: 2, p95: 4_000, max: 4_000 }), part(1, { ...CREDITS, count: 3, p95: 9_000, max: 9_000 })],
      ['max(lag.credits) < 8s', 'count(lag.credits) == 5', 'p95(lag.credits) < 60s'],
    );
    expect(merged.thresholds.map((t) => [t.expression, t.passed, t.actual])).toEqual([
      ['max(lag.credits) < 8s', false, 9_000],
      ['count(lag.credits) == 5', true, 5],
      ['p95(lag.credits) < 60s', false, null],
    ]);
  });

  test('judged again over a history, the history’s measures are replaced and the scenario’s kept', () => {
    const again: Measure = { ...OVER, count: 9 };
    expect(withHistoryMeasures([CREDITS, OVER], [again])).toEqual([CREDITS, again]);
    expect(withHistoryMeasures([OVER], [])).toBeUndefined();
  });
});
