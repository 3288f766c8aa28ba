/**
 * What report.html adds for reading a run's tail and its verdicts: the latency axis drawn log and
 * linear (a CSS-only switch, log checked), threshold lines where a threshold is a latency or a
 * throughput, coloured by verdict, on the charts they are about; and the banner of a run whose
 * load generator could not keep its schedule, above the figures.
 */
import { describe, expect, it } from 'vitest';
import { renderHtml } from '../../src/report/index.js';
import type { RunReport, ThresholdResult } from '../../src/report/model.js';
import { chartThresholds } from '../../src/report/html/threshold-lines.js';
import { yScales } from '../../src/report/html/latency-axis.js';
import { parseThreshold } from '../../src/load/run/thresholds.js';
import { completedReport } from '../fixtures/reports.js';

const t = (expression: string, passed: boolean, inconclusive = false): ThresholdResult => ({
  expression,
  passed,
  ...(inconclusive ? { inconclusive } : {}),
  actual: 1,
  detail: '',
});

/** The SVG of the chart whose class list contains `cls`, the n-th one. */
function chart(html: string, cls: string, nth = 0): string {
  const charts = [...html.matchAll(/<svg class="chart ([^"]*)"[\s\S]*?<\/svg>/g)].filter((m) => (m[1] ?? '').split(' ').includes(cls));
  return charts[nth]?.[0] ?? '';
}

describe('threshold lines', () => {
  const report: RunReport = {
    ...completedReport(),
    thresholds: [
      t('p99 < 50ms', true),
      t('p99(keys.verifyKey) < 0.5s', false),
      t('p50(ratelimit.limit) <= 900us', false, true),
      t('rps >= 250', true),
      t('errors == 0', true),
      t('rate(VALID) > 0.9', true),
    ],
  };
  const html = renderHtml(report);

  it('reads latency and rps thresholds back from their expressions (units to ms); the other kinds have no line', () => {
    expect(chartThresholds(report).map((c) => [c.metric, c.operation, c.value, c.verdict])).toEqual([
      ['p99', undefined, 50, 'passed'],
      ['p99', 'keys.verifyKey', 500, 'failed'],
      ['p50', 'ratelimit.limit', 0.9, 'inconclusive'],
      ['rps', undefined, 250, 'passed'],
    ]);
  });

  it('agrees with the threshold parser on every latency and rps expression it accepts', () => {
    for (const expression of [
      'p50 < 1ms',
      'p90(keys.verifyKey)<=2s',
      'p999 > 1500us',
      'max(ratelimit.limit) != 3',
      'mean < 0.25 ms',
      'rps >= 100',
      'rps(keys.verifyKey) > 5',
      'P99 < 7MS',
    ]) {
      const parsed = parseThreshold(expression);
      if (!parsed.ok) throw new Error(parsed.error);
      const [drawn] = chartThresholds({ thresholds: [t(expression, true)] });
      expect(drawn, expression).toMatchObject({ metric: parsed.threshold.metric, operation: parsed.threshold.argument, value: parsed.threshold.value });
    }
  });

  it('each line on the charts it is about, on both latency axes, coloured by verdict', () => {
    const overall = chart(html, 'large');
    expect(overall.match(/<g class="threshold passed"><path class="threshold-line"/g)).toHaveLength(2);
    expect(overall).toContain('>p99 &lt; 50ms</text>');
    expect(overall).not.toContain('keys.verifyKey) &lt; 0.5s');
    const operations = report.operations.map((op, i) => [op.operation, chart(html, 'small', i)] as const);
    for (const [operation, svg] of operations) {
      const lines = svg.match(/<g class="threshold (\w+)">/g) ?? [];
      if (operation === 'keys.verifyKey') expect(lines).toEqual(['<g class="threshold failed">', '<g class="threshold failed">']);
      else if (operation === 'ratelimit.limit') expect(lines).toEqual(['<g class="threshold inconclusive">', '<g class="threshold inconclusive">']);
      else expect(lines).toEqual([]);
    }
    expect(chart(html, 'latency-over-time').match(/<g class="threshold passed">/g)).toHaveLength(2);
    const throughput = chart(html, 'throughput');
    expect(throughput.match(/<g class="threshold passed">/g)).toHaveLength(1);
    expect(throughput).toContain('>rps &gt;= 250</text>');
  });

  it('a threshold above every measured value stretches the axis so its line is inside the chart', () => {
    const high = renderHtml({ ...completedReport(), thresholds: [t('p99 < 100s', true), t('rps > 100000', false)] });
    for (const svg of [chart(high, 'latency-over-time'), chart(high, 'throughput')]) {
      const ys = [...svg.matchAll(/class="threshold-line" d="M[\d.]+ ([\d.]+)H/g)].map((m) => Number(m[1]));
      expect(ys.length).toBeGreaterThan(0);
      // The top of the plot is at y = 36 (TIMELINE_BOX.top); the line is at or below it.
      for (const y of ys) expect(y).toBeGreaterThanOrEqual(36);
    }
  });
});

describe('latency axis: log and linear', () => {
  const html = renderHtml(completedReport());

  it('the switch: two radio inputs before the sections (log checked), labels in the latency section, CSS that hides the other scale', () => {
    const inputs = html.indexOf('id="latency-scale-log" checked');
    expect(inputs).toBeGreaterThan(0);
    expect(inputs).toBeLessThan(html.indexOf('<section'));
    expect(html.indexOf('id="latency-scale-linear"')).toBeLessThan(html.indexOf('<section'));
    expect(html).toContain('<label for="latency-scale-log" class="scale-log">');
    expect(html).toContain('#latency-scale-log:checked~section .y-linear,#latency-scale-linear:checked~section .y-log{display:none}');
    expect(html).not.toMatch(/<script/i);
  });

  it('every latency chart holds a log and a linear drawing; the throughput chart has no switch', () => {
    for (const cls of ['large', 'small', 'latency-over-time']) {
      const svg = chart(html, cls);
      expect(svg.match(/<g class="y-log">/g), cls).toHaveLength(1);
      expect(svg.match(/<g class="y-linear">/g), cls).toHaveLength(1);
      expect(svg, cls).toContain('latency (ms), log scale');
    }
    expect(chart(html, 'throughput')).not.toContain('y-log');
  });

  it('log ticks are whole decades covering the values; zero sits on the floor, never at -Infinity', () => {
    const box = { width: 1000, height: 250, left: 64, right: 36, top: 36, bottom: 44 };
    const { log, linear } = yScales(box, 0.42, 1234);
    expect(log.ticks.map((tick) => tick.label)).toEqual(['0.1', '1', '10', '100', '1 s', '10 s']);
    expect(log.y(0.1)).toBeCloseTo(box.height - box.bottom);
    expect(log.y(10_000)).toBeCloseTo(box.top);
    expect(log.y(0)).toBe(log.y(0.1));
    expect(log.y(1234)).toBeLessThan(log.y(100));
    expect(linear.ticks[0]?.ms).toBe(0);
    const empty = yScales(box, Number.POSITIVE_INFINITY, 0);
    for (const s of [empty.log, empty.linear]) for (const tick of s.ticks) expect(Number.isFinite(s.y(tick.ms))).toBe(true);
  });
});

describe('the generator-limited banner', () => {
  const limited: RunReport = {
    ...completedReport(),
    generator: {
      limited: true,
      reasons: ['phase "steady": 120 of 9,000 sends (1.3 %) started late, over the limit of 1 %'],
      limits: { lateShare: 0.01, loopDelayP99Ms: 50 },
      phases: [
        { name: 'steady', scheduledSends: 9_000, lateSends: 120, loopDelayMs: { p50: 1, p99: 60, max: 90 }, processCpuCores: 1.7, mainThreadBusy: 0.97 },
      ],
      loadAverage: 6.5,
    },
    thresholds: [
      {
        expression: 'p99 < 50ms',
        passed: false,
        inconclusive: true,
        actual: 61,
        detail: 'measured 61 ms; over the 8,880 sends on time 40 ms with 60 ms of generator delay allowed: passed, so inconclusive',
      },
    ],
  };

  it('at the top, before the figures, naming the reason and what to do', () => {
    const html = renderHtml(limited);
    const banner = html.indexOf('<div class="banner inconclusive" role="alert"><strong>INCONCLUSIVE — the load generator was the bottleneck');
    expect(banner).toBeGreaterThan(0);
    expect(banner).toBeLessThan(html.indexOf('class="cards"'));
    expect(html).toContain('120 of 9,000 sends (1.3 %) started late');
    expect(html).toContain('lower the rate (--rate)');
    // A run that lagged with every threshold judged keeps a banner, which does not call it inconclusive.
    const judged = renderHtml({ ...limited, thresholds: [{ expression: 'p99 < 500ms', passed: true, actual: 61, detail: 'measured 61 ms' }] });
    expect(judged).toContain(
      '<div class="banner inconclusive" role="alert"><strong>NOTE — the load generator could not keep its schedule; every threshold could still be judged.',
    );
  });

  it('absent when the generator kept its schedule, or was not judged', () => {
    expect(renderHtml({ ...limited, generator: { ...limited.generator, limited: false, reasons: [] } as RunReport['generator'] } as RunReport)).not.toContain(
      'banner inconclusive',
    );
    expect(renderHtml(completedReport())).not.toContain('banner inconclusive');
  });
});
