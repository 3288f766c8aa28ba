/**
 * One rule for "is this the service's answer?" (src/load/service-answer.ts), held by every place
 * that reads answers — against real node:http servers on 127.0.0.1: both load models, the
 * pre-flight check, the dead-target watch, the clock-skew probe, the unknown outcomes; a route
 * miss without the envelope; the decoded-body limit of each call.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { describe, expect, test } from 'vitest';
import { targetProbe } from '../../src/load/run/clock-skew.js';
import { DeadTargetWatch, type TargetStoppedVerdict } from '../../src/load/answers/dead-target.js';
import { HISTORY_FILE } from '../../src/load/history/history.js';
import { DecodedBodyTooLargeError, decodeBody } from '../../src/load/http1/answer-body.js';
import { MAX_BODY_BYTES } from '../../src/load/http1/response-parser.js';
import { NotTheServiceError, checkReachable } from '../../src/load/target/reachability.js';
import { runScenario } from '../../src/load/run/runner.js';
import { type Scenario, defineScenario } from '../../src/load/scenario/scenario.js';
import { judgeAnswer, readServiceAnswer } from '../../src/load/answers/service-answer.js';
import { ADMIN_MAX_BODY_BYTES, httpJsonClient } from '../../src/load/target/service-api.js';
import { liveTarget } from '../../src/load/target/target.js';
import { neverCameReason } from '../../src/load/answers/unknown-outcome.js';
import { FIREWALL_PAGE, OK_BODY, loadSettings, serviceProbeThen, stubServersPerTest } from '../helpers/load.js';

const ROOT_KEY = 'root_service_answer_0123456789';

const stub = stubServersPerTest();

const verifyScenario = defineScenario<undefined>({
  name: 'inline-service-answer',
  description: 'Verifications whose check passes any 200',
  setup: async () => undefined,
  mix: [{ weight: 1, build: () => ({ op: 'keys.verifyKey', body: { key: 'k' } }), check: (r) => (r.status === 200 ? undefined : `status ${r.status}`) }],
}) as unknown as Scenario<unknown>;

async function runBoth(url: string, historyDir?: string) {
  const reports = [];
  for (const model of ['open', 'closed'] as const) {
    reports.push(
      await runScenario({
        scenario: verifyScenario,
        target: liveTarget(url, ROOT_KEY),
        settings: loadSettings({ model, rate: 40, connections: 2, durationMs: 300, warmupMs: 0 }),
        seed: 1,
        thresholds: [],
        keep: false,
        keysimVersion: '0.0.0-test',
        ...(historyDir === undefined ? {} : { historyPath: join(historyDir, `${model}-${HISTORY_FILE}`), wallSkewMs: 1_000 }),
      }),
    );
  }
  return reports;
}

describe('the load models agree', () => {
  test('a 200 HTML page was a passed answer in the closed model and an unknown outcome in the open: both record it as an error of unknown effect', async () => {
    const server = await stub(serviceProbeThen((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(FIREWALL_PAGE)));
    const dir = mkdtempSync(join(tmpdir(), 'keysim-answer-'));
    try {
      for (const [i, report] of (await runBoth(server.url, dir)).entries()) {
        const model = i === 0 ? 'open' : 'closed';
        const verify = report.operations.find((o) => o.operation === 'keys.verifyKey');
        expect(verify?.requests, model).toBeGreaterThan(0);
        expect(verify?.statuses, model).toEqual({});
        expect(verify?.transportErrors.other, model).toBe(verify?.requests);
        expect(verify?.checkFailures, model).toBe(0);
        const calls = gunzipSync(readFileSync(join(dir, `${model}-${HISTORY_FILE}`)))
          .toString('utf8')
          .split('\n')
          .filter((l) => l.includes('keys.verifyKey'));
        expect(calls.length, model).toBeGreaterThan(0);
        expect(
          calls.every((l) => l.includes('"unknown"')),
          model,
        ).toBe(true);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a plain-text 404 ("404 page not found") was no route miss in the open model: a failed "no such route" check in both models', async () => {
    const server = await stub(serviceProbeThen((_req, res) => res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('404 page not found\n')));
    for (const [i, report] of (await runBoth(server.url)).entries()) {
      const model = i === 0 ? 'open' : 'closed';
      const verify = report.operations.find((o) => o.operation === 'keys.verifyKey');
      expect(verify?.requests, model).toBeGreaterThan(0);
      expect(verify?.checkFailures, model).toBe(verify?.requests);
      expect(
        report.checks.some((c) => !c.passed && /no such route/.test(c.detail ?? '')),
        model,
      ).toBe(true);
    }
  });
});

describe('every reader of answers applies the one rule', () => {
  test('the rule: the v2 envelope (a "meta" object) whatever the status; v1 any JSON object; a gateway status without it is a gateway', () => {
    expect(judgeAnswer(200, { meta: { requestId: 'r' }, data: {} })).toEqual({ service: true });
    expect(judgeAnswer(503, { meta: { requestId: 'r' }, error: {} })).toEqual({ service: true });
    expect(judgeAnswer(200, { data: {} })).toMatchObject({ service: false, gateway: false });
    expect(judgeAnswer(502, undefined)).toMatchObject({ service: false, gateway: true, reason: '502 from a gateway' });
    expect(judgeAnswer(200, { valid: true }, 'v1')).toEqual({ service: true });
    expect(readServiceAnswer(200, Buffer.from(FIREWALL_PAGE))).toMatchObject({ service: false, why: 'not a JSON object' });
    expect(neverCameReason({ status: 504, body: undefined })).toBe('504 from a gateway');
    expect(neverCameReason({ status: 200, body: { data: {} } })).toMatch(/not the service/);
  });

  test('pre-flight took a gateway\'s 502 page for the service\'s own failure ("not reachable: it answered 502"): it does not answer like the service', async () => {
    const server = await stub((_req, res) => res.writeHead(502, { 'content-type': 'text/html' }).end('<html><body><h1>502 Bad Gateway</h1></body></html>'));
    const error = await checkReachable(liveTarget(server.url, ROOT_KEY), 5_000).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotTheServiceError);
    expect((error as Error).message).toMatch(/does not answer like the service \(502 text\/html, .*\); a gateway's 502: is the service behind the proxy up\?/);
  });

  test('pre-flight accepted JSON without the service\'s envelope ({"data":…}): it does not answer like the service', async () => {
    const server = await stub((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":[]}'));
    await expect(checkReachable(liveTarget(server.url, ROOT_KEY), 5_000)).rejects.toBeInstanceOf(NotTheServiceError);
  });

  test("the clock-skew probe read a gateway's Date as the service's clock: the Date of a page that is not the service's is ignored", async () => {
    const date = 'Sat, 01 Jan 2000 00:00:00 GMT';
    let gateway = true;
    const server = await stub((_req, res) =>
      gateway
        ? res.writeHead(502, { 'content-type': 'text/html', date }).end('<html>502 Bad Gateway</html>')
        : res.writeHead(200, { 'content-type': 'application/json', date }).end(OK_BODY),
    );
    const { probe, done } = targetProbe({ url: server.url, rootKey: ROOT_KEY }, 5_000);
    try {
      expect((await probe()).dateMs).toBeUndefined();
      gateway = false;
      expect((await probe()).dateMs).toBe(Date.parse(date));
    } finally {
      await done();
    }
  });

  test("the dead-target watch counted the service's own 503 (in its envelope) as a gateway's: only pages that are not the service's count", () => {
    const verdicts: TargetStoppedVerdict[] = [];
    const watch = new DeadTargetWatch(1_000, 0, (v) => verdicts.push(v));
    // The service itself answered 503 (its envelope): an answer, the target is alive.
    for (let t = 0; t <= 3_000; t += 500) watch.observe(t, undefined, 503);
    expect(verdicts).toEqual([]);
    // A gateway's 503 page: not the service's answer (an error of unknown effect, with the page's status).
    for (let t = 3_500; t <= 4_500; t += 500) watch.observe(t, 'other', 503);
    expect(verdicts).toHaveLength(1);
    expect(verdicts[0]?.gateway).toEqual({ '503': 3 });
  });
});

describe('the decoded-body limit depends on the call', () => {
  test('a gzip-compressed snapshot over 16 MiB decoded failed the set-up client, whose limit is 512 MiB: it is read', async () => {
    const big = JSON.stringify({ meta: { requestId: 'r' }, data: { blob: 'x'.repeat(MAX_BODY_BYTES + 1024) } });
    const zipped = gzipSync(big);
    const server = await stub((_req, res) => res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' }).end(zipped));
    const client = httpJsonClient(liveTarget(server.url, ROOT_KEY), 10_000);
    try {
      const res = await client.post('/_sim/snapshot', {}, 'root');
      expect(res.status).toBe(200);
      expect((res.body as { data: { blob: string } }).data.blob.length).toBe(MAX_BODY_BYTES + 1024);
    } finally {
      await client.close();
    }
  });

  test('a load answer that decodes past its limit is a clear error naming the limit (not "does not decode")', () => {
    const zipped = gzipSync(Buffer.alloc(MAX_BODY_BYTES + 1, 0x20));
    let error: unknown;
    try {
      decodeBody(200, 'application/json', 'gzip', zipped);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(DecodedBodyTooLargeError);
    expect((error as Error).message).toContain(`more than ${MAX_BODY_BYTES} bytes (16 MiB), the body limit of this call`);
    expect(decodeBody(200, 'application/json', 'gzip', zipped, ADMIN_MAX_BODY_BYTES).length).toBe(MAX_BODY_BYTES + 1);
  });
});
