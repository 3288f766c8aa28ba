/**
 * report.html in a real browser: Debian's headless Chromium (installed by `.ci/run`) opens each
 * fixture's report from a file:// URL. It must render every chart, log no error, run no script
 * and make no request besides the page itself.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser } from 'playwright-core';
import { renderHtml, type RunReport } from '../../src/report/index.js';
import { allFixtureReports, completedReport } from '../fixtures/reports.js';

const CHROMIUM = '/usr/bin/chromium';
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

const MISSING =
  `${CHROMIUM} is missing: the HTML report test needs Debian's Chromium. Run .ci/run (it installs it) or, as root, ` +
  '`apt-get update && apt-get install -y chromium`.';

let browser: Browser | undefined;
let dir = '';

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'keysim-report-html-'));
  // Without Chromium every test below fails with MISSING (a failure, never a silent skip).
  if (!existsSync(CHROMIUM)) return;
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
});

afterAll(async () => {
  await browser?.close();
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

interface ChartFacts {
  label: string;
  role: string | null;
  hasTitle: boolean;
  width: number;
  height: number;
  /** Paths, rects and circles with a non-empty box. */
  drawn: number;
}

interface Opened {
  charts: ChartFacts[];
  consoleErrors: string[];
  pageErrors: string[];
  dialogs: string[];
  requests: string[];
  scripts: number;
  heading: string;
  screenshot: (path: string) => Promise<void>;
  close: () => Promise<void>;
}

async function open(name: string, report: RunReport): Promise<Opened> {
  if (browser === undefined) throw new Error(MISSING);
  const file = join(dir, `${name}.html`);
  writeFileSync(file, renderHtml(report));
  const url = pathToFileURL(file).href;
  const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
  const page = await context.newPage();
  const consoleErrors: string[] = [];
  const pageErrors: string[] = [];
  const dialogs: string[] = [];
  const requests: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning') consoleErrors.push(`${message.type()}: ${message.text()}`);
  });
  page.on('pageerror', (error) => pageErrors.push(String(error)));
  page.on('dialog', (dialog) => {
    dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  page.on('request', (request) => requests.push(request.url()));
  // Anything but the page itself is refused (and recorded above), so a leak fails fast and offline.
  await context.route('**/*', (route) => (route.request().url() === url ? route.continue() : route.abort()));
  await page.goto(url, { waitUntil: 'load' });
  // Evaluated in the page; a string because the project's type-check has no DOM library.
  const charts = (await page.evaluate(`[...document.querySelectorAll('svg.chart')].map((svg) => {
    const box = svg.getBoundingClientRect();
    const drawn = [...svg.querySelectorAll('path, rect, circle')].filter((shape) => {
      const b = shape.getBBox();
      return b.width > 0 || b.height > 0;
    }).length;
    return {
      label: svg.getAttribute('aria-label') ?? '',
      role: svg.getAttribute('role'),
      hasTitle: (svg.querySelector(':scope > title')?.textContent ?? '').trim() !== '',
      width: box.width,
      height: box.height,
      drawn,
    };
  })`)) as ChartFacts[];
  const scripts = (await page.evaluate('document.scripts.length')) as number;
  const heading = (await page.evaluate(`document.querySelector('h1')?.textContent ?? ''`)) as string;
  return {
    charts,
    consoleErrors,
    pageErrors,
    dialogs,
    requests,
    scripts,
    heading,
    screenshot: async (path) => {
      await page.screenshot({ path, fullPage: true });
    },
    close: () => context.close(),
  };
}

describe('report.html in headless Chromium', () => {
  it('has Debian Chromium to run in', () => {
    expect(existsSync(CHROMIUM), MISSING).toBe(true);
  });

  it.each(allFixtureReports())('$name: renders every chart, no console errors, no requests but the page', async ({ name, report }) => {
    const opened = await open(name, report);
    try {
      expect(opened.pageErrors).toEqual([]);
      expect(opened.consoleErrors).toEqual([]);
      expect(opened.dialogs).toEqual([]);
      expect(opened.scripts).toBe(0);
      expect(opened.requests).toEqual([pathToFileURL(join(dir, `${name}.html`)).href]);
      expect(opened.heading).toContain(`keysim run: ${report.scenario.name}`);
      expect(opened.charts).toHaveLength(report.operations.length + 5);
      for (const chart of opened.charts) {
        expect(chart.role, chart.label).toBe('img');
        expect(chart.label).not.toBe('');
        expect(chart.hasTitle, chart.label).toBe(true);
        expect(chart.width, chart.label).toBeGreaterThan(100);
        expect(chart.height, chart.label).toBeGreaterThan(50);
        expect(chart.drawn, chart.label).toBeGreaterThan(0);
      }
    } finally {
      await opened.close();
    }
  });

  it('draws the curves, bars and segments of a completed run, and a screenshot of it', async () => {
    const report = completedReport();
    const opened = await open('screenshot', report);
    try {
      // Spectrum charts hold a frame, grid lines and two curves at least; the outcome chart a bar per outcome.
      const spectra = opened.charts.filter((c) => c.label.startsWith('Latency percentile spectrum'));
      expect(spectra).toHaveLength(report.operations.length + 1);
      for (const chart of spectra) expect(chart.drawn, chart.label).toBeGreaterThanOrEqual(10);
      const throughput = opened.charts.find((c) => c.label.startsWith('Throughput per second'));
      expect(throughput?.drawn).toBeGreaterThanOrEqual(report.timeline.length);
      const png = join(dir, 'completed-report.png');
      await opened.screenshot(png);
      expect(statSync(png).size).toBeGreaterThan(20_000);
      expect(readFileSync(png).subarray(0, 8).equals(PNG_SIGNATURE)).toBe(true);
    } finally {
      await opened.close();
    }
  });

  it('the latency axis switch: log shown by default, a click on "linear" shows the linear drawing, no script; threshold lines visible', async () => {
    if (browser === undefined) throw new Error(MISSING);
    const report: RunReport = { ...completedReport(), thresholds: [{ expression: 'p99 < 50ms', passed: true, actual: 12, detail: '' }] };
    const file = join(dir, 'switch.html');
    writeFileSync(file, renderHtml(report));
    const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
    try {
      const page = await context.newPage();
      await page.goto(pathToFileURL(file).href, { waitUntil: 'load' });
      // Rendered boxes of the overall spectrum's two drawings and of its threshold line (only the shown drawing's has a box).
      const facts = async () =>
        (await page.evaluate(`(() => {
          const svg = document.querySelector('svg.chart.large');
          const size = (el) => { if (!el) return 0; const b = el.getBoundingClientRect(); return b.width * b.height; };
          const visible = (sel) => [...svg.querySelectorAll(sel)].some((el) => getComputedStyle(el).display !== 'none' && size(el) > 0);
          return {
            log: visible('g.y-log'),
            linear: visible('g.y-linear'),
            threshold: [...svg.querySelectorAll('.threshold-line')].filter((el) => el.getBoundingClientRect().width > 100).length,
            checked: document.querySelector('#latency-scale-log').checked,
            scripts: document.scripts.length,
          };
        })()`)) as { log: boolean; linear: boolean; threshold: number; checked: boolean; scripts: number };
      expect(await facts()).toEqual({ log: true, linear: false, threshold: 1, checked: true, scripts: 0 });
      await page.click('label[for="latency-scale-linear"]');
      expect(await facts()).toEqual({ log: false, linear: true, threshold: 1, checked: false, scripts: 0 });
      await page.click('label[for="latency-scale-log"]');
      expect(await facts()).toMatchObject({ log: true, linear: false, checked: true });
    } finally {
      await context.close();
    }
  });
});
