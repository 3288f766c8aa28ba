/**
 * `keysim check` as a child process (built: test/helpers/cli-build.ts), on histories written with
 * HistoryWriter: a clean run folder exits 0, a violating history exits 100 with the witnesses
 * and their times, and neither prints a key; a bad or missing file exits 2 with a clear message.
 * Its witness lines word an operation as the report's witness rows do.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { describeEvent } from '../../src/cli/commands/check.js';
import { EXIT } from '../../src/cli/exit-codes.js';
import { HISTORY_FILE, HISTORY_FORMAT, HISTORY_VERSION, type HistoryEvent, HistoryWriter } from '../../src/load/history/history.js';
import { witnessOperation } from '../../src/load/invariants/invariants-section.js';
import { cli } from '../helpers/cli.js';

const T0 = Date.UTC(2027, 0, 15, 12);
/** What a createKey answer carries once: it must never reach a history or the verdict. */
const PLAINTEXT = 'ks_9wQpZt3LmVxRb7NcYhKd2A';

/** `keysim` as a child process (the built CLI, the operator's root key dropped from its environment). */
const keysim = (args: string[]) => cli(args);

let dir: string;
let cleanFolder: string;
let violatingFile: string;

/** A drain of `budget` credits by sequential verifications; `extraValid` more VALID answers than allowed. */
async function writeHistory(file: string, budget: number, verifications: number, extraValid: number): Promise<void> {
  const writer = await HistoryWriter.create(file, { run: { scenario: 'credits-drain', seed: 3, target: 'simulator' } });
  let t = T0;
  writer.recordCall({
    op: 'keys.createKey',
    body: { apiId: 'api_1', credits: { remaining: budget } },
    invokeMs: t,
    completeMs: t + 2,
    serviceInvokeMs: t,
    serviceCompleteMs: t,
    response: { status: 200, body: { meta: { requestId: 'req_1' }, data: { keyId: 'key_cli', key: PLAINTEXT } } },
  });
  let balance = budget;
  for (let i = 0; i < verifications; i++) {
    t += 10;
    const valid = balance > 0 || i < budget + extraValid;
    if (balance > 0) balance--;
    writer.recordCall({
      op: 'keys.verifyKey',
      body: { key: PLAINTEXT, credits: { cost: 1 } },
      invokeMs: t,
      completeMs: t + 3,
      serviceInvokeMs: t,
      serviceCompleteMs: t,
      response: { status: 200, body: { data: { valid, code: valid ? 'VALID' : 'USAGE_EXCEEDED', keyId: 'key_cli', credits: balance } } },
    });
  }
  writer.recordCall({
    op: 'ratelimit.limit',
    body: { namespace: 'ns', identifier: 'user-1', limit: 5, duration: 60_000 },
    invokeMs: t + 20,
    completeMs: t + 22,
    serviceInvokeMs: t + 20,
    serviceCompleteMs: t + 20,
    response: { status: 200, body: { data: { limit: 5, remaining: 4, reset: T0 + 60_000, success: true } } },
  });
  await writer.close();
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'keysim-check-cli-'));
  cleanFolder = join(dir, '20270115T120000Z-credits-drain');
  mkdirSync(cleanFolder);
  await writeHistory(join(cleanFolder, HISTORY_FILE), 3, 5, 0);
  violatingFile = join(dir, 'violating.jsonl.gz');
  await writeHistory(violatingFile, 3, 6, 1);
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('keysim check', () => {
  test('the histories themselves hold no key plaintext', () => {
    for (const file of [join(cleanFolder, HISTORY_FILE), violatingFile]) expect(gunzipSync(readFileSync(file)).toString('utf8')).not.toContain(PLAINTEXT);
  });

  test('a clean run folder: exit 0, every invariant listed as passed', async () => {
    const result = await keysim(['check', cleanFolder]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(EXIT.ok);
    expect(result.stdout).toContain(`history: ${join(cleanFolder, HISTORY_FILE)} (credits-drain, seed 3, simulator)`);
    expect(result.stdout).toMatch(/7 operations; checked 1 key, 5 verifications, 1 rate-limit decision$/m);
    expect(result.stdout).toMatch(/credits\.no-over-spend\s+passed \(\d+ checks\)/);
    expect(result.stdout).toMatch(/ratelimit\.no-over-admission\s+passed \(1 checks\)/);
    expect(result.stdout).toContain('PASS (exit 0): all invariants hold');
    expect(result.stdout + result.stderr).not.toContain(PLAINTEXT);
  });

  test('a violating history: exit 100, the violated invariants with their witnesses and times, no secret', async () => {
    const result = await keysim(['check', violatingFile]);
    expect(result.code).toBe(EXIT.invariantViolated);
    expect(result.stdout).toMatch(/credits\.no-over-spend\s+VIOLATED \(1 subject\)/);
    expect(result.stdout).toMatch(/ratelimit\.no-over-admission\s+passed/);
    expect(result.stdout).toMatch(/key_cli: VALID #4 \(cost 1\) was granted although at most 0 credits could be left/);
    // Witness lines: the creation and the over-granted verification, with wall and service times.
    expect(result.stdout).toMatch(
      /#0 keys\.createKey credits 3 → key_cli\s+\[sent 2027-01-15T12:00:00\.000Z, answered \+2\.0 ms; service clock 2027-01-15T12:00:00\.000Z … /,
    );
    expect(result.stdout).toMatch(/#4 keys\.verifyKey key_cli cost 1 → VALID credits 0\s+\[sent 2027-01-15T12:00:00\.040Z, answered \+3\.0 ms/);
    expect(result.stdout).toMatch(/FAIL \(exit 100\): \d+ violations?/);
    expect(result.stdout + result.stderr).not.toContain(PLAINTEXT);
  });

  test('--json prints the same verdict as JSON', async () => {
    const result = await keysim(['check', violatingFile, '--json']);
    expect(result.code).toBe(EXIT.invariantViolated);
    const parsed = JSON.parse(result.stdout) as {
      passed: boolean;
      operations: number;
      violations: Array<{ invariant: string; witness: Array<{ seq: number }> }>;
    };
    expect(parsed.passed).toBe(false);
    expect(parsed.operations).toBe(8);
    expect(parsed.violations.some((v) => v.invariant === 'credits.no-over-spend' && v.witness.some((e) => e.seq === 4))).toBe(true);
    expect(result.stdout).not.toContain(PLAINTEXT);
  });

  test('a witness line words the request and the answer as the report does', () => {
    const events: HistoryEvent[] = [
      { seq: 9, op: 'keys.updateKey', invokeMs: T0, completeMs: T0 + 4, request: { keyId: 'key_cli', credits: null }, outcome: { status: 200 } },
      {
        seq: 10,
        op: 'ratelimit.limit',
        invokeMs: T0 + 5,
        completeMs: T0 + 6,
        serviceInvokeMs: T0 + 5,
        serviceCompleteMs: T0 + 5,
        request: { namespace: 'ns', identifier: 'user-1', limit: 5, duration: 60_000 },
        outcome: { status: 200, limit: 5, remaining: 0, reset: T0 + 60_000, success: false },
      },
      { seq: 11, op: 'keys.verifyKey', invokeMs: T0 + 7, completeMs: T0 + 5_007, request: { keyId: 'key_cli', cost: 2 }, outcome: 'unknown' },
    ];
    for (const e of events) {
      const row = witnessOperation(e);
      expect(describeEvent(e)).toContain(`#${e.seq} ${e.op} ${row.request} → ${row.outcome}  [sent `);
    }
    const [unlimited, denied, lost] = events.map(describeEvent);
    expect(unlimited).toBe('#9 keys.updateKey key_cli credits unlimited → 200  [sent 2027-01-15T12:00:00.000Z, answered +4.0 ms]');
    expect(denied).toBe(
      '#10 ratelimit.limit ns/user-1 limit 5/60000 ms cost 1 → remaining 0 denied limit 5 reset 2027-01-15T12:01:00.000Z  ' +
        '[sent 2027-01-15T12:00:00.005Z, answered +1.0 ms; service clock 2027-01-15T12:00:00.005Z … 2027-01-15T12:00:00.005Z]',
    );
    expect(lost).toBe('#11 keys.verifyKey key_cli cost 2 → unknown (no answer)  [sent 2027-01-15T12:00:00.007Z, given up +5000.0 ms]');
  });

  test('a live history: the verdict says which clock skew placed its wall-timed operations (the measured one, or --skew)', async () => {
    const live = join(dir, 'live.jsonl.gz');
    const writer = await HistoryWriter.create(live, { run: { scenario: 'smoke', seed: 1, target: 'live' }, wallSkewMs: 63 });
    writer.recordCall({
      op: 'ratelimit.limit',
      body: { namespace: 'ns', identifier: 'user-1', limit: 5, duration: 60_000 },
      invokeMs: T0 + 20,
      completeMs: T0 + 22,
      response: { status: 200, body: { data: { limit: 5, remaining: 4, reset: T0 + 60_000, success: true } } },
    });
    await writer.close();
    const [recorded, given] = await Promise.all([keysim(['check', live]), keysim(['check', live, '--skew', '5'])]);
    expect(recorded.code).toBe(EXIT.ok);
    expect(recorded.stdout).toContain(
      "note: Operations without service-clock times were placed at their wall times ± 63 ms of clock skew, the history's (measured or given when it was recorded).",
    );
    expect(given.code).toBe(EXIT.ok);
    expect(given.stdout).toContain('note: Operations without service-clock times were placed at their wall times ± 5 ms of clock skew, given (--skew).');
  });

  test('a bad line, a missing path and a folder without a history: exit 2 with a message that says what is wrong', async () => {
    const bad = join(dir, 'bad.jsonl.gz');
    writeFileSync(bad, gzipSync(`${JSON.stringify({ format: HISTORY_FORMAT, version: HISTORY_VERSION })}\n{"seq":0,"op":"keys.getKey"}\nnot json\n`));
    const emptyFolder = join(dir, 'no-history');
    mkdirSync(emptyFolder);
    // An --out folder given instead of its run folder (the set-up's `reports/setup`, say).
    const outFolder = join(dir, 'out-folder');
    mkdirSync(join(outFolder, 'run-1'), { recursive: true });
    writeFileSync(join(outFolder, 'run-1', HISTORY_FILE), '');
    const [badLine, missing, noHistory, parent] = await Promise.all([
      keysim(['check', bad]),
      keysim(['check', join(dir, 'nowhere')]),
      keysim(['check', emptyFolder]),
      keysim(['check', outFolder]),
    ]);
    expect(badLine.code).toBe(EXIT.usage);
    expect(badLine.stderr).toContain(`${bad}: line 2: invokeMs and completeMs are required`);
    expect(badLine.stdout).toBe('');
    expect(missing.code).toBe(EXIT.usage);
    expect(missing.stderr).toMatch(/nowhere does not exist: give a run folder/);
    expect(noHistory.code).toBe(EXIT.usage);
    expect(noHistory.stderr).toContain(`has no ${HISTORY_FILE}`);
    expect(noHistory.stderr).toContain('the run did not record a history');
    expect(parent.code).toBe(EXIT.usage);
    expect(parent.stderr).toContain(`but its run folder ${join(outFolder, 'run-1')} has one: give the run folder`);
  });
});
