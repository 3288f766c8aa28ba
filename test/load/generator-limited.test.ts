/**
 * A load generator that cannot keep its schedule (a busy machine) made `keysim run` fail a latency
 * threshold (exit 99) with the late sends as a mere footnote: the generator, not the service, had
 * missed its schedule. Now the generator measures itself per measured phase and, when over its
 * limits, a banner goes at the top of the summary, the Markdown and the HTML, and a latency
 * threshold its lag may explain is inconclusive (not failed): exit 97 when nothing failed.
 *
 * Pace-independent both ways: the limited run is made limited on purpose (its requests' `build`
 * busy-waits 40 ms each while they are due every 20 ms, so every send after the first is late
 * whatever the machine's speed — a slower machine only makes it later); the normal run is judged
 * against limits it cannot exceed, so a busy machine cannot make it limited.
 */
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { exitCodeOf } from '../../src/cli/commands/run.js';
import { EXIT } from '../../src/cli/exit-codes.js';
import { renderSummary } from '../../src/cli/summary.js';
import { judgeGenerator } from '../../src/load/metrics/generator-monitor.js';
import { runScenario } from '../../src/load/run/runner.js';
import { type Scenario, defineScenario } from '../../src/load/scenario/scenario.js';
import { type Target, startEmbeddedSimulator } from '../../src/load/target/target.js';
import { type Threshold, parseThreshold } from '../../src/load/run/thresholds.js';
import { parseReport, renderHtml, renderJson, renderMarkdown } from '../../src/report/index.js';
import type { GeneratorPhase, RunReport } from '../../src/report/model.js';
import { generatorSummaryText } from '../../src/report/generator-text.js';
import { loadSettings } from '../helpers/load.js';

const threshold = (expression: string): Threshold => {
  const parsed = parseThreshold(expression);
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.threshold;
};

/** Verifications of a key that does not exist (no fixtures); `blockMs` busy-waits in each request's build, on the generator's own thread. */
function healthScenario(blockMs: number): Scenario<unknown> {
  return defineScenario<undefined>({
    name: blockMs > 0 ? 'blocking-generator' : 'quiet-generator',
    description: 'verifications of an unknown key',
    setup: async () => undefined,
    mix: [
      {
        weight: 1,
        build: () => {
          const until = performance.now() + blockMs;
          while (performance.now() < until) {
            // Busy: the generator's event loop cannot run its timers meanwhile.
          }
          return { op: 'keys.verifyKey', body: { key: 'sk_not_a_key' } };
        },
      },
    ],
  }) as unknown as Scenario<unknown>;
}

/** Text a reader sees on the page: styles and tags removed. */
const visibleText = (html: string) => html.replace(/<style>[\s\S]*?<\/style>/g, '').replace(/<[^>]+>/g, ' ');

describe('the generator measures itself: a run it could not keep the schedule of is inconclusive', () => {
  let target: Target;

  beforeAll(async () => {
    target = await startEmbeddedSimulator({ seed: 3 });
  });

  afterAll(async () => {
    await target?.close();
  });

  test('a generator that could not keep its schedule makes the run inconclusive (exit 97, banner at the top), not a latency failure (exit 99)', async () => {
    const report = await runScenario({
      scenario: healthScenario(40),
      target,
      settings: loadSettings({ rate: 50, durationMs: 1_000 }),
      seed: 1,
      thresholds: [threshold('p999 < 0.001ms'), threshold('p99 < 3600s'), threshold('rps > 1000000'), threshold('errors == 0')],
      keep: false,
      keysimVersion: '0.0.0-test',
    });
    expect(report.status).toBe('completed');
    const generator = report.generator;
    expect(generator?.limited).toBe(true);
    expect(generator?.phases).toHaveLength(1);
    const phase = generator?.phases[0] as GeneratorPhase;
    expect(phase.scheduledSends).toBe(50);
    // Request i is due at 20·i ms but cannot be built before 40·i ms: each tick of the generator
    // finds the requests due during the previous builds overdue, all but the last one or two late.
    expect(phase.lateSends).toBeGreaterThan(25);
    expect(generator?.reasons.join(' ')).toMatch(/sends .* started late, over the limit of 1 %/);
    expect(phase.mainThreadBusy).toBeGreaterThan(0);
    expect(phase.processCpuCores).toBeGreaterThan(0);

    // A latency threshold that fails as measured with too few sends on time to judge it again (a
    // p999 needs 1,000 of them and the run has 50 sends in all, so this holds whatever the
    // machine's pace: a p50 was judged over two on-time sends on a busy CI machine) and a throughput one that
    // fails are inconclusive, whatever the machine's pace; one the lag can only have
    // made worse that passes is passed; errors are judged.
    expect(report.thresholds.map((t) => [t.expression, t.passed, t.inconclusive === true])).toEqual([
      ['p999 < 0.001ms', false, true],
      ['p99 < 3600s', true, false],
      ['rps > 1000000', false, true],
      ['errors == 0', true, false],
    ]);
    expect(exitCodeOf(report)).toBe(EXIT.generatorLimited);

    // A banner at the top of all three renderings.
    const summary = renderSummary(report);
    expect(summary.split('\n')[0]).toMatch(/^!!! INCONCLUSIVE — the load generator was the bottleneck/);
    expect(summary).toContain('--rate');
    expect(summary).toContain('INCONCLUSIVE  threshold p999 < 0.001ms');
    const markdown = renderMarkdown(report);
    const mdBanner = markdown.indexOf('INCONCLUSIVE — the load generator was the bottleneck');
    expect(mdBanner).toBeGreaterThan(0);
    expect(mdBanner).toBeLessThan(markdown.indexOf('**Status:**'));
    expect(markdown).toContain('## Load generator');
    expect(markdown).toMatch(/⚠️ inconclusive \| p999 \\< 0\.001ms/);
    const html = renderHtml(report);
    const htmlBanner = html.indexOf('class="banner inconclusive"');
    expect(htmlBanner).toBeGreaterThan(0);
    expect(htmlBanner).toBeLessThan(html.indexOf('class="cards"'));
    expect(visibleText(html)).toContain('INCONCLUSIVE — the load generator was the bottleneck');

    // The figures travel in report.json, which the validating reader accepts.
    const parsed = parseReport(renderJson(report));
    expect(parsed.ok ? parsed.report.generator : parsed.error).toEqual(generator);
  });

  test('a failed error-rate threshold still fails a generator-limited run (exit 99 outranks 97)', async () => {
    const report = await runScenario({
      scenario: healthScenario(40),
      target,
      settings: loadSettings({ rate: 50, durationMs: 400 }),
      seed: 1,
      thresholds: [threshold('requests > 1000000'), threshold('p99 < 3600s')],
      keep: false,
      keysimVersion: '0.0.0-test',
    });
    expect(report.generator?.limited).toBe(true);
    expect(report.thresholds.map((t) => [t.passed, t.inconclusive === true])).toEqual([
      [false, false],
      [true, false],
    ]);
    expect(exitCodeOf(report)).toBe(EXIT.thresholdFailed);
  });

  test('a normal run has no banner and exits 0, its generator figures in the report', async () => {
    const report = await runScenario({
      scenario: healthScenario(0),
      target,
      settings: loadSettings({ rate: 20, durationMs: 500 }),
      seed: 1,
      thresholds: [threshold('p99 < 3600s')],
      keep: false,
      keysimVersion: '0.0.0-test',
      // Limits no pace can exceed: this test is about what a run within its limits shows.
      generatorLimits: { lateShare: 1, loopDelayP99Ms: Number.POSITIVE_INFINITY },
    });
    expect(report.generator).toMatchObject({ limited: false, reasons: [], limits: { lateShare: 1, loopDelayP99Ms: Number.MAX_VALUE } });
    expect(report.generator?.phases).toEqual([expect.objectContaining({ name: 'load', scheduledSends: 10 })]);
    expect(report.thresholds).toEqual([expect.objectContaining({ passed: true })]);
    expect(report.thresholds[0]?.inconclusive).toBeUndefined();
    expect(exitCodeOf(report)).toBe(EXIT.ok);
    expect(renderSummary(report)).not.toMatch(/INCONCLUSIVE/);
    expect(renderSummary(report)).toMatch(/^note {2}generator kept its schedule: late \d+\/10 /m);
    expect(renderMarkdown(report)).not.toMatch(/INCONCLUSIVE|\[!WARNING\]/);
    expect(renderMarkdown(report)).toContain('It kept its schedule.');
    expect(renderHtml(report)).not.toMatch(/INCONCLUSIVE|banner inconclusive/);
    const parsed = parseReport(renderJson(report));
    expect(parsed.ok ? parsed.report.generator?.limits : parsed.error).toEqual({ lateShare: 1, loopDelayP99Ms: Number.MAX_VALUE });
  });

  test('the closed model has no schedule: no late sends, judged on its event-loop delay only', async () => {
    const report = await runScenario({
      scenario: healthScenario(0),
      target,
      settings: loadSettings({ model: 'closed', connections: 1, durationMs: 300 }),
      seed: 1,
      thresholds: [],
      keep: false,
      keysimVersion: '0.0.0-test',
      generatorLimits: { loopDelayP99Ms: 0 },
    });
    expect(report.generator?.phases).toEqual([expect.objectContaining({ scheduledSends: null, lateSends: null })]);
    // Any event-loop delay at all is over a limit of 0 ms (timers never fire to the nanosecond).
    expect(report.generator?.reasons).toEqual([expect.stringMatching(/event-loop delay p99 was [\d.]+ ms, over the limit of 0 ms/)]);
    // Limited with no threshold left inconclusive: the banner stays, the exit code is the verdicts' (0).
    expect(exitCodeOf(report)).toBe(EXIT.ok);
    expect(renderSummary(report)).toMatch(/^!!! NOTE — the load generator could not keep its schedule/);
  });
});

describe('judgeGenerator: the limits', () => {
  const phase = (over: Partial<GeneratorPhase> = {}): GeneratorPhase => ({
    name: 'load',
    scheduledSends: 1_000,
    lateSends: 0,
    loopDelayMs: { p50: 1, p99: 5, max: 9 },
    processCpuCores: 0.5,
    mainThreadBusy: 0.3,
    ...over,
  });
  const limits = { lateShare: 0.01, loopDelayP99Ms: 50 };

  test.each<[string, GeneratorPhase[], boolean]>([
    ['quiet', [phase()], false],
    ['late sends at the limit (1 %)', [phase({ lateSends: 10 })], false],
    ['late sends over the limit', [phase({ lateSends: 11 })], true],
    ['loop delay p99 at the limit', [phase({ loopDelayMs: { p50: 1, p99: 50, max: 80 } })], false],
    ['loop delay p99 over the limit', [phase({ loopDelayMs: { p50: 1, p99: 50.5, max: 80 } })], true],
    ['a busy CPU alone is not a verdict', [phase({ processCpuCores: 2, mainThreadBusy: 1 })], false],
    ['the closed model has no late sends to judge', [phase({ scheduledSends: null, lateSends: null })], false],
    ['one phase over the limit is enough', [phase(), phase({ name: 'burst', lateSends: 500 })], true],
    ['no measured phase', [], false],
  ])('%s', (_name, phases, limited) => {
    const section = judgeGenerator(phases, limits, 1.5);
    expect(section.limited).toBe(limited);
    expect(section.reasons.length > 0).toBe(limited);
  });

  test('the summary gives the figures of several phases in one line, the worst of each', () => {
    const section = judgeGenerator(
      [phase(), phase({ name: 'burst', lateSends: 500, loopDelayMs: { p50: 2, p99: 70, max: 90 }, mainThreadBusy: 0.9 })],
      limits,
      0,
    );
    expect(generatorSummaryText(section)).toBe(
      'over 2 phases, the worst of each: late 500/1000 in phase "burst" · loop delay p99 70 ms in phase "burst" (max 90 ms) · main thread busy 90 % · process CPU 0.5 cores',
    );
    expect(generatorSummaryText(judgeGenerator([], limits, 0))).toBeUndefined();
  });

  test('exitCodeOf: 97 (a threshold inconclusive) below the failures, above ok', () => {
    const base = { generator: judgeGenerator([phase({ lateSends: 500 })], limits, 0) } as Partial<RunReport>;
    const report = (over: Partial<RunReport>): RunReport => ({ status: 'completed', checks: [], thresholds: [], ...base, ...over }) as RunReport;
    // Limited, but nothing inconclusive: 0 (the banner stays in the report).
    expect(exitCodeOf(report({}))).toBe(EXIT.ok);
    expect(exitCodeOf(report({ thresholds: [{ expression: 'p99 < 1ms', passed: false, inconclusive: true, actual: 2, detail: '' }] }))).toBe(
      EXIT.generatorLimited,
    );
    expect(exitCodeOf(report({ thresholds: [{ expression: 'errors == 0', passed: false, actual: 2, detail: '' }] }))).toBe(EXIT.thresholdFailed);
    expect(exitCodeOf(report({ checks: [{ name: 'c', passed: false, detail: '' }] }))).toBe(EXIT.checkFailed);
    expect(exitCodeOf(report({ status: 'interrupted' }))).toBe(EXIT.interrupted);
    expect(exitCodeOf(report({ generator: judgeGenerator([phase()], limits, 0) }))).toBe(EXIT.ok);
  });
});
