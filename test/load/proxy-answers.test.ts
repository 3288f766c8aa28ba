/**
 * What a proxy in front of the service does to keysim's answers, against real node:http servers on
 * 127.0.0.1: bodies compressed though keysim asked for identity are decoded; a 200 whose body is
 * not the service's JSON (a firewall's HTML page) is a protocol error of unknown effect, never a
 * known outcome; a gateway answering only 502 is a dead target (exit 96); a URL missing its base
 * path (the proxy's HTML 404, a 421) fails the pre-flight check; the pre-flight check reads the
 * headers the load client reads.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliCompressSync, deflateSync, gunzipSync, gzipSync } from 'node:zlib';
import { describe, expect, test } from 'vitest';
import { DeadTargetWatch, describeTargetStopped, type TargetStoppedVerdict } from '../../src/load/answers/dead-target.js';
import { NotTheServiceError, checkReachable } from '../../src/load/target/reachability.js';
import { TARGET_STOPPED_CHECK, TargetUnreachableError, runScenario } from '../../src/load/run/runner.js';
import { type Scenario, defineScenario } from '../../src/load/scenario/scenario.js';
import { httpJsonClient } from '../../src/load/target/service-api.js';
import { liveTarget } from '../../src/load/target/target.js';
import { HISTORY_FILE } from '../../src/load/history/history.js';
import { targetProbe } from '../../src/load/run/clock-skew.js';
import { FIREWALL_PAGE, OK_BODY, loadSettings, serviceProbeThen, stubServersPerTest } from '../helpers/load.js';

const ROOT_KEY = 'root_proxy_answers_0123456789';
const VERIFY_BODY = JSON.stringify({ meta: { requestId: 'req_v' }, data: { valid: true, code: 'VALID' } });

const stub = stubServersPerTest();

const verifyScenario = defineScenario<undefined>({
  name: 'inline-proxy-answers',
  description: 'Verifications through a proxy',
  setup: async () => undefined,
  mix: [{ weight: 1, build: () => ({ op: 'keys.verifyKey', body: { key: 'k' } }), check: (r) => (r.status === 200 ? undefined : `status ${r.status}`) }],
}) as unknown as Scenario<unknown>;

const CODINGS: Array<[string, (b: Buffer) => Buffer]> = [
  ['gzip', gzipSync],
  ['deflate', deflateSync],
  ['br', brotliCompressSync],
];

describe('compressed answers', () => {
  test.each(CODINGS)('a %s body sent although keysim asked for identity is decoded, by the set-up client and the load client', async (coding, compress) => {
    const seen: Array<string | undefined> = [];
    const server = await stub((req, res) => {
      seen.push(req.headers['accept-encoding']);
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': coding }).end(compress(Buffer.from(VERIFY_BODY)));
    });
    const client = httpJsonClient({ url: server.url, rootKey: ROOT_KEY }, 5_000);
    try {
      expect(await client.post('/v2/keys.verifyKey', { key: 'k' }, 'root')).toEqual({ status: 200, body: JSON.parse(VERIFY_BODY) });
    } finally {
      await client.close();
    }
    const report = await runScenario({
      scenario: verifyScenario,
      target: liveTarget(server.url, ROOT_KEY),
      settings: loadSettings({ rate: 40, connections: 2, durationMs: 300, warmupMs: 0 }),
      seed: 1,
      thresholds: [],
      keep: false,
      keysimVersion: '0.0.0-test',
    });
    const verify = report.operations.find((o) => o.operation === 'keys.verifyKey');
    expect(verify?.statuses).toEqual({ '200': verify?.requests });
    expect(verify?.codes).toEqual({ VALID: verify?.requests });
    expect(report.checks.every((c) => c.passed)).toBe(true);
    // Every request asked for an uncompressed answer.
    expect(new Set(seen)).toEqual(new Set(['identity']));
  });
});

describe("a 200 that is not the service's JSON", () => {
  test("a firewall's HTML page answered 200 is not recorded as a known outcome: a protocol error of unknown effect (no false exit 100)", async () => {
    const server = await stub(serviceProbeThen((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(FIREWALL_PAGE)));
    const dir = mkdtempSync(join(tmpdir(), 'keysim-proxy-'));
    try {
      const historyPath = join(dir, HISTORY_FILE);
      const report = await runScenario({
        scenario: verifyScenario,
        target: liveTarget(server.url, ROOT_KEY),
        settings: loadSettings({ rate: 40, connections: 2, durationMs: 300, warmupMs: 0 }),
        seed: 1,
        thresholds: [],
        keep: false,
        keysimVersion: '0.0.0-test',
        historyPath,
        wallSkewMs: 1_000,
      });
      const verify = report.operations.find((o) => o.operation === 'keys.verifyKey');
      expect(verify?.requests).toBeGreaterThan(0);
      // Counted as errors, never as answers.
      expect(verify?.statuses).toEqual({});
      expect(verify?.transportErrors.other).toBe(verify?.requests);
      // The history holds their outcome as unknown, so no invariant is judged on them.
      const calls = gunzipSync(readFileSync(historyPath))
        .toString('utf8')
        .split('\n')
        .filter((l) => l.includes('keys.verifyKey'));
      expect(calls.length).toBeGreaterThan(0);
      expect(calls.every((l) => l.includes('"unknown"'))).toBe(true);
      expect(report.invariants?.violations ?? []).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('the set-up client raises a clear error naming the status, content type and first bytes (not "Cannot read properties of undefined")', async () => {
    const server = await stub((_req, res) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(FIREWALL_PAGE));
    const client = httpJsonClient({ url: server.url, rootKey: ROOT_KEY }, 5_000);
    try {
      await expect(client.post('/v2/apis.createApi', { name: 'x' }, 'root')).rejects.toThrow(
        /\/v2\/apis\.createApi: The target answered 200 \(text\/html; charset=utf-8\) with a body that is not the service's JSON \(not a JSON object\): "<html><head><title>Access denied/,
      );
      // A body that does not decode either.
    } finally {
      await client.close();
    }
    const garbled = await stub((_req, res) => res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' }).end('{"not":"gzip"}'));
    const other = httpJsonClient({ url: garbled.url, rootKey: ROOT_KEY }, 5_000);
    try {
      await expect(other.post('/v2/keys.getKey', { keyId: 'k' }, 'root')).rejects.toThrow(/content-encoding gzip that does not decode/);
    } finally {
      await other.close();
    }
  });
});

describe('a gateway whose service is down', () => {
  test('a dead service behind a gateway (only 502 answers) is a dead target: the run ends early, said in one line', async () => {
    const server = await stub(
      serviceProbeThen((_req, res) => res.writeHead(502, { 'content-type': 'text/html' }).end('<html><body><h1>502 Bad Gateway</h1></body></html>')),
    );
    const report = await runScenario({
      scenario: verifyScenario,
      target: liveTarget(server.url, ROOT_KEY),
      settings: loadSettings({ rate: 50, connections: 2, durationMs: 300_000, warmupMs: 0, timeoutMs: 2_000 }),
      seed: 1,
      thresholds: [],
      keep: false,
      keysimVersion: '0.0.0-test',
      deadTargetMs: 1_000,
    });
    expect(report.status).toBe('failed');
    const check = report.checks.find((c) => c.name === TARGET_STOPPED_CHECK);
    expect(check?.detail).toMatch(
      /^The target answered only 502 Bad Gateway for \d+\.\d s \(--dead-after 1 s\): the service behind the gateway looks down; the run ended early/,
    );
    expect(report.measuredMs).toBeLessThan(150_000);
  });

  test('gateway errors and transport errors both count; any other answer (a 500, a 429) proves the service alive', () => {
    const verdicts: TargetStoppedVerdict[] = [];
    const watch = new DeadTargetWatch(1_000, 0, (v) => verdicts.push(v));
    // A gateway's page is not the service's answer: it comes as an error of unknown effect with the page's status.
    watch.observe(0, 'other', 502);
    watch.observe(500, undefined, 500);
    watch.observe(600, 'other', 503);
    watch.observe(1_500, undefined, 429);
    watch.observe(1_600, 'other', 504);
    expect(verdicts).toEqual([]);
    watch.observe(2_000, 'reset');
    watch.observe(2_600, 'other', 502);
    expect(verdicts).toHaveLength(1);
    const text = describeTargetStopped(verdicts[0] as TargetStoppedVerdict, 0, 10_000);
    expect(text).toMatch(
      /every request that ended failed at the transport level or got a gateway error \(1 reset, 1 × 502 Bad Gateway, 1 × 504 Gateway Timeout\)/,
    );
  });
});

describe('pre-flight: a target that does not answer like the service', () => {
  test.each([
    [404, 'text/html', '<html><body><center><h1>404 Not Found</h1></center><hr><center>nginx</center></body></html>'],
    [421, 'text/html', '<html><body><h1>421 Misdirected Request</h1></body></html>'],
    [421, 'application/json', '{"error":{"detail":"misdirected"}}'],
  ])('a proxy\'s %i (%s) is not read as the service\'s answer: "check the URL and its base path", before any load', async (status, type, body) => {
    const server = await stub((_req, res) => res.writeHead(status, { 'content-type': type }).end(body));
    const target = liveTarget(`${server.url}/wrong-base`, ROOT_KEY);
    const error = await checkReachable(target, 5_000).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotTheServiceError);
    expect(error).toBeInstanceOf(TargetUnreachableError);
    expect((error as Error).message).toMatch(
      new RegExp(
        `^The target at ${server.url}/wrong-base does not answer like the service \\(${status} ${type.replace('/', '\\/')}, .*\\): check the URL and its base path`,
      ),
    );
    // Nothing but the probe reached it.
    expect(server.paths).toEqual(['/wrong-base/v2/identities.listIdentities']);
  });

  test("the service's own JSON 404 envelope passes (a namespace or identity not found is the service speaking)", async () => {
    const server = await stub((_req, res) =>
      res
        .writeHead(404, { 'content-type': 'application/problem+json' })
        .end('{"meta":{"requestId":"r"},"error":{"title":"Not Found","detail":"x","status":404}}'),
    );
    await expect(checkReachable(liveTarget(server.url, ROOT_KEY), 5_000)).resolves.toBeUndefined();
  });
});

describe('limits of the pre-flight and set-up client', () => {
  test('40 KiB of headers no longer fail pre-flight ("Headers Overflow Error"): it accepts what the load client accepts, and refuses past 64 KiB', async () => {
    let pad = 40 * 1024;
    const server = await stub((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'x-pad': 'p'.repeat(pad) }).end(OK_BODY);
    });
    await expect(checkReachable(liveTarget(server.url, ROOT_KEY), 5_000)).resolves.toBeUndefined();
    pad = 70 * 1024;
    await expect(checkReachable(liveTarget(server.url, ROOT_KEY), 5_000)).rejects.toThrow(/head is longer than 65536 bytes/);
  });
});

describe('Date headers behind a proxy', () => {
  test('two Date headers (the proxy\'s and the service\'s) are not read as "no Date header" by the skew probe: the first valid one is taken', async () => {
    const server = await stub((_req, res) => {
      res.setHeader('date', ['Sat, 28 Nov 2026 02:30:16 GMT', 'Sat, 28 Nov 2026 02:30:17 GMT']);
      res.writeHead(200, { 'content-type': 'application/json' }).end(OK_BODY);
    });
    const { probe, done } = targetProbe({ url: server.url, rootKey: ROOT_KEY }, 5_000);
    try {
      expect((await probe()).dateMs).toBe(Date.parse('2026-11-28T02:30:16Z'));
    } finally {
      await done();
    }
  });
});
