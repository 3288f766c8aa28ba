/**
 * `--metrics HOST:PORT`: a Prometheus endpoint (`GET /metrics`, text exposition format 0.0.4)
 * that serves the figures of the runs of one `keysim run` while they go, so that Prometheus can
 * scrape a long run and Grafana watch it. It is fed by the recorder (every measured completion,
 * warm-up excluded, as in the report) and lives as long as the invocation: several scenarios
 * share it, told apart by their `run` and `scenario` labels. Exposed:
 *
 *   keysim_requests_total{run,scenario,operation}          counter: completed requests
 *   keysim_errors_total{run,scenario,operation}            counter: transport errors and 5xx
 *   keysim_request_duration_seconds{run,scenario,operation} classic histogram (_bucket{le}, _sum,
 *                                                          _count) of the corrected latency of
 *                                                          answered requests, in seconds
 *   keysim_run_active{run,scenario}                        gauge: 1 while the run's load goes, 0 after
 *
 * Figures of a finished run stay (frozen) until the process exits, so the last scrape sees them.
 */
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Bucket upper bounds of the latency histogram, seconds (`+Inf` is added). */
export const LATENCY_BUCKETS_S: readonly number[] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** The address `--metrics` listens on, parsed. */
export interface MetricsAddress {
  host: string;
  port: number;
}

export type ParsedMetricsAddress = { ok: true; address: MetricsAddress } | { ok: false; error: string };

/** Parses `127.0.0.1:9464`, `localhost:0`, `[::1]:9464`. */
export function parseMetricsAddress(text: string): ParsedMetricsAddress {
  const usage = `--metrics takes HOST:PORT, e.g. 127.0.0.1:9464 (port 0: any free port), got "${text}".`;
  const match = /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9.-]+)):(\d{1,5})$/.exec(text.trim());
  if (match === null) return { ok: false, error: usage };
  const host = match[1] ?? match[2] ?? '';
  const port = Number(match[3]);
  if (!Number.isInteger(port) || port > 65_535) return { ok: false, error: `${usage} The port must be 0–65535.` };
  return { ok: true, address: { host, port } };
}

/** Whether an address stays on this machine. */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

interface OperationSeries {
  requests: number;
  errors: number;
  /** Count per bucket of LATENCY_BUCKETS_S (not cumulative) plus one for +Inf. */
  buckets: number[];
  sumSeconds: number;
  answered: number;
}

interface RunSeries {
  run: string;
  scenario: string;
  active: boolean;
  operations: Map<string, OperationSeries>;
}

/** What one run feeds to the endpoint. */
export interface RunMetrics {
  /** One measured completion: its corrected latency in ms when answered, undefined after a transport error. */
  observe(operation: string, latencyMs: number | undefined, isError: boolean): void;
  /** The run's load is over: `keysim_run_active` goes to 0; its figures stay. */
  finish(): void;
}

/** A label value escaped for the exposition format (backslash, double quote, newline). */
export function escapeLabelValue(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

/** A sample value as Prometheus reads it (Go float syntax, `+Inf`). */
function formatSample(x: number): string {
  if (x === Number.POSITIVE_INFINITY) return '+Inf';
  if (!Number.isFinite(x)) return 'NaN';
  return String(x);
}

export class MetricsEndpoint {
  readonly #server: Server;
  readonly #runs: RunSeries[] = [];
  readonly #url: string;

  private constructor(server: Server, url: string) {
    this.#server = server;
    this.#url = url;
  }

  /** Listens on `address`; rejects with the listen error (EADDRINUSE, EADDRNOTAVAIL, …). */
  static async listen(address: MetricsAddress): Promise<MetricsEndpoint> {
    // Declared before the server so that its handler can reach it (a let, not a const at the assignment:
    // a request before the assignment finds undefined, not a TDZ ReferenceError).
    // eslint-disable-next-line prefer-const -- see the line above
    let endpoint: MetricsEndpoint | undefined;
    const server = createServer((req, res) => endpoint?.handle(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(address.port, address.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    // A scrape must never keep the process alive at the end of a run.
    server.unref();
    const bound = server.address() as AddressInfo;
    const host = bound.family === 'IPv6' ? `[${bound.address}]` : bound.address;
    endpoint = new MetricsEndpoint(server, `http://${host}:${bound.port}/metrics`);
    return endpoint;
  }

  /** The scrape URL, with the port actually bound (port 0 picks one). */
  get url(): string {
    return this.#url;
  }

  /** Starts the series of one run. */
  run(labels: { run: string; scenario: string }): RunMetrics {
    const series: RunSeries = { ...labels, active: true, operations: new Map() };
    this.#runs.push(series);
    return {
      observe: (operation, latencyMs, isError) => {
        if (!series.active) return;
        let op = series.operations.get(operation);
        if (op === undefined) {
          op = { requests: 0, errors: 0, buckets: new Array<number>(LATENCY_BUCKETS_S.length + 1).fill(0), sumSeconds: 0, answered: 0 };
          series.operations.set(operation, op);
        }
        op.requests++;
        if (isError) op.errors++;
        if (latencyMs !== undefined && Number.isFinite(latencyMs)) {
          const seconds = Math.max(0, latencyMs) / 1000;
          let i = LATENCY_BUCKETS_S.findIndex((le) => seconds <= le);
          if (i === -1) i = LATENCY_BUCKETS_S.length;
          op.buckets[i] = (op.buckets[i] ?? 0) + 1;
          op.sumSeconds += seconds;
          op.answered++;
        }
      },
      finish: () => {
        series.active = false;
      },
    };
  }

  /** The exposition text of every run so far. */
  render(): string {
    const lines: string[] = [];
    const family = (name: string, type: 'counter' | 'gauge' | 'histogram', help: string) => lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    const labelsOf = (r: RunSeries, operation?: string, le?: string) =>
      `{run="${escapeLabelValue(r.run)}",scenario="${escapeLabelValue(r.scenario)}"` +
      (operation === undefined ? '' : `,operation="${escapeLabelValue(operation)}"`) +
      (le === undefined ? '' : `,le="${le}"`) +
      '}';
    const perOperation = (pick: (op: OperationSeries) => number) => (name: string) => {
      for (const r of this.#runs) for (const [operation, op] of r.operations) lines.push(`${name}${labelsOf(r, operation)} ${formatSample(pick(op))}`);
    };
    family('keysim_requests_total', 'counter', 'Requests completed in the measured part of the run (warm-up excluded), errors included.');
    perOperation((op) => op.requests)('keysim_requests_total');
    family('keysim_errors_total', 'counter', 'Requests that failed: transport errors (timeout, reset, refused) and HTTP 5xx.');
    perOperation((op) => op.errors)('keysim_errors_total');
    const h = 'keysim_request_duration_seconds';
    family(
      h,
      'histogram',
      'Latency of answered requests in seconds, from the intended send time (coordinated-omission corrected; from the actual send in the closed model).',
    );
    for (const r of this.#runs) {
      for (const [operation, op] of r.operations) {
        let cumulative = 0;
        LATENCY_BUCKETS_S.forEach((le, i) => {
          cumulative += op.buckets[i] ?? 0;
          lines.push(`${h}_bucket${labelsOf(r, operation, formatSample(le))} ${cumulative}`);
        });
        lines.push(`${h}_bucket${labelsOf(r, operation, '+Inf')} ${op.answered}`);
        lines.push(`${h}_sum${labelsOf(r, operation)} ${formatSample(op.sumSeconds)}`);
        lines.push(`${h}_count${labelsOf(r, operation)} ${op.answered}`);
      }
    }
    family('keysim_run_active', 'gauge', '1 while the run sends load, 0 once it is over.');
    for (const r of this.#runs) lines.push(`keysim_run_active${labelsOf(r)} ${r.active ? 1 : 0}`);
    return `${lines.join('\n')}\n`;
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' }).end('Only GET /metrics.\n');
      return;
    }
    if (path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('keysim serves its figures at /metrics.\n');
      return;
    }
    const body = this.render();
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8', 'cache-control': 'no-store' });
    res.end(req.method === 'HEAD' ? undefined : body);
  }

  /** Stops listening and drops open scrapes. */
  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}
