/**
 * `--junit FILE`: the verdicts of one or more runs as JUnit XML, the format CI systems (GitLab,
 * Jenkins, GitHub test reporters) show as test results. One `<testsuite>` per scenario run, one
 * `<testcase>` per threshold, check and invariant (and one for the oracle when it ran):
 *
 * - a failed threshold, check or invariant is a `<failure>` with the measured value as message
 *   and the detail (witness, expression) as text;
 * - an inconclusive threshold (the load generator could not keep its schedule), a check that
 *   judged nothing (every answer it needed never came), an invariant nothing exercised and an oracle
 *   that did not run are `<skipped>` with the reason: neither passed nor failed;
 * - every test case's state is `runVerdict`'s, never read from the report's own flags here, so the
 *   JUnit file agrees with the terminal, report.md and report.html;
 * - a run that was interrupted or failed before it finished adds an `<error>` test case, so a CI
 *   job never shows a partial run as green;
 * - a scenario that could not run at all (target unreachable, set-up failed) is a suite with one
 *   `<error>` test case (`JunitRun.error`).
 *
 * Pure: the CLI writes the file. Every string is escaped for XML, and characters XML 1.0 cannot
 * carry at all (most control characters, lone surrogates) are replaced by U+FFFD.
 */
import { invariantState, invariantStateText, promisesText } from './promise-text.js';
import type { RunReport } from './model.js';
import { measureLine } from './measures-text.js';
import { type CheckState, type RunVerdict, runVerdict } from './verdict.js';
import { escapeHtml } from './html/svg.js';

/** One scenario run for the JUnit file: its report, or why it produced none. */
export type JunitRun = { report: RunReport } | { scenario: string; error: string };

/** Characters XML 1.0 allows (tab, newline, carriage return and from U+0020, minus lone surrogates and U+FFFE/U+FFFF). */
// Lone surrogates are matched on purpose (XML cannot carry them), which the rule below takes for a mistake.
// eslint-disable-next-line no-misleading-character-class -- unpaired surrogates are the target, without the u flag
const NOT_XML_CHAR = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\uD800-\uDBFF\uDC00-\uDFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * Escapes text for XML content and double- or single-quoted attributes: the HTML report's escaping
 * (its `&#39;` is a valid XML character reference), after replacing what XML cannot carry at all.
 */
export function escapeXml(text: string): string {
  return escapeHtml(text.replace(NOT_XML_CHAR, '\uFFFD'));
}

interface Case {
  classname: string;
  name: string;
  outcome: { kind: 'passed'; note?: string } | { kind: 'failure' | 'error' | 'skipped'; message: string; detail?: string };
}

/** A check's test case from its runVerdict state: one that judged nothing is skipped, neither passed nor failed. */
function checkOutcome(state: CheckState, name: string, detail: string): Case['outcome'] {
  if (state === 'passed') return { kind: 'passed' };
  if (state === 'inconclusive') return { kind: 'skipped', message: /^not judged\b/i.test(detail) ? detail : `not judged: ${detail}` };
  return { kind: 'failure', message: detail === '' ? `${name} failed` : detail, detail };
}

function suiteCases(report: RunReport, verdict: RunVerdict): Case[] {
  const scenario = report.scenario.name;
  const cases: Case[] = [];
  if (report.status !== 'completed') {
    cases.push({
      classname: `${scenario}.run`,
      name: 'run completed',
      outcome: {
        kind: 'error',
        message: report.status === 'interrupted' ? 'the run was interrupted (SIGINT): its figures are partial' : 'the run failed before its planned end',
        detail: report.notes.join('\n'),
      },
    });
  }
  report.thresholds.forEach((t, i) => {
    const state = verdict.thresholds[i]?.state ?? 'failed';
    cases.push({
      classname: `${scenario}.thresholds`,
      name: t.expression,
      outcome:
        state === 'passed'
          ? { kind: 'passed' }
          : state === 'inconclusive'
            ? { kind: 'skipped', message: `inconclusive: ${t.detail}` }
            : {
                kind: 'failure',
                message: `${t.expression}: ${t.detail}`,
                detail: `threshold ${t.expression}\nmeasured: ${t.actual === null ? 'no data' : String(t.actual)}\n${t.detail}`,
              },
    });
  });
  report.checks.forEach((c, i) => {
    cases.push({
      classname: `${scenario}.checks`,
      name: c.name,
      outcome: checkOutcome(verdict.checks[i]?.state ?? 'failed', c.name, c.detail),
    });
  });
  const invariants = report.invariants;
  if (invariants !== undefined) {
    invariants.invariants.forEach((inv, i) => {
      // The state runVerdict gives it, as for thresholds and checks: never read from inv.passed here.
      const state = verdict.invariants?.each[i]?.state ?? 'failed';
      const violations = invariants.violations.filter((v) => v.invariant === inv.id);
      const detail = violations
        .map(
          (v) =>
            `${v.subject}: ${v.message} (${v.occurrences} answer${v.occurrences === 1 ? '' : 's'})\n` +
            v.witness.map((w) => `  #${w.seq} ${w.op} ${w.request} → ${w.outcome}`).join('\n'),
        )
        .join('\n');
      cases.push({
        classname: `${scenario}.invariants`,
        name: `${inv.id}: ${inv.title}`,
        outcome:
          state === 'passed'
            ? // Within promise passes; the system-out says by how much the exact model was exceeded.
              invariantState(inv) === 'within-promise'
              ? { kind: 'passed', note: invariantStateText(inv) }
              : { kind: 'passed' }
            : state === 'unexercised'
              ? { kind: 'skipped', message: 'nothing in the history exercised this invariant' }
              : {
                  kind: 'failure',
                  message: `${inv.violations} subject${inv.violations === 1 ? '' : 's'} broke ${inv.id}${inv.measured === undefined ? '' : ` (${inv.measured})`}`,
                  detail,
                },
      });
    });
    if (invariants.verdict === 'not-checked') {
      cases.push({
        classname: `${scenario}.invariants`,
        name: 'history checked',
        outcome: { kind: 'skipped', message: invariants.notes.join('; ') || 'the history was not checked' },
      });
    }
    const oracle = invariants.oracle;
    if (oracle !== undefined && verdict.oracle !== undefined) {
      cases.push({
        classname: `${scenario}.invariants`,
        name: 'oracle: every answer agrees with a replay through a fresh engine',
        outcome:
          verdict.oracle === 'agrees'
            ? { kind: 'passed' }
            : verdict.oracle === 'not-run'
              ? { kind: 'skipped', message: oracle.note ?? 'the oracle did not run' }
              : {
                  kind: 'failure',
                  message: `${oracle.differences} answer${oracle.differences === 1 ? '' : 's'} differ from the oracle's`,
                  detail: oracle.examples.map((d) => `#${d.seq} ${d.op} ${d.field}: expected ${d.expected}, received ${d.received}`).join('\n'),
                },
      });
    }
  }
  return cases;
}

function caseXml(c: Case, timeSeconds: string): string {
  const open = `    <testcase classname="${escapeXml(c.classname)}" name="${escapeXml(c.name)}" time="${timeSeconds}"`;
  const o = c.outcome;
  if (o.kind === 'passed') return o.note === undefined ? `${open}/>` : `${open}>\n      <system-out>${escapeXml(o.note)}</system-out>\n    </testcase>`;
  const body = o.detail === undefined || o.detail === '' ? '' : escapeXml(o.detail);
  const tag = o.kind;
  const typeAttr = o.kind === 'skipped' ? '' : ` type="${o.kind === 'failure' ? 'AssertionError' : 'RunError'}"`;
  return `${open}>\n      <${tag} message="${escapeXml(o.message)}"${typeAttr}${body === '' ? '/>' : `>${body}</${tag}>`}\n    </testcase>`;
}

function suiteXml(name: string, cases: Case[], timestamp: string | undefined, timeSeconds: string, properties: Array<[string, string]>): string {
  const count = (kind: string) => cases.filter((c) => c.outcome.kind === kind).length;
  const attrs =
    `name="${escapeXml(name)}" tests="${cases.length}" failures="${count('failure')}" errors="${count('error')}" skipped="${count('skipped')}" time="${timeSeconds}"` +
    (timestamp === undefined ? '' : ` timestamp="${escapeXml(timestamp)}"`);
  const props =
    properties.length === 0
      ? ''
      : `    <properties>\n${properties.map(([k, v]) => `      <property name="${escapeXml(k)}" value="${escapeXml(v)}"/>`).join('\n')}\n    </properties>\n`;
  return `  <testsuite ${attrs}>\n${props}${cases.map((c) => `${caseXml(c, '0')}\n`).join('')}  </testsuite>`;
}

/** The runs as one JUnit XML document (`<testsuites>`), a suite per run in the order given. */
export function renderJunit(runs: readonly JunitRun[]): string {
  const suites: string[] = [];
  let tests = 0;
  let failures = 0;
  let errors = 0;
  let skipped = 0;
  for (const run of runs) {
    let cases: Case[];
    let xml: string;
    if ('report' in run) {
      const r = run.report;
      const verdict = runVerdict(r);
      cases = suiteCases(r, verdict);
      const seconds = Number.isFinite(r.measuredMs) ? (r.measuredMs / 1000).toFixed(3) : '0';
      xml = suiteXml(`keysim ${r.scenario.name}`, cases, r.startedAt.replace(/\.\d+Z$/, ''), seconds, [
        ['scenario', r.scenario.name],
        ['status', r.status],
        ['target', `${r.target.kind} ${r.target.url}`],
        ['model', r.settings.model],
        ['seed', String(r.seed)],
        ['requests', String(r.totals.requests)],
        ['errors', String(r.totals.errors)],
        ['generatorLimited', String(r.generator?.limited === true)],
        // The run's headline and reason, as the terminal's final line and the reports say them.
        ['verdict', `${verdict.headline}: ${verdict.reason}`],
        ...(r.invariants?.promises === undefined ? [] : [['consistency', promisesText(r.invariants.promises)] as [string, string]]),
        // Measures are figures, not test cases: the run's one verdict stays with its cases.
        ...(r.measures ?? []).map((m): [string, string] => [`measure ${m.name}`, measureLine(m)]),
      ]);
    } else {
      cases = [{ classname: `${run.scenario}.run`, name: 'run completed', outcome: { kind: 'error', message: run.error } }];
      xml = suiteXml(`keysim ${run.scenario}`, cases, undefined, '0', [['scenario', run.scenario]]);
    }
    suites.push(xml);
    tests += cases.length;
    failures += cases.filter((c) => c.outcome.kind === 'failure').length;
    errors += cases.filter((c) => c.outcome.kind === 'error').length;
    skipped += cases.filter((c) => c.outcome.kind === 'skipped').length;
  }
  return (
    `<?xml version="1.0" encoding="UTF-8"?>\n` +
    `<testsuites name="keysim" tests="${tests}" failures="${failures}" errors="${errors}" skipped="${skipped}">\n` +
    suites.map((s) => `${s}\n`).join('') +
    `</testsuites>\n`
  );
}
