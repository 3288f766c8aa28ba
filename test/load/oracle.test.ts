/**
 * The oracle (src/load/oracle.ts) end to end: a run whose answers are altered on the wire — by a
 * real forwarding proxy between the runner and the simulator, standing for a bug in the HTTP
 * layer — is caught, with the field that differs; the journal ending or overflowing mid-run
 * makes the oracle say what it could not compare instead of passing silently. On the production
 * profile too: its replay runs the profile, so only the altered answers differ.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterEach, describe, expect, test } from 'vitest';
import { SCENARIOS } from '../../scenarios/index.js';
import { createSimulator, type Simulator, type SimulatorOptions } from '../../src/http/index.js';
import { Oracle } from '../../src/load/oracle/oracle.js';
import { runScenario } from '../../src/load/run/runner.js';
import type { LoadSettings, Scenario } from '../../src/load/scenario/scenario.js';
import { httpJsonClient } from '../../src/load/target/service-api.js';
import type { Target } from '../../src/load/target/target.js';
import type { HistoryEvent } from '../../src/load/history/history.js';

const SETTINGS: LoadSettings = { rate: 200, connections: 8, pipelining: 1, durationMs: 1_500, warmupMs: 0, timeoutMs: 5_000, model: 'open' };
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function simulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const sim = await createSimulator({ seed: 3, startMs: Date.parse('2027-03-01T00:00:00Z'), ...options });
  closers.push(() => sim.close());
  return sim;
}

/**
 * A forwarding proxy on loopback that adds 1 to the `credits` of every `nth` VALID verification
 * it passes back: the wire answer is wrong, the simulator's state is not.
 */
async function tamperingProxy(upstream: string, nth: number): Promise<{ url: string; tampered: () => number }> {
  let valid = 0;
  let tampered = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers))
        if (typeof v === 'string' && k !== 'host' && k !== 'connection' && k !== 'content-length') headers[k] = v;
      request(`${upstream}${req.url ?? '/'}`, { method: 'POST', headers, body: Buffer.concat(chunks) })
        .then(async (answer) => {
          let text = await answer.body.text();
          if (req.url === '/v2/keys.verifyKey' && text.includes('"code":"VALID"') && text.includes('"credits":')) {
            valid++;
            if (valid % nth === 0) {
              tampered++;
              text = text.replace(/"credits":(\d+)/, (_, n: string) => `"credits":${Number(n) + 1}`);
            }
          }
          res.writeHead(answer.statusCode, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
          res.end(text);
        })
        .catch(() => res.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, tampered: () => tampered };
}

function targetAt(url: string, rootKey: string): Target {
  return { kind: 'simulator', url, rootKey, clockControl: true, close: async () => undefined };
}

async function run(target: Target) {
  const historyPath = join(mkdtempSync(join(tmpdir(), 'keysim-oracle-')), 'history.jsonl.gz');
  const scenario = SCENARIOS['credits-drain'] as Scenario<unknown>;
  return runScenario({ scenario, target, settings: SETTINGS, seed: 9, thresholds: [], keep: false, keysimVersion: 'test', historyPath });
}

describe('the oracle', () => {
  test('catches answers altered between the simulator and the client, naming the field', async () => {
    const sim = await simulator();
    const proxy = await tamperingProxy(sim.url, 7);
    const report = await run(targetAt(proxy.url, sim.rootKey));
    const oracle = report.invariants?.oracle;
    expect(proxy.tampered()).toBeGreaterThan(0);
    expect(oracle?.verdict).toBe('differs');
    // Exactly the altered answers differ: the rest of the run matches the replay.
    expect(oracle?.differences).toBe(proxy.tampered());
    expect(oracle?.examples[0]).toMatchObject({ op: 'keys.verifyKey', field: 'credits' });
    const { expected, received } = oracle?.examples[0] ?? { expected: '0', received: '0' };
    expect(Number(received)).toBe(Number(expected) + 1);
  });

  test('agrees through an honest proxy (the comparison is not fooled by the extra hop)', async () => {
    const sim = await simulator();
    const proxy = await tamperingProxy(sim.url, Number.MAX_SAFE_INTEGER);
    const report = await run(targetAt(proxy.url, sim.rootKey));
    expect(report.invariants?.oracle).toMatchObject({ verdict: 'agrees', differences: 0 });
    expect(report.invariants?.oracle?.compared).toBeGreaterThan(100);
  });

  test('on the production profile, catches exactly the answers altered on the wire: the replay runs the profile, seed included', async () => {
    const sim = await simulator({ profile: 'production', regions: 2, seed: 11 });
    const proxy = await tamperingProxy(sim.url, 5);
    const report = await run(targetAt(proxy.url, sim.rootKey));
    const oracle = report.invariants?.oracle;
    expect(proxy.tampered()).toBeGreaterThan(0);
    expect(oracle?.verdict).toBe('differs');
    expect(oracle?.differences).toBe(proxy.tampered());
    expect(oracle?.examples[0]).toMatchObject({ op: 'keys.verifyKey', field: 'credits' });
  });

  test('says it did not run when the journal ended mid-run (a reset), instead of agreeing', async () => {
    const sim = await simulator();
    const client = httpJsonClient({ url: sim.url, rootKey: sim.rootKey });
    closers.push(() => client.close());
    const oracle = await Oracle.start(client);
    await client.post('/v2/apis.createApi', { name: 'a' }, 'root', { 'x-keysim-seq': '0' });
    sim.reset();
    await oracle.drain();
    const event: HistoryEvent = { seq: 0, op: 'apis.createApi', invokeMs: 1, completeMs: 2, request: {}, outcome: { status: 200 } } as HistoryEvent;
    expect(await oracle.compare([event])).toMatchObject({ verdict: 'not-run', note: expect.stringMatching(/reset/) as unknown });
  });

  test('says it did not run when the journal was restarted behind its back (a gap in the order), instead of replaying on the wrong state', async () => {
    const sim = await simulator();
    const client = httpJsonClient({ url: sim.url, rootKey: sim.rootKey });
    closers.push(() => client.close());
    const oracle = await Oracle.start(client);
    await client.post('/v2/apis.createApi', { name: 'a' }, 'root', { 'x-keysim-seq': '0' });
    await oracle.drain();
    // Another client restarts the journal: its entries begin again at 0.
    await client.post('/_sim/journal.start', {}, 'root');
    await client.post('/v2/apis.createApi', { name: 'b' }, 'root', { 'x-keysim-seq': '1' });
    await oracle.drain();
    const event: HistoryEvent = { seq: 0, op: 'apis.createApi', invokeMs: 1, completeMs: 2, request: {}, outcome: { status: 200 } } as HistoryEvent;
    expect(await oracle.compare([event])).toMatchObject({ verdict: 'not-run', note: expect.stringMatching(/skipped from entry 1 to 0/) as unknown });
  });

  test('after an overflow compares what was journaled and says the rest was not compared', async () => {
    const sim = await simulator();
    const client = httpJsonClient({ url: sim.url, rootKey: sim.rootKey });
    closers.push(() => client.close());
    const oracle = await Oracle.start(client, 2);
    const events: HistoryEvent[] = [];
    for (let seq = 0; seq < 4; seq++) {
      const answer = await client.post('/v2/apis.createApi', { name: `api-${seq}` }, 'root', { 'x-keysim-seq': String(seq) });
      const apiId = (answer.body as { data: { apiId: string } }).data.apiId;
      events.push({ seq, op: 'apis.createApi', invokeMs: seq, completeMs: seq + 1, request: {}, outcome: { status: 200 } } as HistoryEvent);
      expect(apiId).toMatch(/^api_/);
    }
    await oracle.drain();
    const result = await oracle.compare(events);
    expect(result).toMatchObject({ verdict: 'agrees', compared: 2, skipped: 2 });
    expect(result.note).toMatch(/overflowed/);
  });

  test('a failure to save the journal hides the differences the replay found (the run exited 0): they still differ, and the note says check cannot re-check', async () => {
    const sim = await simulator();
    const client = httpJsonClient({ url: sim.url, rootKey: sim.rootKey });
    closers.push(() => client.close());
    // /dev/full opens, and every write to it fails (ENOSPC): saving the journal fails.
    const oracle = await Oracle.start(client, { journalPath: '/dev/full' });
    await client.post('/v2/apis.createApi', { name: 'a' }, 'root', { 'x-keysim-seq': '0' });
    await oracle.drain();
    // The client "received" a 404 where the simulator, replayed, answers 200: a difference.
    const event: HistoryEvent = {
      seq: 0,
      op: 'apis.createApi',
      invokeMs: 1,
      completeMs: 2,
      request: {},
      outcome: { status: 404, code: 'not_found' },
    } as HistoryEvent;
    const result = await oracle.compare([event]);
    expect(result).toMatchObject({ verdict: 'differs', compared: 1, differences: 1 });
    expect(result.note).toMatch(/could not be saved for keysim check .*cannot be re-checked/);
    await oracle.stop();
  });
});
