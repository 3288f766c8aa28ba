/**
 * The live target's clock skew, measured from its Date headers instead of assumed to be a second:
 * on a virtual clock, whatever the offset and the round trips, the bound always holds the true
 * offset (sound) and comes within about a round trip of it (tight); probes that disagree, or no
 * Date header, say so; against a real HTTP server on loopback (same clock) the measurement holds
 * zero; and a live run's history records the measured skew, its report says how it was measured,
 * and the run's --skew replaces the measurement.
 */
import fc from 'fast-check';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import {
  SKEW_MARGIN_MS,
  type SkewProbe,
  SkewUnmeasurable,
  liveRunSkew,
  measureSkew,
  remeasuredRunSkew,
  skewFromProbes,
  targetProbe,
} from '../../src/load/run/clock-skew.js';
import { readHistory } from '../../src/load/history/history.js';
import { runScenario } from '../../src/load/run/runner.js';
import { type Scenario, defineScenario } from '../../src/load/scenario/scenario.js';
import { liveTarget } from '../../src/load/target/target.js';
import { loadSettings, startStubServer } from '../helpers/load.js';
import { assertProperty } from '../helpers/property.js';

/** A virtual clock: sleeping moves it, nothing waits for real. */
class VirtualClock {
  constructor(public ms: number) {}
  now = (): number => this.ms;
  sleep = async (ms: number): Promise<void> => {
    this.ms += ms;
  };
}

/** A target whose clock is `offsetMs` ahead of ours; each request takes `trip()` ms and is stamped at a random point of it. */
function virtualTarget(clock: VirtualClock, offsetMs: number, trip: () => { ms: number; at: number }): () => Promise<SkewProbe> {
  return async () => {
    const { ms, at } = trip();
    const sentMs = clock.ms;
    const serviceMs = sentMs + at * ms + offsetMs;
    clock.ms += ms;
    return { sentMs, receivedMs: clock.ms, dateMs: Math.floor(serviceMs / 1000) * 1000 };
  };
}

describe('measured skew', () => {
  test('always holds the true offset, and comes within about a round trip of it', async () => {
    await assertProperty(
      fc.asyncProperty(
        fc.double({ min: -5_000, max: 5_000, noNaN: true }),
        fc.double({ min: 0.1, max: 40, noNaN: true }),
        fc.array(fc.tuple(fc.double({ min: 0, max: 1, noNaN: true }), fc.double({ min: 0, max: 1, noNaN: true })), { minLength: 32, maxLength: 32 }),
        fc.integer({ min: 1_700_000_000_000, max: 1_900_000_000_000 }),
        async (offsetMs, maxTripMs, draws, startMs) => {
          const clock = new VirtualClock(startMs + 0.25);
          let i = 0;
          const trip = () => {
            const [a, b] = draws[i++ % draws.length] as [number, number];
            return { ms: 0.05 + a * maxTripMs, at: b };
          };
          const m = await measureSkew(virtualTarget(clock, offsetMs, trip), { clock });
          expect(m.offsetLoMs).toBeLessThanOrEqual(offsetMs);
          expect(m.offsetHiMs).toBeGreaterThan(offsetMs);
          expect(m.skewMs).toBeGreaterThanOrEqual(Math.abs(offsetMs));
          // Twelve probes a second apart narrow it to ~87 ms; three bisections to ~11 ms, plus a round trip.
          expect(m.skewMs - Math.abs(offsetMs)).toBeLessThanOrEqual(SKEW_MARGIN_MS + 2 * maxTripMs + 25);
          expect(m.method).toMatch(/^measured: 15 requests' Date headers/);
        },
      ),
      { numRuns: 200 },
    );
  });

  test('Date headers that contradict each other (several clocks) are not a measurement', () => {
    const probes: SkewProbe[] = [
      { sentMs: 10_000, receivedMs: 10_002, dateMs: 10_000 },
      { sentMs: 10_100, receivedMs: 10_102, dateMs: 12_000 },
    ];
    expect(() => skewFromProbes(probes)).toThrow(SkewUnmeasurable);
    expect(() => skewFromProbes(probes)).toThrow(/disagree/);
    expect(() => skewFromProbes([{ sentMs: 1, receivedMs: 2, dateMs: undefined }])).toThrow(/carried a Date header/);
  });

  test('against a real HTTP server on loopback (our own clock) the bound holds zero', async () => {
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"meta":{"requestId":"req_skew"},"data":[]}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const { probe, done } = targetProbe({ url: `http://127.0.0.1:${port}`, rootKey: 'root_x' }, 5_000);
      const m = await measureSkew(probe, { spread: 6, bisect: 1 }).finally(done);
      // Node refreshes its cached Date a little after each second: the margin covers that.
      expect(m.offsetLoMs - SKEW_MARGIN_MS).toBeLessThanOrEqual(0);
      expect(m.offsetHiMs + SKEW_MARGIN_MS).toBeGreaterThan(0);
      expect(m.skewMs).toBeGreaterThanOrEqual(SKEW_MARGIN_MS);
      expect(m.probes).toBe(7);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe('measured again after the run', () => {
  test('a target whose clock drifted beyond the bound during the run gets the wider bound, and the report says so', async () => {
    let shiftMs = 0;
    const server = createServer((_req, res) => {
      // The Date header as a server whose clock is `shiftMs` ahead would send it.
      res.setHeader('date', new Date(Date.now() + shiftMs).toUTCString());
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"meta":{"requestId":"req_skew"},"data":[]}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const target = { url: `http://127.0.0.1:${port}`, rootKey: 'root_x' };
      const measure = { spread: 6, bisect: 1 };
      const measured = await liveRunSkew(target, { timeoutMs: 5_000, fallbackMs: 1_000, plannedMs: 0, measure });
      expect(measured.measured).toBe(true);
      // No drift: a bound of 1.5 s stands (one probe alone bounds the offset by a second plus its round trip).
      const start = { ...measured, wallSkewMs: 1_500 };
      expect(await remeasuredRunSkew(target, start, { timeoutMs: 5_000, measure })).toBe(start);
      shiftMs = 3_000;
      const end = await remeasuredRunSkew(target, start, { timeoutMs: 5_000, measure });
      expect(end.wallSkewMs).toBeGreaterThanOrEqual(3_000);
      expect(end.note).toMatch(
        new RegExp(
          `wider than the bound the history was recorded with .*, so the invariants were checked with ±${end.wallSkewMs} ms; re-check the saved history with keysim check --skew ${end.wallSkewMs}\\.$`,
        ),
      );
      // A bound given by the user is not second-guessed.
      const given = await liveRunSkew(target, { given: 40, timeoutMs: 5_000, fallbackMs: 1_000, plannedMs: 0 });
      expect(await remeasuredRunSkew(target, given, { timeoutMs: 5_000, measure })).toBe(given);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

/** A short, light load on a stub that answers 200 to everything: enough for a history. */
function idleScenario(): Scenario<unknown> {
  return defineScenario<undefined>({
    name: 'skew-probe',
    description: 'a few verifications',
    setup: async () => undefined,
    mix: [{ weight: 1, build: () => ({ op: 'keys.verifyKey', body: { key: 'k' } }) }],
  }) as unknown as Scenario<unknown>;
}

describe('a live run with a history', () => {
  test('the live skew is measured, not a fixed second: recorded in the history header and said in the report', async () => {
    const server = await startStubServer();
    try {
      const historyPath = join(mkdtempSync(join(tmpdir(), 'keysim-skew-')), 'history.jsonl.gz');
      const report = await runScenario({
        scenario: idleScenario(),
        target: liveTarget(server.url, 'root_x_12345678'),
        settings: loadSettings({ rate: 1, durationMs: 200, warmupMs: 0 }),
        seed: 1,
        thresholds: [],
        keep: false,
        keysimVersion: 'test',
        historyPath,
      });
      const { header } = await readHistory(historyPath);
      expect(header.wallSkewMs).toBeDefined();
      expect(header.wallSkewMs).toBeGreaterThanOrEqual(SKEW_MARGIN_MS);
      expect(report.invariants?.notes.join('\n')).toMatch(
        new RegExp(
          `Clock skew of the live target: ±${header.wallSkewMs} ms, measured: \\d+ requests' Date headers .* margin, \\+ 7 ms for drift \\(100 ppm over the run\\)\\.`,
        ),
      );
    } finally {
      await server.kill();
    }
  });

  test("the run's --skew replaces the measurement", async () => {
    const server = await startStubServer();
    try {
      const historyPath = join(mkdtempSync(join(tmpdir(), 'keysim-skew-')), 'history.jsonl.gz');
      const report = await runScenario({
        scenario: idleScenario(),
        target: liveTarget(server.url, 'root_x_12345678'),
        settings: loadSettings({ rate: 1, durationMs: 200, warmupMs: 0 }),
        seed: 1,
        thresholds: [],
        keep: false,
        keysimVersion: 'test',
        historyPath,
        wallSkewMs: 250,
      });
      expect((await readHistory(historyPath)).header.wallSkewMs).toBe(250);
      expect(report.invariants?.notes.join('\n')).toMatch(/Clock skew of the live target: 250 ms, as given \(--skew\), not measured\./);
    } finally {
      await server.kill();
    }
  });
});
