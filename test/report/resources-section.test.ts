/**
 * The resources section in every rendering: report.json (parsed back; the field is optional, so
 * reports written before it still read), Markdown, HTML and the terminal summary — what a run
 * created, deleted and left per kind, and the command that deletes what is left.
 */
import { describe, expect, it } from 'vitest';
import { parseReport, renderHtml, renderJson, renderMarkdown, type RunReport } from '../../src/report/index.js';
import type { ResourcesSection } from '../../src/report/model.js';
import { renderSummary } from '../../src/cli/summary.js';
import { minimalReport } from '../helpers/report-fixture.js';

const URL = 'https://api.example.com';
const TAG = 'keysim-20260102T030405-1';

function withResources(resources: ResourcesSection, target: RunReport['target'] = { kind: 'live', url: URL }): RunReport {
  return { ...minimalReport({ operations: [{ operation: 'keys.verifyKey', latenciesMs: [1, 2], codes: { VALID: 2 } }] }), target, resources };
}

const left: ResourcesSection = {
  tag: TAG,
  disposal: 'cleaned',
  kinds: [
    { kind: 'apis', created: 1, deleted: 0, left: 1, leftExpected: 1 },
    { kind: 'keys', created: 300, deleted: 290, left: 10, leftExpected: 0 },
    { kind: 'identities', created: 100, deleted: 100, left: 0, leftExpected: 0 },
  ],
  unexpectedlyLeft: 10,
  cleanupCommand: `keysim cleanup --target ${URL} --tag ${TAG}`,
  notes: ['could not delete key key_1: keys.deleteKey answered 500'],
};

const clean: ResourcesSection = {
  tag: TAG,
  disposal: 'cleaned',
  kinds: [
    { kind: 'apis', created: 1, deleted: 0, left: 1, leftExpected: 1 },
    { kind: 'overrides', created: 2, deleted: 2, left: 0, leftExpected: 0 },
    { kind: 'namespaces', created: 1, deleted: 1, left: 0, leftExpected: 0 },
  ],
  unexpectedlyLeft: 0,
  notes: [],
};

describe('the resources section', () => {
  it('round-trips through report.json; a report without it (written before) still reads', () => {
    const report = withResources(left, { kind: 'simulator', url: URL, remote: true });
    const parsed = parseReport(renderJson(report));
    expect(parsed.ok && parsed.report).toEqual(report);
    const older = parseReport(renderJson(minimalReport({ operations: [] })));
    expect(older.ok).toBe(true);
  });

  it('a malformed section is refused, naming the field', () => {
    const text = renderJson(withResources(left)).replace('"unexpectedlyLeft": 10', '"unexpectedlyLeft": -1');
    const parsed = parseReport(text);
    expect(parsed.ok).toBe(false);
    expect(parsed.ok ? '' : parsed.error).toContain('resources.unexpectedlyLeft');
  });

  it('Markdown: per kind created, deleted, left, why; what is left that should not be, and the command', () => {
    const md = renderMarkdown(withResources(left));
    expect(md).toContain('## Resources');
    expect(md).toContain(
      '❌ 10 resources were left on the target that should have been deleted. Delete them with: keysim cleanup --target https://api.example.com --tag keysim-20260102T030405-1',
    );
    expect(md).toContain('| keys | 300 | 290 | **10** | should have been deleted |');
    expect(md).toContain('| APIs | 1 | 0 | 1 | no delete operation: they stay, empty |');
    expect(renderMarkdown(withResources(clean))).toContain('Everything the run created was deleted, but for 1 empty APIs');
  });

  it('HTML: the section, its table and the command, escaped', () => {
    const html = renderHtml(withResources(left));
    expect(html).toContain('<h2 id="h-resources">Resources <span class="status failed">LEFT BEHIND</span></h2>');
    expect(html).toContain('keysim cleanup --target https://api.example.com --tag keysim-20260102T030405-1');
    expect(html).toMatch(/<td>keys<\/td><td class="num">300<\/td><td class="num">290<\/td><td class="num error">10<\/td>/);
    expect(renderHtml(withResources({ ...clean, notes: ['<script>x</script>'] }))).toContain('&lt;script&gt;');
  });

  it('the summary: a FAIL line with the counts and the command when something is left; pass when nothing; a remote simulator named so', () => {
    const summary = renderSummary(withResources(left));
    expect(summary).toContain(
      `FAIL  resources on live ${URL} (tag ${TAG}): APIs 1 created, 0 deleted, 1 left; keys 300 created, 290 deleted, 10 left; identities 100 created, 100 deleted, 0 left`,
    );
    expect(summary).toContain(`Delete them with: keysim cleanup --target ${URL} --tag ${TAG}`);
    expect(renderSummary(withResources(clean, { kind: 'simulator', url: URL, remote: true }))).toContain(`pass  resources on simulator (remote) ${URL}`);
    const kept = renderSummary(
      withResources({ ...left, disposal: 'kept', unexpectedlyLeft: 0, kinds: left.kinds.map((k) => ({ ...k, leftExpected: k.left })) }),
    );
    expect(kept).toContain('note  resources');
    expect(kept).toContain('What the run had not deleted was kept (--keep): 11 resources. Delete them with: keysim cleanup');
  });
});
