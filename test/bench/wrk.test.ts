/**
 * The HTTP benchmark's second generator: wrk, driven by a generated Lua script. The script must
 * send exactly the benchmark's requests (method, path, headers, each body, a Host with the port),
 * pipelined as asked, and the summary wrk prints must be read right. Runs wrk for real against a
 * node:http server on port 0 where wrk is installed; asserts on what arrived, never on a pace.
 */
import { type IncomingMessage, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { ServerProcess } from '../../bench/http-server.js';
import { findWrk, parseWrkOutput, runWrk } from '../../bench/wrk.js';

const WRK_SAMPLE = `Running 5s test @ http://127.0.0.1:40000/v2/keys.verifyKey
  1 threads and 100 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     7.21ms    1.02ms  20.11ms   90.00%
    Req/Sec    13.90k   500.00    14.50k    80.00%
  69512 requests in 5.00s, 15.32MB read
  Non-2xx or 3xx responses: 12
  Socket errors: connect 0, read 2, write 1, timeout 3
Requests/sec:  13901.37
Transfer/sec:      3.06MB
`;

describe('wrk summary', () => {
  test('reads requests, seconds, rate, non-2xx answers and socket errors', () => {
    expect(parseWrkOutput(WRK_SAMPLE)).toEqual({ completed: 69512, seconds: 5, rate: 13901.37, non2xx: 12, errors: 3, timeouts: 3 });
  });

  test('a summary without errors has none; one without the totals is refused by name', () => {
    const clean = WRK_SAMPLE.split('\n')
      .filter((l) => !l.includes('Non-2xx') && !l.includes('Socket errors'))
      .join('\n');
    expect(parseWrkOutput(clean)).toMatchObject({ non2xx: 0, errors: 0, timeouts: 0 });
    expect(() => parseWrkOutput('wrk: connection refused')).toThrow(/wrk printed no summary/);
  });
});

const wrk = findWrk();

describe.skipIf(wrk === undefined)('wrk against a real server', () => {
  const seen: Array<{ method: string; url: string; headers: IncomingMessage['headers']; body: string }> = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': 2 });
      res.end('{}');
    });
  });
  let url = '';
  let port = 0;

  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    url = `http://127.0.0.1:${port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  test.each([1, 4])('pipelining %i: every request is the benchmark request, bodies in turn, and each is counted', async (pipelining) => {
    seen.length = 0;
    const cpu = async () => {
      const u = process.cpuUsage();
      return { userUs: u.user, systemUs: u.system };
    };
    const serverProcess: ServerProcess = { ready: { kind: 'bare', url, pid: process.pid }, cpu, stop: async () => {} };
    const bodies = ['{"identifier":"a \\"quoted\\" one"}', '{"identifier":"b"}'];
    const workload = { path: '/v2/ratelimit.limit', headers: { 'content-type': 'application/json', authorization: 'Bearer root_123' }, bodies };
    const result = await runWrk(wrk as string, serverProcess, 'ratelimit', workload, { connections: 2, pipelining, durationSeconds: 1 });

    expect(result.generator).toBe('wrk');
    expect(result.non2xx).toBe(0);
    expect(result.completed).toBeGreaterThan(0);
    // wrk counts answers; requests still in flight when it stops arrived but were not counted.
    expect(seen.length).toBeGreaterThanOrEqual(result.completed);
    expect(seen.length).toBeLessThanOrEqual(result.completed + 2 * pipelining);
    for (const r of seen) {
      expect(r.method).toBe('POST');
      expect(r.url).toBe('/v2/ratelimit.limit');
      expect(r.headers.host).toBe(`127.0.0.1:${port}`);
      expect(r.headers.authorization).toBe('Bearer root_123');
      expect(r.headers['content-type']).toBe('application/json');
      expect(bodies).toContain(r.body);
    }
    // Both bodies are sent.
    expect(new Set(seen.map((r) => r.body)).size).toBe(2);
  });
});
