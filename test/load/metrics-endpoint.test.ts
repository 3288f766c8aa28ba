/**
 * The `--metrics` endpoint on a real socket (127.0.0.1, port 0): observations land in the right
 * classic buckets (cumulative, in seconds), hostile label values are escaped so the exposition
 * still parses, a finished run reads 0 in `keysim_run_active` and keeps its figures, and the
 * address parser refuses what is not HOST:PORT.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { LATENCY_BUCKETS_S, MetricsEndpoint, escapeLabelValue, parseMetricsAddress } from '../../src/load/metrics/metrics-endpoint.js';
import { parseExposition } from '../helpers/prometheus.js';

let endpoint: MetricsEndpoint | undefined;
afterEach(async () => {
  await endpoint?.close();
  endpoint = undefined;
});

const scrape = async (e: MetricsEndpoint) => parseExposition(await (await fetch(e.url)).text());

describe('MetricsEndpoint', () => {
  it('buckets, sum and count of the observed latencies; errors and transport failures counted', async () => {
    endpoint = await MetricsEndpoint.listen({ host: '127.0.0.1', port: 0 });
    expect(endpoint.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    const run = endpoint.run({ run: 'r1', scenario: 'smoke' });
    run.observe('keys.verifyKey', 0.7, false); // ≤ 1 ms
    run.observe('keys.verifyKey', 1, false); // exactly on a bound: in it (le is ≤)
    run.observe('keys.verifyKey', 30, true); // a 5xx: answered, an error, ≤ 50 ms
    run.observe('keys.verifyKey', undefined, true); // a timeout: an error without latency
    run.observe('keys.verifyKey', 20_000, false); // beyond the last bound: +Inf only
    const exposition = await scrape(endpoint);
    const value = (name: string, le?: string) =>
      exposition.samples.find((s) => s.name === name && s.labels.operation === 'keys.verifyKey' && (le === undefined || s.labels.le === le))?.value;
    expect(value('keysim_requests_total')).toBe(5);
    expect(value('keysim_errors_total')).toBe(2);
    expect(value('keysim_request_duration_seconds_bucket', '0.0005')).toBe(0);
    expect(value('keysim_request_duration_seconds_bucket', '0.001')).toBe(2);
    expect(value('keysim_request_duration_seconds_bucket', '0.025')).toBe(2);
    expect(value('keysim_request_duration_seconds_bucket', '0.05')).toBe(3);
    expect(value('keysim_request_duration_seconds_bucket', '10')).toBe(3);
    expect(value('keysim_request_duration_seconds_bucket', '+Inf')).toBe(4);
    expect(value('keysim_request_duration_seconds_count')).toBe(4);
    expect(value('keysim_request_duration_seconds_sum')).toBeCloseTo(0.0007 + 0.001 + 0.03 + 20, 9);
    expect(LATENCY_BUCKETS_S.length + 1).toBe(exposition.samples.filter((s) => s.name === 'keysim_request_duration_seconds_bucket').length);
    for (const family of Object.keys(exposition.types)) expect(exposition.help[family], family).toBeTruthy();
  });

  it('hostile scenario and operation names are escaped: the exposition parses and gives them back', async () => {
    endpoint = await MetricsEndpoint.listen({ host: '127.0.0.1', port: 0 });
    const evil = 'a"b\\c\nd}{,=';
    endpoint.run({ run: 'r"1', scenario: evil }).observe(evil, 2, false);
    const exposition = await scrape(endpoint);
    const sample = exposition.samples.find((s) => s.name === 'keysim_requests_total');
    expect(sample?.labels).toEqual({ run: 'r"1', scenario: evil, operation: evil });
    expect(escapeLabelValue('\\"\n')).toBe('\\\\\\"\\n');
  });

  it('several runs keep apart; a finished run reads 0 active, keeps its figures and counts nothing more', async () => {
    endpoint = await MetricsEndpoint.listen({ host: '127.0.0.1', port: 0 });
    const first = endpoint.run({ run: 'r1', scenario: 'smoke' });
    first.observe('ratelimit.limit', 3, false);
    first.finish();
    first.observe('ratelimit.limit', 3, false);
    const second = endpoint.run({ run: 'r2', scenario: 'mixed' });
    second.observe('ratelimit.limit', 3, false);
    const exposition = await scrape(endpoint);
    expect(exposition.samples.filter((s) => s.name === 'keysim_run_active').map((s) => [s.labels.run, s.value])).toEqual([
      ['r1', 0],
      ['r2', 1],
    ]);
    expect(exposition.samples.filter((s) => s.name === 'keysim_requests_total').map((s) => [s.labels.run, s.value])).toEqual([
      ['r1', 1],
      ['r2', 1],
    ]);
    expect((await fetch(endpoint.url, { method: 'POST' })).status).toBe(405);
  });

  it('before any run: the families are declared and there are no samples', async () => {
    endpoint = await MetricsEndpoint.listen({ host: '127.0.0.1', port: 0 });
    const exposition = await scrape(endpoint);
    expect(Object.keys(exposition.types)).toHaveLength(4);
    expect(exposition.samples).toEqual([]);
  });

  it('parseMetricsAddress', () => {
    expect(parseMetricsAddress('127.0.0.1:9464')).toEqual({ ok: true, address: { host: '127.0.0.1', port: 9464 } });
    expect(parseMetricsAddress('[::1]:0')).toEqual({ ok: true, address: { host: '::1', port: 0 } });
    expect(parseMetricsAddress('localhost:9464')).toEqual({ ok: true, address: { host: 'localhost', port: 9464 } });
    for (const bad of ['', '9464', ':9464', '127.0.0.1:', '127.0.0.1:65536', 'http://127.0.0.1:9464', '127.0.0.1:94a'])
      expect(parseMetricsAddress(bad).ok, bad).toBe(false);
  });

  it('the strict exposition reader refuses malformed lines (so the tests above can fail)', () => {
    expect(() => parseExposition('x 1')).toThrow(/newline/);
    expect(() => parseExposition('x{a="1} 1\n')).toThrow(/unterminated/);
    expect(() => parseExposition('x{a="\\t"} 1\n')).toThrow(/bad escape/);
    expect(() => parseExposition('x{1a="1"} 1\n')).toThrow(/bad label name/);
    expect(() => parseExposition('x one\n')).toThrow(/not a float/);
    expect(() => parseExposition('# TYPE h histogram\nh_bucket 1\n')).toThrow(/without le/);
    expect(() => parseExposition('# TYPE c counter\nc -1\n')).toThrow(/below 0/);
    expect(() => parseExposition('a 1\nb 1\na 2\n')).toThrow(/interleaved/);
    expect(() => parseExposition('a 1\n# TYPE a counter\n')).toThrow(/TYPE after samples/);
  });
});
