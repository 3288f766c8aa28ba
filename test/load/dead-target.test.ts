/**
 * A dead target looks fast: refused connections entered the latency percentiles (p50 1.6 ms with
 * 82.5 % of the requests refused) and the runner fired at the dead address until the planned end.
 * Now latency counts answered requests only, and a target that stops answering ends the run early
 * with a verdict. The runs here fire at a real server on loopback that is killed mid-run.
 */
import { describe, expect, test } from 'vitest';
import { DeadTargetWatch, type TargetStoppedVerdict, describeTargetStopped } from '../../src/load/answers/dead-target.js';
import { TARGET_STOPPED_CHECK, runScenario } from '../../src/load/run/runner.js';
import { type Scenario, defineScenario } from '../../src/load/scenario/scenario.js';
import { liveTarget } from '../../src/load/target/target.js';
import { loadSettings, startStubServer } from '../helpers/load.js';

describe('DeadTargetWatch', () => {
  test('stops after windowMs of transport failures with no answer, and says what failed', () => {
    const verdicts: TargetStoppedVerdict[] = [];
    const watch = new DeadTargetWatch(1_000, 0, (v) => verdicts.push(v));
    watch.observe(100, undefined);
    watch.observe(600, 'refused');
    watch.observe(1_599, 'refused');
    expect(verdicts).toEqual([]);
    watch.observe(1_600, 'reset');
    expect(verdicts).toHaveLength(1);
    expect(verdicts[0]).toMatchObject({ lastAnswerMs: 100, firstFailureMs: 600, windowMs: 1_000, failures: { refused: 2, reset: 1, timeout: 0, other: 0 } });
    // Judged once.
    watch.observe(5_000, 'refused');
    expect(verdicts).toHaveLength(1);
    const text = describeTargetStopped(verdicts[0] as TargetStoppedVerdict, 0, 60_000);
    expect(text).toMatch(/stopped answering/);
    expect(text).toMatch(
      /no request got an answer for 1\.5 s, and for 1\.0 s \(--dead-after 1 s\) every request that ended failed at the transport level \(1 reset, 2 refused\)/,
    );
    expect(text).toMatch(/--dead-after off/);
  });

  test('any answer, even a 500, proves the target alive and restarts the window', () => {
    let stopped = false;
    const watch = new DeadTargetWatch(1_000, 0, () => (stopped = true));
    for (let t = 0; t < 10_000; t += 100) watch.observe(t, t % 900 === 0 ? undefined : 'timeout');
    expect(stopped).toBe(false);
  });

  test("a proxy's page that is not the service's JSON (a 200 HTML page) is not a dead target: something answered", () => {
    // Seen behind nginx answering some verifications with an HTML page: two such pages 8 s apart in
    // a sparse scenario ended the run as "target stopped" (exit 96).
    let stopped = false;
    const watch = new DeadTargetWatch(5_000, 0, () => (stopped = true));
    watch.observe(0, 'other', 200);
    watch.observe(8_000, 'other', 200);
    watch.observe(16_000, 'other', 429);
    expect(stopped).toBe(false);
    // A transport error without any answer still counts, and a gateway's 502 page (not the service's answer) too.
    watch.observe(17_000, 'reset');
    watch.observe(23_000, 'other', 502);
    expect(stopped).toBe(true);
  });

  test('a quiet spell (no request at all, e.g. a set-up step between phases) is no evidence: one failure after it does not stop the run', () => {
    let stopped = false;
    const watch = new DeadTargetWatch(1_000, 0, () => (stopped = true));
    watch.observe(100, undefined);
    watch.observe(60_000, 'reset');
    expect(stopped).toBe(false);
    watch.observe(60_500, undefined);
    watch.observe(61_000, 'reset');
    watch.observe(61_999, 'timeout');
    expect(stopped).toBe(false);
  });

  test('two dropped requests 5 s apart with nothing sent between them ended a run as "target stopped" (a quiet spell inside the streak is no evidence)', () => {
    // Seen behind nginx dropping some requests: ratelimit-live-edges lost two steady requests, waited
    // 5 s for a window edge without sending, and its next request failed too: exit 96.
    let stopped = false;
    const watch = new DeadTargetWatch(5_000, 0, () => (stopped = true));
    watch.observe(1_000, undefined, 200, 990);
    watch.observe(1_010, 'reset', undefined, 1_000);
    watch.observe(1_020, 'reset', undefined, 1_005);
    // Nothing sent for 5 s; then one more request, lost too.
    watch.observe(6_100, 'reset', undefined, 6_090);
    expect(stopped).toBe(false);
    // Failures that cover the window without a quiet spell still stop the run.
    for (let t = 6_600; t <= 11_100; t += 500) watch.observe(t, 'refused', undefined, t - 1);
    expect(stopped).toBe(true);
  });

  test('a hung target whose requests all time out together (a closed model) is still judged stopped', () => {
    // Each round of requests is sent as the last one timed out: no quiet spell, only failures.
    let stopped = false;
    const watch = new DeadTargetWatch(5_000, 0, () => (stopped = true));
    watch.observe(10_000, 'timeout', undefined, 0);
    watch.observe(20_000, 'timeout', undefined, 10_000);
    expect(stopped).toBe(true);
  });

  test('answers alone never stop a run, however slow', () => {
    let stopped = false;
    const watch = new DeadTargetWatch(1_000, 0, () => (stopped = true));
    watch.observe(50_000, undefined);
    expect(stopped).toBe(false);
  });

  test('a window that is not a positive number is refused', () => {
    expect(() => new DeadTargetWatch(0, 0, () => undefined)).toThrow(RangeError);
    expect(() => new DeadTargetWatch(Number.NaN, 0, () => undefined)).toThrow(RangeError);
  });
});

const scenario = defineScenario<undefined>({
  name: 'inline-dead-target',
  description: 'Verifications at a target that is killed mid-run',
  setup: async () => undefined,
  mix: [{ weight: 1, build: () => ({ op: 'keys.verifyKey', body: { key: 'k' } }) }],
}) as unknown as Scenario<unknown>;

const PLANNED_MS = 300_000;

describe.each(['open', 'closed'] as const)('a dead target looks fast (%s model)', (model) => {
  test('the target killed mid-run: the run ends early with a verdict; latency counts answered requests only', async () => {
    const server = await startStubServer();
    // Killed once it has answered a few requests, whatever the machine's pace.
    const killer = setInterval(() => {
      if (server.paths.length >= 20) void server.kill();
    }, 20);
    try {
      const report = await runScenario({
        scenario,
        target: liveTarget(server.url, 'root_dead_target_0123456789'),
        settings: loadSettings({ model, rate: 50, connections: 2, durationMs: PLANNED_MS, warmupMs: 0, timeoutMs: 2_000 }),
        seed: 1,
        thresholds: [],
        keep: false,
        keysimVersion: '0.0.0-test',
        deadTargetMs: 1_000,
      });
      expect(report.status).toBe('failed');
      const check = report.checks.find((c) => c.name === TARGET_STOPPED_CHECK);
      expect(check?.passed).toBe(false);
      expect(check?.detail).toMatch(
        /The target stopped answering: no request got an answer for \d+\.\d s, and for \d+\.\d s \(--dead-after 1 s\) every request/,
      );
      expect(report.notes.join(' ')).toMatch(/stopped answering/);
      // It did not fire until the planned end (minutes away).
      expect(report.measuredMs).toBeLessThan(PLANNED_MS / 2);
      const o = report.overall;
      const failures = o.transportErrors.refused + o.transportErrors.reset + o.transportErrors.timeout + o.transportErrors.other;
      expect(failures).toBeGreaterThan(0);
      const answered = Object.values(o.statuses).reduce((a, b) => a + b, 0);
      expect(answered).toBeGreaterThanOrEqual(1);
      // Every request is counted, but only the answered ones have a latency.
      expect(o.requests).toBe(answered + failures);
      expect(o.latency.corrected.count).toBe(answered);
      expect(o.latency.uncorrected.count).toBe(answered);
    } finally {
      clearInterval(killer);
      await server.kill();
    }
  });
});

test('without a dead-target window the run does not end early for failures (the setting is honoured)', async () => {
  // Answers the reachability probe only; every request of the load has its connection cut.
  const probeOnly = await startStubServer((req, res) => {
    if (req.url === '/v2/identities.listIdentities')
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"meta":{"requestId":"req_probe"},"data":[]}');
    else res.socket?.destroy();
  });
  try {
    const report = await runScenario({
      scenario,
      target: liveTarget(probeOnly.url, 'root_dead_target_0123456789'),
      settings: loadSettings({ model: 'open', rate: 20, connections: 2, durationMs: 1_500, warmupMs: 0, timeoutMs: 1_000 }),
      seed: 1,
      thresholds: [],
      keep: false,
      keysimVersion: '0.0.0-test',
    });
    expect(report.status).toBe('completed');
    expect(report.checks.some((c) => c.name === TARGET_STOPPED_CHECK)).toBe(false);
    expect(report.overall.transportErrors.reset).toBeGreaterThan(0);
    expect(report.overall.latency.corrected.count).toBe(0);
  } finally {
    await probeOnly.kill();
  }
});
