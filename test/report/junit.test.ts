/**
 * `--junit`: well-formed XML whatever the strings in the report (checked by a strict reader), one
 * suite per run, one test case per threshold, check and invariant, failures with message and
 * detail, inconclusive thresholds skipped with the reason, and counts that add up.
 */
import { describe, expect, it } from 'vitest';
import { escapeXml, renderJunit } from '../../src/report/junit.js';
import type { RunReport } from '../../src/report/model.js';
import {
  allFixtureReports,
  completedReport,
  failedThresholdsReport,
  hostileReport,
  interruptedReport,
  invariantsCleanReport,
  invariantsViolatedReport,
} from '../fixtures/reports.js';
import { type XmlElement, findAll, parseXml } from '../helpers/xml.js';

const suitesOf = (xml: string) => findAll(parseXml(xml), 'testsuite');
const casesOf = (suite: XmlElement) => suite.children.filter((c) => c.name === 'testcase');
const outcome = (c: XmlElement) => c.children.find((x) => x.name !== 'properties')?.name ?? 'passed';

describe('renderJunit', () => {
  it.each(allFixtureReports())('$name: well-formed, and the counts of every suite and of the root add up', ({ report }) => {
    const xml = renderJunit([{ report }]);
    expect(xml.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n')).toBe(true);
    const root = parseXml(xml);
    expect(root.name).toBe('testsuites');
    const [suite] = findAll(root, 'testsuite');
    if (suite === undefined) throw new Error('no suite');
    const cases = casesOf(suite);
    const invariantCases =
      (report.invariants?.invariants.length ?? 0) + (report.invariants?.oracle === undefined ? 0 : 1) + (report.invariants?.verdict === 'not-checked' ? 1 : 0);
    const runCase = report.status === 'completed' ? 0 : 1;
    expect(cases).toHaveLength(report.thresholds.length + report.checks.length + invariantCases + runCase);
    for (const kind of ['failure', 'error', 'skipped'] as const) {
      const n = cases.filter((c) => outcome(c) === kind).length;
      expect(suite.attributes[kind === 'failure' ? 'failures' : kind === 'error' ? 'errors' : 'skipped']).toBe(String(n));
      expect(root.attributes[kind === 'failure' ? 'failures' : kind === 'error' ? 'errors' : 'skipped']).toBe(String(n));
    }
    expect(suite.attributes.tests).toBe(String(cases.length));
    expect(root.attributes.tests).toBe(String(cases.length));
  });

  it('a failing threshold and a failed check are failures with the measured value as message; passing ones are plain test cases', () => {
    const report = failedThresholdsReport();
    const [suite] = suitesOf(renderJunit([{ report }]));
    if (suite === undefined) throw new Error('no suite');
    const byName = new Map(casesOf(suite).map((c) => [c.attributes.name, c]));
    const p99 = byName.get('p99(ratelimit.limit) < 20ms');
    expect(p99?.attributes.classname).toBe('ratelimit-burst.thresholds');
    const failure = p99?.children[0];
    expect(failure?.name).toBe('failure');
    expect(failure?.attributes.message).toBe('p99(ratelimit.limit) < 20ms: corrected latency');
    expect(failure?.text).toContain(`measured: ${String(report.thresholds[0]?.actual)}`);
    expect(outcome(byName.get('p50(keys.verifyKey) < 5ms') as XmlElement)).toBe('passed');
    const check = byName.get('credits never negative');
    expect(check?.attributes.classname).toBe('ratelimit-burst.checks');
    expect(check?.children[0]?.attributes.message).toBe('key_3xk… reached -2');
    expect(outcome(byName.get('override applied') as XmlElement)).toBe('passed');
  });

  it('an inconclusive threshold is skipped with the reason, never a failure', () => {
    const report: RunReport = {
      ...completedReport(),
      thresholds: [
        {
          expression: 'p99 < 1ms',
          passed: false,
          inconclusive: true,
          actual: 4.2,
          detail: 'measured 4.2 ms, inconclusive: the load generator could not keep its schedule',
        },
      ],
    };
    const [suite] = suitesOf(renderJunit([{ report }]));
    const [threshold] = casesOf(suite as XmlElement);
    expect(threshold?.children.map((c) => c.name)).toEqual(['skipped']);
    expect(threshold?.children[0]?.attributes.message).toMatch(
      /^inconclusive: measured 4\.2 ms, inconclusive: the load generator could not keep its schedule$/,
    );
    expect(suite?.attributes.failures).toBe('0');
    expect(suite?.attributes.skipped).toBe('1');
  });

  it('invariants: a broken one is a failure naming its subjects and witness, the oracle a test case of its own; an unexercised one is skipped', () => {
    const [violated] = suitesOf(renderJunit([{ report: invariantsViolatedReport() }]));
    const cases = casesOf(violated as XmlElement);
    const overSpend = cases.find((c) => c.attributes.name?.startsWith('credits.no-over-spend:'));
    expect(overSpend?.attributes.classname).toBe('credits-drain.invariants');
    expect(overSpend?.children[0]?.name).toBe('failure');
    expect(overSpend?.children[0]?.text).toContain('key_3xk9');
    expect(overSpend?.children[0]?.text).toContain('#1817 keys.verifyKey key_3xk9 cost 1 → VALID credits 0');
    const oracle = cases.find((c) => c.attributes.name?.startsWith('oracle:'));
    expect(oracle?.children[0]?.attributes.message).toBe("3 answers differ from the oracle's");
    const [clean] = suitesOf(renderJunit([{ report: invariantsCleanReport() }]));
    const refill = casesOf(clean as XmlElement).find((c) => c.attributes.name?.startsWith('credits.refill:'));
    expect(refill?.children[0]?.name).toBe('skipped');
    expect(casesOf(clean as XmlElement).filter((c) => outcome(c) === 'failure')).toEqual([]);
  });

  it('an interrupted run adds an error test case, so a partial run never shows green', () => {
    const [suite] = suitesOf(renderJunit([{ report: interruptedReport() }]));
    const run = casesOf(suite as XmlElement).find((c) => c.attributes.name === 'run completed');
    expect(run?.children[0]?.name).toBe('error');
    expect(run?.children[0]?.attributes.message).toMatch(/interrupted/);
  });

  it('several runs: one suite each in order, a scenario that could not run an error suite, and root totals of all', () => {
    const xml = renderJunit([
      { report: completedReport() },
      { scenario: 'smoke', error: 'The target did not answer at http://127.0.0.1:9 (ECONNREFUSED).' },
      { report: failedThresholdsReport() },
    ]);
    const root = parseXml(xml);
    const suites = findAll(root, 'testsuite');
    expect(suites.map((s) => s.attributes.name)).toEqual(['keysim verify-mixed', 'keysim smoke', 'keysim ratelimit-burst']);
    expect(casesOf(suites[1] as XmlElement)[0]?.children[0]?.attributes.message).toBe('The target did not answer at http://127.0.0.1:9 (ECONNREFUSED).');
    const sum = (attr: string) => suites.reduce((s, x) => s + Number(x.attributes[attr]), 0);
    for (const attr of ['tests', 'failures', 'errors', 'skipped']) expect(root.attributes[attr]).toBe(String(sum(attr)));
    expect(root.attributes.errors).toBe('1');
  });

  it('hostile strings come back exactly after escaping (markup, quotes, ampersands, control characters replaced)', () => {
    const report = hostileReport();
    report.checks = [{ name: 'nul \u0000 and bell \u0007 and "quotes" & <tags> \'single\'', passed: false, detail: ']]> <![CDATA[ x' }];
    const xml = renderJunit([{ report }]);
    const [suite] = suitesOf(xml);
    expect(suite?.attributes.name).toBe(`keysim ${report.scenario.name}`);
    const names = casesOf(suite as XmlElement).map((c) => c.attributes.name);
    expect(names).toContain(report.thresholds[0]?.expression);
    expect(names).toContain('nul \uFFFD and bell \uFFFD and "quotes" & <tags> \'single\'');
    const check = casesOf(suite as XmlElement).find((c) => c.attributes.classname?.endsWith('.checks'));
    expect(check?.children[0]?.text).toBe(']]> <![CDATA[ x');
  });

  it('escapeXml: lone surrogates and U+FFFE are replaced, a surrogate pair (emoji) kept', () => {
    expect(escapeXml('a\uD800b\uDC00c\uFFFE😀&')).toBe('a\uFFFDb\uFFFDc\uFFFD😀&amp;');
    expect(() => parseXml(`<a b="${escapeXml('\uD800"<&\u0001')}">${escapeXml('\u001f')}</a>`)).not.toThrow();
  });

  it('the strict reader refuses what is not well-formed (so the tests above can fail)', () => {
    expect(() => parseXml('<a><b></a></b>')).toThrow(/closes/);
    expect(() => parseXml('<a x="1 < 2"/>')).toThrow(/raw "<"/);
    expect(() => parseXml('<a>fish & chips</a>')).toThrow(/raw "&"/);
    expect(() => parseXml('<a>&nbsp;</a>')).toThrow(/unknown entity/);
    expect(() => parseXml('<a>\u0000</a>')).toThrow(/cannot carry/);
    expect(() => parseXml('<a x="1" x="2"/>')).toThrow(/duplicate/);
    expect(() => parseXml('<a/><b/>')).toThrow(/after the root/);
    expect(() => parseXml('<a>')).toThrow(/never closed/);
  });
});
