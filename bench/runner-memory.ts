/**
 * The runner's memory after 10 million recorded requests (it must stay flat: histograms, not
 * samples). A fresh process started with --expose-gc feeds one Recorder synthetic samples through
 * record() — no network: a few operations, latencies from a seeded distribution, statuses, and
 * the parsed answer bodies the open model hands over (one shared object per kind of answer) —
 * and reads memory after a full collection at a few sample counts. The child's entry is
 * runner-memory-child.ts; its result comes back as one RESULT line (subprocess.ts protocol).
 */
import { fileURLToPath } from 'node:url';
import { Random } from '../src/engine/index.js';
import type { TransportErrorKind } from '../src/report/model.js';
import { loadRunnerModules } from './runner-modules.js';
import { progress, runChild } from './subprocess.js';
import { type SummaryRow, fmtInt, fmtMB, fmtNs, fmtRatio, secondsSince, textTable } from './stats.js';

export const RECORDED_TOTAL = 10_000_000;
/** Memory is read after this many samples. */
export const CHECKPOINTS = [0, 1_000_000, 2_000_000, 5_000_000, 10_000_000] as const;
/** Synthetic completions per second: the timeline gets one closed second per this many samples. */
const SYNTHETIC_RATE = 40_000;
const SEED = 20_240_601;
/** Size of the precomputed tables the samples cycle through (a power of two). */
const TABLE = 1 << 18;

interface AnswerKind {
  operation: string;
  status: number | undefined;
  transportError: TransportErrorKind | undefined;
  body: unknown;
  /** Share of the samples. */
  weight: number;
}

const meta = { requestId: 'req_2Xk9bench' };
/** What the open model passes to record(): the parsed JSON answer, shared between samples of one kind. */
const KINDS: readonly AnswerKind[] = [
  {
    operation: 'keys.verifyKey',
    status: 200,
    transportError: undefined,
    weight: 0.58,
    body: { meta, data: { valid: true, code: 'VALID', keyId: 'key_bench', credits: 9_812 } },
  },
  {
    operation: 'keys.verifyKey',
    status: 200,
    transportError: undefined,
    weight: 0.04,
    body: { meta, data: { valid: false, code: 'USAGE_EXCEEDED', keyId: 'key_bench', credits: 0 } },
  },
  {
    operation: 'keys.verifyKey',
    status: 200,
    transportError: undefined,
    weight: 0.03,
    body: { meta, data: { valid: false, code: 'RATE_LIMITED', keyId: 'key_bench' } },
  },
  { operation: 'keys.verifyKey', status: 200, transportError: undefined, weight: 0.01, body: { meta, data: { valid: false, code: 'NOT_FOUND' } } },
  {
    operation: 'ratelimit.limit',
    status: 200,
    transportError: undefined,
    weight: 0.24,
    body: { meta, data: { limit: 100, remaining: 42, reset: 1_767_225_600_000, success: true } },
  },
  {
    operation: 'ratelimit.limit',
    status: 200,
    transportError: undefined,
    weight: 0.04,
    body: { meta, data: { limit: 100, remaining: 0, reset: 1_767_225_600_000, success: false } },
  },
  {
    operation: 'keys.getKey',
    status: 200,
    transportError: undefined,
    weight: 0.045,
    body: { meta, data: { keyId: 'key_bench', start: 'sk_', enabled: true } },
  },
  {
    operation: 'keys.getKey',
    status: 404,
    transportError: undefined,
    weight: 0.004,
    body: { meta, error: { status: 404, title: 'Not Found', type: 'https://unkey.com/docs/errors/unkey/data/key_not_found' } },
  },
  {
    operation: 'keys.verifyKey',
    status: 500,
    transportError: undefined,
    weight: 0.0005,
    body: { meta, error: { status: 500, title: 'Internal Server Error' } },
  },
  { operation: 'keys.verifyKey', status: undefined, transportError: 'timeout', weight: 0.0005, body: undefined },
];

export interface MemoryReading {
  samples: number;
  heapUsed: number;
  /** Backing stores of typed arrays (the histograms' counts live here, outside the JS heap). */
  arrayBuffers: number;
  rss: number;
}

export interface RecorderMemoryResult {
  source: 'dist' | 'src';
  readings: MemoryReading[];
  /** Wall time of the record() loop (sample construction included), ns per call. */
  nsPerRecord: number;
  recordSeconds: number;
  finishMs: number;
  /** What finish() reported, as a sanity check. */
  requests: number;
  operations: number;
  timelinePoints: number;
  p50Ms: number;
  p99Ms: number;
}

function collect(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('the recorder memory benchmark needs node --expose-gc');
  for (let i = 0; i < 3; i++) gc();
}

function read(samples: number): MemoryReading {
  collect();
  const { heapUsed, arrayBuffers, rss } = process.memoryUsage();
  return { samples, heapUsed, arrayBuffers, rss };
}

function uniform(random: Random): number {
  return random.nextUint32() / 0x1_0000_0000;
}

/** Latency in ms: log-normal around 1.5 ms, with a 1 % tail 5–50× slower. */
function latencyMs(random: Random): number {
  const u1 = Math.max(uniform(random), 1e-12);
  const normal = Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * uniform(random));
  const base = 1.5 * Math.exp(0.5 * normal);
  return uniform(random) < 0.01 ? base * (5 + 45 * uniform(random)) : base;
}

/** Child side. */
export async function measureRecorderMemory(total = RECORDED_TOTAL): Promise<RecorderMemoryResult> {
  const { Recorder, source } = await loadRunnerModules();
  const random = new Random(SEED);
  const kindIndex = new Uint8Array(TABLE);
  const latencies = new Float64Array(TABLE);
  const queueShare = new Float64Array(TABLE);
  const cumulative = KINDS.map((_, i) => KINDS.slice(0, i + 1).reduce((sum, k) => sum + k.weight, 0));
  const totalWeight = cumulative[cumulative.length - 1] ?? 1;
  for (let j = 0; j < TABLE; j++) {
    const u = uniform(random) * totalWeight;
    const k = cumulative.findIndex((c) => u < c);
    kindIndex[j] = k < 0 ? 0 : k;
    latencies[j] = latencyMs(random);
    // Part of the latency spent in the generator's queue (corrected − uncorrected).
    queueShare[j] = uniform(random) < 0.05 ? uniform(random) * 0.5 : 0;
  }
  const msPerSample = 1000 / SYNTHETIC_RATE;
  const recorder = new Recorder();
  recorder.startMeasuring(0);

  const readings: MemoryReading[] = [read(0)];
  let recordNs = 0;
  let done = 0;
  for (const checkpoint of CHECKPOINTS.filter((c) => c > 0 && c <= total)) {
    const start = process.hrtime.bigint();
    for (let i = done; i < checkpoint; i++) {
      const j = i & (TABLE - 1);
      const kind = KINDS[kindIndex[j]!]!;
      const latency = latencies[(i * 7 + 3) & (TABLE - 1)]!;
      const intendedMs = i * msPerSample;
      recorder.record({
        operation: kind.operation,
        intendedMs,
        sentMs: intendedMs + latency * queueShare[j]!,
        doneMs: intendedMs + latency,
        status: kind.status,
        transportError: kind.transportError,
        body: kind.body,
        checkFailed: false,
        warmup: false,
      });
    }
    recordNs += Number(process.hrtime.bigint() - start);
    done = checkpoint;
    readings.push(read(done));
    progress(`runner memory: ${fmtInt(done)} samples recorded`);
  }

  const finishStart = process.hrtime.bigint();
  const figures = recorder.finish(done * msPerSample);
  const finishMs = secondsSince(finishStart) * 1000;
  return {
    source,
    readings,
    nsPerRecord: recordNs / Math.max(1, done),
    recordSeconds: recordNs / 1e9,
    finishMs,
    requests: figures.overall.requests,
    operations: figures.operations.length,
    timelinePoints: figures.timeline.length,
    p50Ms: figures.overall.latency.corrected.p50,
    p99Ms: figures.overall.latency.corrected.p99,
  };
}

const ENTRY = fileURLToPath(new URL('./runner-memory-child.ts', import.meta.url));

/** Parent side: runs the measurement in a fresh process with --expose-gc (the child reads no task). */
export function runRecorderMemoryChild(timeoutMs = 120_000): Promise<RecorderMemoryResult> {
  return runChild<RecorderMemoryResult>('recorder-memory', [], { entry: ENTRY, exposeGc: true, timeoutMs });
}

/** The report's lines on the recorder's memory (section 6 of the runner part) and its summary rows. */
export function memoryLines(m: RecorderMemoryResult): { text: string[]; summary: SummaryRow[] } {
  const at = (n: number) => m.readings.find((r) => r.samples === n);
  const base = at(0);
  const rows = m.readings.map((r) => [
    fmtInt(r.samples),
    fmtMB(r.heapUsed),
    fmtMB(r.arrayBuffers),
    fmtMB(r.heapUsed + r.arrayBuffers),
    base === undefined
      ? '—'
      : `${r.heapUsed + r.arrayBuffers - base.heapUsed - base.arrayBuffers >= 0 ? '+' : ''}${fmtMB(r.heapUsed + r.arrayBuffers - base.heapUsed - base.arrayBuffers)}`,
    fmtMB(r.rss),
  ]);
  const one = at(1_000_000);
  const ten = at(RECORDED_TOTAL);
  const text: string[] = [
    `6. Load runner memory: one Recorder fed ${fmtInt(RECORDED_TOTAL)} synthetic samples through record() (fresh process, --expose-gc, Recorder from ${m.source}/;`,
    '   no network; 3 operations, 10 kinds of answer incl. verification codes, 404/500 and timeouts; log-normal latencies, seeded),',
    '   memory after three full collections:',
    '',
    textTable(['samples recorded', 'heapUsed', 'arrayBuffers', 'heap + arrayBuffers', 'vs 0 samples', 'RSS'], rows),
    '',
  ];
  const summary: SummaryRow[] = [];
  if (one !== undefined && ten !== undefined) {
    const oneTotal = one.heapUsed + one.arrayBuffers;
    const tenTotal = ten.heapUsed + ten.arrayBuffers;
    const delta = tenTotal - oneTotal;
    text.push(
      `   At 10M vs 1M samples: heap + arrayBuffers ${fmtMB(tenTotal)} vs ${fmtMB(oneTotal)} (${delta >= 0 ? '+' : ''}${fmtMB(delta)}, ${fmtRatio(tenTotal / oneTotal)}); RSS ${fmtMB(ten.rss)} vs ${fmtMB(one.rss)}.`,
    );
    summary.push({
      figure: `Runner memory after ${fmtInt(RECORDED_TOTAL)} recorded requests vs after 1,000,000 (heap + typed arrays, after GC)`,
      median: `${fmtMB(tenTotal)} vs ${fmtMB(oneTotal)} (${delta >= 0 ? '+' : ''}${fmtMB(delta)}); RSS ${fmtMB(ten.rss)} vs ${fmtMB(one.rss)}`,
      target: 'flat',
    });
  }
  text.push(
    `   record(): ${fmtNs(m.nsPerRecord)} per call (${fmtInt(1e9 / m.nsPerRecord)} calls/s on one core; loop and sample object included); finish(): ${m.finishMs.toFixed(0)} ms`,
    `   (${fmtInt(m.requests)} requests in ${m.operations} operations, ${fmtInt(m.timelinePoints)} timeline seconds, p50 / p99 ${m.p50Ms} / ${m.p99Ms} ms).`,
    '   0 samples = after the recorder and the sample tables (~4.5 MB of typed arrays) exist; heap + arrayBuffers is what the',
    '   recorder can grow (its HDR histograms are typed arrays, outside heapUsed). The only state that grows with the run is one',
    `   timeline point per second of run time (here ${fmtInt(RECORDED_TOTAL)} samples span ${fmtInt(m.timelinePoints)} seconds at 40,000/s); RSS moves by a few MB with the allocator.`,
  );
  summary.push({ figure: 'Runner Recorder.record() time per call (one core)', median: fmtNs(m.nsPerRecord), target: '—' });
  summary.push({ figure: `Runner Recorder.finish() after ${fmtInt(RECORDED_TOTAL)} requests`, median: `${m.finishMs.toFixed(0)} ms`, target: '—' });
  return { text, summary };
}
