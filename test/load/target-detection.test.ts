/**
 * keysim's own server is a simulator wherever it runs: a URL target that answers
 * `GET /_sim/health` and accepts the root key on its admin surface is a remote simulator; one that
 * answers 403 there (the key is not its operator's) is treated as live, with one line saying so;
 * anything else is live. Real servers on 127.0.0.1 port 0.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { SCENARIOS } from '../../scenarios/index.js';
import { createSimulator, type Simulator } from '../../src/http/simulator.js';
import { readHistory } from '../../src/load/history/history.js';
import { runScenario } from '../../src/load/run/runner.js';
import type { Scenario } from '../../src/load/scenario/scenario.js';
import { detectUrlTarget } from '../../src/load/target/target.js';
import { startLiveProxy, type LiveProxy, holdings } from '../helpers/counting-target.js';
import { startStubServer, unusedPort } from '../helpers/load.js';

const START_MS = Date.UTC(2028, 1, 28, 23, 59, 0);
let sim: Simulator;
let proxy: LiveProxy;

beforeAll(async () => {
  // The interface's behaviour: a namespace must exist before use (no creation on first use).
  // On the system clock with an offset (keysim serve --start …): its time runs, two years ahead.
  sim = await createSimulator({ clock: 'system', compat: 'interface', startMs: START_MS });
  proxy = await startLiveProxy(sim.url);
});

afterAll(async () => {
  await proxy.close();
  await sim.close();
});

describe('what a URL target is', () => {
  test('keysim serve over a URL, with its root key: a remote simulator with clock control', async () => {
    const { target, note } = await detectUrlTarget(`${sim.url}/`, sim.rootKey);
    expect(target).toMatchObject({ kind: 'simulator', remote: true, clockControl: true, url: sim.url });
    expect(note).toBeUndefined();
  });

  test('the same simulator behind a proxy that hides /_sim/*: a plain live target, as today', async () => {
    const { target, note } = await detectUrlTarget(proxy.url, sim.rootKey);
    expect(target).toMatchObject({ kind: 'live', clockControl: false });
    expect(target.remote).toBeUndefined();
    expect(note).toBeUndefined();
  });

  test("a simulator whose admin surface answers 403 (not this key's operator): live, said in one line", async () => {
    const stub = await startStubServer((req, res) => {
      req.resume();
      if (req.url === '/_sim/health') {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok","clock":0}');
      } else {
        res.writeHead(403, { 'content-type': 'application/json' }).end('{"error":{"detail":"not the operator"}}');
      }
    });
    try {
      const { target, note } = await detectUrlTarget(stub.url, 'root_someone_else_0001');
      expect(target.kind).toBe('live');
      expect(note).toMatch(/keysim simulator, but this root key is not its operator's.*403.*treated as a live deployment/);
      expect(note?.split('\n')).toHaveLength(1);
    } finally {
      await stub.kill();
    }
  });

  test('nothing listening: live (the reachability check then says why)', async () => {
    const { target } = await detectUrlTarget(`http://127.0.0.1:${await unusedPort()}`, 'root_x_12345678');
    expect(target.kind).toBe('live');
  });
});

describe("a remote simulator gets the simulator's treatment", () => {
  test(
    'smoke makes its namespace through the admin surface (a plain live target of the same service cannot), then deletes everything',
    { timeout: 120_000 },
    async () => {
      const { target } = await detectUrlTarget(sim.url, sim.rootKey);
      const before = holdings(sim);
      const settings = { rate: 20, connections: 2, pipelining: 1, durationMs: 500, warmupMs: 0, timeoutMs: 10_000, model: 'open' as const };
      const base = { scenario: SCENARIOS.smoke as Scenario<unknown>, settings, seed: 5, thresholds: [], keep: false, keysimVersion: '0.0.0-test' };
      // With a history on the system clock (which runs during a phase by itself): no false alarm.
      const dir = mkdtempSync(join(tmpdir(), 'keysim-remote-'));
      const historyPath = join(dir, 'history.jsonl.gz');
      const report = await runScenario({ ...base, target, historyPath });
      const { events } = await readHistory(historyPath).finally(() => rmSync(dir, { recursive: true, force: true }));
      expect(report.invariants?.verdict).toBe('clean');
      // Every operation, the load's included, is bracketed on the simulator's clock, not the wall's.
      const unbracketed = events.filter(
        (e) => e.serviceInvokeMs === undefined || e.serviceInvokeMs < START_MS || (e.serviceCompleteMs ?? 0) < e.serviceInvokeMs,
      );
      expect(unbracketed.map((e) => `#${e.seq} ${e.op}`)).toEqual([]);
      expect(events.length).toBeGreaterThan(10);
      expect(report.invariants?.oracle?.verdict).toBe('agrees');
      expect(report.target).toEqual({ kind: 'simulator', url: sim.url, remote: true });
      expect(report.resources?.kinds.find((k) => k.kind === 'namespaces')).toMatchObject({ created: 1, deleted: 1, left: 0 });
      const after = holdings(sim);
      expect({ ...after, apis: 0 }).toEqual({ ...before, apis: 0 });

      const live = await detectUrlTarget(proxy.url, sim.rootKey);
      await expect(runScenario({ ...base, seed: 6, target: live.target })).rejects.toThrow(/namespace .* does not exist on the target/);
    },
  );
});
