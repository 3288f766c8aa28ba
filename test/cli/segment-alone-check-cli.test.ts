/**
 * `keysim check` of one segment's history alone judges it as the segment judged itself
 * (docs/checking.md#one-segments-own-verdict): a rate-limit denial that only the other segments'
 * admissions explain is left to the verdict across segments (exit 0, and the note says so), while
 * the same history recorded as a whole run is a false denial (exit 100).
 */
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes.js';
import { type HistoryEvent, type HistoryHeader, HistoryWriter } from '../../src/load/history/history.js';
import { cleanUpCli, cli, tempDir } from '../helpers/cli.js';

afterAll(cleanUpCli);

const T0 = Date.UTC(2027, 0, 15, 12);
const TAG = 'keysim-20270115T120000-3';

/** Two admissions and a denial on a limit of 3 per minute: a false denial unless others were admitted too. */
function events(): HistoryEvent[] {
  const limit = (seq: number, at: number, success: boolean): HistoryEvent => ({
    seq,
    op: 'ratelimit.limit',
    invokeMs: T0 + at,
    completeMs: T0 + at + 2,
    serviceInvokeMs: T0 + at,
    serviceCompleteMs: T0 + at + 2,
    request: { namespace: 'ns', identifier: 'user-1', limit: 3, duration: 60_000 },
    outcome: { status: 200, limit: 3, remaining: 0, reset: T0 + 60_000, success },
  });
  return [limit(0, 0, true), limit(1, 10, true), limit(2, 20, false)];
}

async function write(path: string, run: NonNullable<HistoryHeader['run']>): Promise<string> {
  const writer = await HistoryWriter.create(path, { run, host: 'loadbox' });
  for (const e of events()) writer.record(e);
  await writer.close();
  return path;
}

describe('keysim check of one segment alone', () => {
  test('a lone segment sharing a rate limit is not a false denial; the same history as a whole run is', { timeout: 120_000 }, async () => {
    const dir = tempDir();
    const base = { scenario: 'limits', seed: 3, target: 'simulator' as const, tag: TAG };
    const segment = await write(join(dir, 'segment.jsonl.gz'), { ...base, setUp: 'own', segment: { index: 0, count: 2 } });
    const whole = await write(join(dir, 'whole.jsonl.gz'), { ...base, setUp: 'own' });

    const alone = await cli(['check', segment]);
    expect(alone.code, alone.stdout + alone.stderr).toBe(EXIT.ok);
    expect(alone.stdout).toContain('Not judged in one segment (judged across segments by keysim merge / keysim check): ratelimit.no-false-denial (1 denials)');

    const run = await cli(['check', whole]);
    expect(run.code, run.stdout + run.stderr).toBe(EXIT.invariantViolated);
    expect(run.stdout).toMatch(/ratelimit\.no-false-denial\s+VIOLATED/);
  });
});
