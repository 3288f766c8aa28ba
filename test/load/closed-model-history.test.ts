/**
 * Histories in the closed model (autocannon): every load request is recorded with its own answer,
 * or 'unknown' when it got none (a dropped connection, still in flight at the phase's end), and
 * the invariants are checked over it like an open-model history. Runs are 2 s of real time.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { SCENARIOS } from '../../scenarios/index.js';
import type { FaultsConfig } from '../../src/http/faults.js';
import { judgeInvariants } from '../../src/load/invariants/judge.js';
import { type HistoryEvent, readHistory } from '../../src/load/history/history.js';
import { runScenario } from '../../src/load/run/runner.js';
import { type LoadSettings, type Scenario, defineScenario } from '../../src/load/scenario/scenario.js';
import { type Target, liveTarget, startEmbeddedSimulator } from '../../src/load/target/target.js';
import { startStubServer } from '../helpers/load.js';

const CONNECTIONS = 4;
const CLOSED: Partial<LoadSettings> = { model: 'closed', connections: CONNECTIONS, pipelining: 1, durationMs: 2_000, warmupMs: 0, timeoutMs: 5_000 };

async function runClosed(scenario: Scenario<unknown>, target: Target, settings: LoadSettings) {
  const historyPath = join(mkdtempSync(join(tmpdir(), 'keysim-closed-history-')), 'history.jsonl.gz');
  const report = await runScenario({ scenario, target, settings, seed: 11, thresholds: [], keep: false, keysimVersion: 'test', historyPath });
  const { events } = await readHistory(historyPath);
  return { report, events, verdict: judgeInvariants(events) };
}

async function creditsDrainClosed(faults?: FaultsConfig) {
  const scenario = SCENARIOS['credits-drain'] as Scenario<unknown>;
  const target = await startEmbeddedSimulator({ seed: 5, ...(faults === undefined ? {} : { faults }) });
  try {
    const settings = {
      rate: 200,
      connections: 1,
      pipelining: 1,
      durationMs: 0,
      warmupMs: 0,
      timeoutMs: 0,
      model: 'open',
      ...scenario.defaults,
      ...CLOSED,
    } as LoadSettings;
    return await runClosed(scenario, target, settings);
  } finally {
    await target.close();
  }
}

/** Every sequence number handed out is in the history once: no request was left out. */
function expectContiguousSeqs(events: readonly HistoryEvent[]): void {
  const seqs = events.map((e) => e.seq).sort((a, b) => a - b);
  expect(seqs).toEqual(seqs.map((_, i) => i));
}

const verifications = (events: readonly HistoryEvent[]) => events.filter((e) => e.op === 'keys.verifyKey');
const unknowns = (events: readonly HistoryEvent[]) => events.filter((e) => e.outcome === 'unknown');

describe('closed-model histories', () => {
  test('credits-drain on a correct simulator: every load request recorded with its answer, every invariant holds', async () => {
    const { report, events, verdict } = await creditsDrainClosed();
    expect(report.settings.model).toBe('closed');
    expect(report.notes.join(' ')).not.toMatch(/No history was recorded/);
    expectContiguousSeqs(events);
    const answered = verifications(events).filter((e) => e.outcome !== 'unknown');
    expect(answered.length).toBe(report.operations.find((o) => o.operation === 'keys.verifyKey')?.requests);
    expect(answered.length).toBeGreaterThan(100);
    // Only the requests still in flight when autocannon stopped are without an answer.
    expect(unknowns(events).length).toBeLessThanOrEqual(CONNECTIONS);
    expect(unknowns(events).every((e) => e.op === 'keys.verifyKey')).toBe(true);
    expect(verifications(events).every((e) => e.serviceInvokeMs !== undefined && e.completeMs >= e.invokeMs)).toBe(true);
    expect(JSON.stringify(events)).not.toMatch(/"key":"/);
    expect(verdict.violations).toEqual([]);
    expect(verdict.passed).toBe(true);
  });

  test('credits-drain with over-admission injected: the over-spend invariant is violated', async () => {
    const { events, verdict } = await creditsDrainClosed({ overAdmitRate: 0.5 });
    expectContiguousSeqs(events);
    expect(verdict.passed).toBe(false);
    expect(verdict.invariants.find((i) => i.id === 'credits.no-over-spend')?.passed).toBe(false);
  });

  test('credits-drain on a target that drops connections: the lost requests are unknown, and the history is still judged clean', async () => {
    const { events, verdict } = await creditsDrainClosed({ dropRate: 0.2, operations: ['keys.verifyKey'] });
    expectContiguousSeqs(events);
    const lost = unknowns(verifications(events)).length;
    const all = verifications(events).length;
    expect(all).toBeGreaterThan(100);
    // About a fifth is dropped: far more than the few requests in flight at the end.
    expect(lost).toBeGreaterThan(all / 10);
    expect(verdict.violations).toEqual([]);
    expect(verdict.passed).toBe(true);
  });

  test('every answer is recorded against the request it answers, across dropped connections', async () => {
    // The stub echoes the x-keysim-seq header as the key id, and drops a fifth of the connections unanswered.
    let drops = 0;
    let highestSeq = -1;
    const server = await startStubServer((req, res) => {
      const seq = req.headers['x-keysim-seq'];
      if (typeof seq === 'string') highestSeq = Math.max(highestSeq, Number(seq));
      if (req.url === '/v2/keys.verifyKey' && seq !== undefined && drops < 1_000 && Math.random() < 0.2) {
        drops++;
        res.destroy();
        return;
      }
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ meta: { requestId: 'req_x' }, data: { code: 'VALID', valid: true, keyId: `key_${String(seq)}` } }));
    });
    try {
      const scenario = defineScenario<undefined>({
        name: 'inline-seq-echo',
        description: 'Verifications against a stub that echoes the sequence number',
        setup: async () => undefined,
        mix: [{ weight: 1, build: () => ({ op: 'keys.verifyKey', body: { key: 'k' } }) }],
      });
      const settings = { rate: 50, ...CLOSED } as LoadSettings;
      const { events } = await runClosed(scenario as unknown as Scenario<unknown>, liveTarget(server.url, 'root_x_12345678'), settings);
      expectContiguousSeqs(events);
      // The requests in flight when the phase ended are in it too (they have the highest seqs).
      expect(Math.max(...events.map((e) => e.seq))).toBeGreaterThanOrEqual(highestSeq);
      const answered = events.filter((e): e is HistoryEvent & { outcome: { keyId?: string } } => e.outcome !== 'unknown');
      expect(answered.length).toBeGreaterThan(100);
      expect(drops).toBeGreaterThan(10);
      expect(unknowns(events).length).toBeGreaterThanOrEqual(drops);
      expect(unknowns(events).length).toBeLessThanOrEqual(drops + CONNECTIONS);
      expect(answered.filter((e) => e.outcome.keyId !== `key_${e.seq}`).map((e) => `#${e.seq} answered as ${String(e.outcome.keyId)}`)).toEqual([]);
    } finally {
      await server.kill();
    }
  });
});
