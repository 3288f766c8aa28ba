/**
 * A live target with a fixed-window limiter, end to end: real HTTP on loopback, the runner with a
 * history, the skew measured from the target's Date header, then the checker. A scenario sends a
 * burst of concurrent ratelimit.limit requests at the limit late in one window and another early
 * in the next. Before, such a target passed: the checker counted only admissions answered before
 * a request was sent, and with a fixed second of skew it could not tell where in the window an
 * answer fell. The same traffic against the real engine (a sliding window) behind the same HTTP
 * server is clean.
 *
 * Windows are 4 s long so that the bursts land where they should even on a busy machine: the
 * first one needs only to be answered within a second, the second within about three.
 */
import { type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, test } from 'vitest';
import { readHistory } from '../../src/load/history/history.js';
import { runScenario } from '../../src/load/run/runner.js';
import { type Scenario, defineScenario } from '../../src/load/scenario/scenario.js';
import { liveTarget } from '../../src/load/target/target.js';
import { makeEngine, unwrap } from '../helpers/engine.js';
import { FixedWindowLimiter, type LimitAnswer } from '../helpers/fixed-window-limiter.js';
import { loadSettings } from '../helpers/load.js';

const DURATION = 4_000;
const LIMIT = 5;

type Decide = (body: { identifier: string; limit: number; duration: number; cost?: number }) => LimitAnswer;

/** A service on 127.0.0.1 that answers ratelimit.limit with `decide` on the real clock, and 200 to anything else. */
async function startService(decide: Decide): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let text = '';
    req.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
    req.on('end', () => {
      const data = req.url === '/v2/ratelimit.limit' ? decide(JSON.parse(text) as Parameters<Decide>[0]) : [];
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ meta: { requestId: 'req_edge' }, data }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function fixedWindow(): Decide {
  const limiter = new FixedWindowLimiter();
  return (body) => limiter.limit(body, Date.now());
}

/** The engine's sliding window, its clock set to the real one at every request. */
function slidingWindow(): Decide {
  const fx = makeEngine({ startMs: Date.now() });
  unwrap(fx.engine.admin.createNamespace(fx.workspaceId, 'ns'));
  return (body) => {
    fx.clock.set(Math.max(fx.clock.now(), Date.now()));
    return unwrap(fx.engine.ratelimit.limit(fx.rootKey, { namespace: 'ns', ...body })) as LimitAnswer;
  };
}

/** Waits for a window edge at least 1.2 s away; a burst 1 s before it, another 150 ms after it. */
const edgeBursts: Scenario<unknown> = defineScenario<undefined>({
  name: 'edge-bursts',
  description: 'a burst at the limit on each side of a window edge',
  setup: async (ctx) => {
    let edge = Math.ceil(Date.now() / DURATION) * DURATION;
    if (edge - Date.now() < 1_200) edge += DURATION;
    const burst = () =>
      Promise.all(
        Array.from({ length: LIMIT }, () => ctx.api.call('ratelimit.limit', { namespace: 'ns', identifier: 'user-1', limit: LIMIT, duration: DURATION })),
      );
    await sleep(edge - 1_000 - Date.now());
    await burst();
    await sleep(Math.max(0, edge + 150 - Date.now()));
    await burst();
  },
  mix: [{ weight: 1, build: () => ({ op: 'identities.listIdentities', body: { limit: 1 } }) }],
}) as unknown as Scenario<unknown>;

async function runAgainst(decide: Decide): Promise<{ report: Awaited<ReturnType<typeof runScenario>>; skewMs: number | undefined }> {
  const service = await startService(decide);
  try {
    const historyPath = join(mkdtempSync(join(tmpdir(), 'keysim-live-edge-')), 'history.jsonl.gz');
    const report = await runScenario({
      scenario: edgeBursts,
      target: liveTarget(service.url, 'root_x_12345678'),
      settings: loadSettings({ rate: 5, durationMs: 200, warmupMs: 0 }),
      seed: 1,
      thresholds: [],
      keep: false,
      keysimVersion: 'test',
      historyPath,
    });
    return { report, skewMs: (await readHistory(historyPath)).header.wallSkewMs };
  } finally {
    await service.close();
  }
}

describe('a live target at a window edge', () => {
  test('a fixed-window limiter instead of the sliding window is flagged on a live target (measured skew, concurrent bursts)', async () => {
    const { report, skewMs } = await runAgainst(fixedWindow());
    expect(skewMs).toBeDefined();
    const section = report.invariants;
    expect(section?.verdict, JSON.stringify(section?.notes)).toBe('violated');
    const v = section?.violations.find((x) => x.invariant === 'ratelimit.no-over-admission');
    expect(v?.subject).toBe('ns/user-1');
    expect(v?.message).toMatch(/still weighed at least [1-9]/);
    // The witness holds requests from both bursts: seqs 0–4 before the edge, 5–9 after.
    const seqs = v?.witness.map((w) => w.seq) ?? [];
    expect(seqs.some((s) => s < LIMIT)).toBe(true);
    expect(seqs.some((s) => s >= LIMIT)).toBe(true);
  }, 30_000);

  test('the same traffic against the sliding window is clean', async () => {
    const { report } = await runAgainst(slidingWindow());
    expect(report.invariants?.verdict, JSON.stringify(report.invariants?.violations)).toBe('clean');
    expect(report.invariants?.checked.rateLimitChecks).toBeGreaterThanOrEqual(2 * LIMIT);
  }, 30_000);
});
