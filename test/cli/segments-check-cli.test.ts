/**
 * The invariants across segments, end to end: a shared set-up and two segments spending the same
 * keys on one `keysim serve` are clean across segments (`keysim check` over the three histories,
 * `keysim merge --history`, and `keysim check` on the merged folder); histories of different runs
 * are refused (exit 2); a constructed pair that each segment alone finds clean but that over-spends
 * across them exits 100; and `run --workers` runs the setup once and the teardown once.
 * No pace is assumed: the segments start when they are ready (no --start-at), and nothing is timed.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes.js';
import { HISTORY_FILE, type HistoryEvent, type HistoryHeader, HistoryWriter, readHistory } from '../../src/load/history/history.js';
import type { RunReport } from '../../src/report/model.js';
import { cleanUpCli, cli, runFolders, tempDir } from '../helpers/cli.js';
import { keysOn, serveCli } from '../helpers/serve-cli.js';

afterAll(cleanUpCli);

const readReport = (folder: string) => JSON.parse(readFileSync(join(folder, 'report.json'), 'utf8')) as RunReport;
const judged: number[] = [EXIT.ok, EXIT.generatorLimited, EXIT.thresholdFailed];

/** Key ids granted (VALID) in a history. */
async function grantedKeys(file: string): Promise<Set<string>> {
  const { events } = await readHistory(file);
  return new Set(
    events.flatMap((e) =>
      e.op === 'keys.verifyKey' && e.outcome !== 'unknown' && e.outcome.code === 'VALID' && e.outcome.keyId !== undefined ? [e.outcome.keyId] : [],
    ),
  );
}

describe('keysim check across segments', () => {
  test('two segments spending the same keys of one shared set-up are clean across segments; another set-up is refused', { timeout: 300_000 }, async () => {
    const rootKey = 'root_segments_check_0123456789';
    const { url, env, stop } = await serveCli(rootKey);
    const dir = tempDir();
    const fixtures = join(dir, 'fixtures.json');
    const setup = await cli(
      ['run', 'verify-hot-keys', '--target', url, '--setup-only', '--fixtures', fixtures, '--history', '--quiet', '--out', join(dir, 'setup')],
      env,
    );
    expect(setup.code, setup.stderr).toBe(EXIT.ok);
    const common = [
      'run',
      'verify-hot-keys',
      '--target',
      url,
      '--fixtures',
      fixtures,
      '--history',
      '--no-oracle',
      '--rate',
      '40',
      '--duration',
      '2s',
      '--warmup',
      '0',
      '--quiet',
      '--yes',
      '--out',
      join(dir, 'parts'),
    ];
    const results = await Promise.all([0, 1].map((i) => cli([...common, '--segment', `${i}/2`], env)));
    for (const r of results) expect(judged, r.stdout + r.stderr).toContain(r.code);
    const [setupFolder] = runFolders(join(dir, 'setup'));
    // In segment order (the folders' names start with when each started, which may be either first).
    const segmentOf = (folder: string) => Number(/segment-(\d+)of/.exec(folder)?.[1]);
    const parts = runFolders(join(dir, 'parts')).sort((x, y) => segmentOf(x) - segmentOf(y));
    expect(parts).toHaveLength(2);

    // The set-up passed its keys' ids on (as digests), for the segments' unanswered verifications.
    expect((JSON.parse(readFileSync(fixtures, 'utf8')) as { keyIds?: unknown[] }).keyIds?.length).toBeGreaterThan(0);

    // The hot keys were spent by both segments: the check must see both to judge them.
    const [a, b] = await Promise.all(parts.map((p) => grantedKeys(join(p, HISTORY_FILE))));
    expect([...(a as Set<string>)].filter((k) => (b as Set<string>).has(k)).length).toBeGreaterThan(0);

    // The checks and the merge only read the histories, and the other set-up adds its own keys to the
    // simulator: independent, so they run side by side.
    const [across, merged, other, missing] = await Promise.all([
      cli(['check', setupFolder as string, ...parts], env),
      // keysim merge with the set-up's history: the merged report's invariants are the verdict across segments.
      cli(['merge', ...parts, '--history', setupFolder as string, '--out', join(dir, 'merged'), '--quiet'], env),
      // Another set-up of the same scenario: its tag is not the segments', so not one run.
      cli(
        ['run', 'verify-hot-keys', '--target', url, '--setup-only', '--fixtures', join(dir, 'other.json'), '--history', '--quiet', '--out', join(dir, 'other')],
        env,
      ),
      cli(['check', setupFolder as string, parts[0] as string], env),
    ]);
    expect(across.code, across.stdout + across.stderr).toBe(EXIT.ok);
    expect(across.stdout).toContain('combined from 3 histories: set-up, segment 0/2, segment 1/2');
    expect(across.stdout).toMatch(/credits\.no-over-spend\s+passed \(\d+ checks\)/);
    expect(across.stdout).toContain('PASS (exit 0): all invariants hold');

    expect(judged, merged.stdout + merged.stderr).toContain(merged.code);
    const report = readReport(join(dir, 'merged'));
    expect(report.invariants?.verdict).toBe('clean');
    expect(report.invariants?.notes.join(' ')).toMatch(/Combined from 3 histories \(set-up, segment 0\/2, segment 1\/2\)/);
    expect(report.invariants?.checked.keys).toBeGreaterThan(0);
    expect(other.code, other.stderr).toBe(EXIT.ok);
    expect(missing.code).toBe(EXIT.usage);
    expect(missing.stderr).toMatch(/segments 1\/2 of the plan are missing/);

    const [again, refused] = await Promise.all([
      // The merged folder holds the combined history: keysim check judges the same union from it,
      // and comes to the merged run's exit code (a busy machine's inconclusive pace included).
      cli(['check', join(dir, 'merged'), '--json'], env),
      cli(['check', runFolders(join(dir, 'other'))[0] as string, ...parts], env),
    ]);
    expect(again.code, again.stderr).toBe(merged.code);
    expect((JSON.parse(again.stdout) as { passed: boolean }).passed).toBe(true);
    expect((JSON.parse(again.stdout) as { header: HistoryHeader; operations: number }).header.combined).toEqual(['set-up', 'segment 0/2', 'segment 1/2']);
    expect(refused.code).toBe(EXIT.usage);
    expect(refused.stderr).toMatch(/cannot be checked together: .*their fixtures differ/);
    await stop();
  });

  test('an over-spend across two segments that each segment alone cannot see exits 100 with the witness named by segment', { timeout: 120_000 }, async () => {
    const dir = tempDir();
    const T0 = Date.UTC(2027, 0, 15, 12);
    const tag = 'keysim-20270115T120000-1';
    const run = (extra: Partial<NonNullable<HistoryHeader['run']>>) => ({ scenario: 'drain', seed: 1, target: 'simulator' as const, tag, ...extra });
    const valid = (seq: number, at: number): HistoryEvent => ({
      seq,
      op: 'keys.verifyKey',
      invokeMs: T0 + at,
      completeMs: T0 + at + 1,
      request: { keyId: 'key_shared' },
      outcome: { status: 200, code: 'VALID', valid: true, keyId: 'key_shared' },
    });
    const write = async (name: string, r: NonNullable<HistoryHeader['run']>, events: HistoryEvent[]) => {
      const path = join(dir, `${name}.jsonl.gz`);
      const writer = await HistoryWriter.create(path, { run: r, host: 'loadbox' });
      for (const e of events) writer.record(e);
      await writer.close();
      return path;
    };
    const setUp = await write('setup', run({ setUp: 'setup-only' }), [
      { seq: 0, op: 'keys.createKey', invokeMs: T0, completeMs: T0 + 1, request: { credits: { remaining: 3 } }, outcome: { status: 200, keyId: 'key_shared' } },
    ]);
    const seg0 = await write('seg0', run({ setUp: 'shared', segment: { index: 0, count: 2 } }), [valid(0, 10), valid(1, 30)]);
    const seg1 = await write('seg1', run({ setUp: 'shared', segment: { index: 1, count: 2 } }), [valid(0, 20), valid(1, 40)]);
    const result = await cli(['check', setUp, seg0, seg1]);
    expect(result.code, result.stdout + result.stderr).toBe(EXIT.invariantViolated);
    expect(result.stdout).toMatch(/credits\.no-over-spend\s+VIOLATED/);
    expect(result.stdout).toContain('(segment 1/2 #1) keys.verifyKey');
  });

  test('run --workers runs the setup once and the teardown once, after the segments', { timeout: 300_000 }, async () => {
    const rootKey = 'root_workers_setup_once_0123456789';
    const served = await serveCli(rootKey);
    const { url, stop } = served;
    // A short start margin for the workers: one that a busy machine started after it starts late and says so.
    const env = { ...served.env, KEYSIM_WORKERS_START_MARGIN: '2s' };
    expect(await keysOn(url, rootKey)).toBe(0);
    const out = tempDir();
    const result = await cli(
      [
        'run',
        'verify-hot-keys',
        '--workers',
        '2',
        '--target',
        url,
        '--history',
        '--rate',
        '20',
        '--duration',
        '1s',
        '--warmup',
        '0',
        '--quiet',
        '--yes',
        '--out',
        out,
      ],
      env,
    );
    expect(judged, result.stdout + result.stderr).toContain(result.code);
    const [folder] = runFolders(out);
    const setUp = readReport(join(folder as string, 'setup'));
    const created = setUp.resources?.kinds.find((k) => k.kind === 'keys')?.created ?? 0;
    // The set-up made the keys once and deleted them once …
    expect(created).toBeGreaterThan(0);
    expect(setUp.resources?.kinds.find((k) => k.kind === 'keys')).toMatchObject({ created, deleted: created, left: 0 });
    // … the segments made none and deleted none (they left the teardown to it) …
    const segments = runFolders(join(folder as string, 'segments')).map(readReport);
    expect(segments).toHaveLength(2);
    for (const s of segments) {
      expect(s.resources?.tag).toBe(setUp.resources?.tag);
      expect(s.resources?.kinds.find((k) => k.kind === 'keys')?.created ?? 0).toBe(0);
      expect(s.resources?.kinds.find((k) => k.kind === 'keys')?.deleted ?? 0).toBe(0);
    }
    // … the simulator holds none now, and the merged report's invariants were judged across the segments.
    expect(await keysOn(url, rootKey)).toBe(0);
    const report = readReport(folder as string);
    expect(report.totals.requests).toBe(20);
    expect(report.invariants?.verdict).toBe('clean');
    expect(report.invariants?.notes.join(' ')).toMatch(/Combined from 3 histories/);
    await stop();
  });
});
