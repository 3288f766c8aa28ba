/**
 * Figure 1: verifications per second, in-process on one core, for a key with credits and for an
 * unknown key, with each SHA-256 the engine can use. The baseline is the hash alone on the same
 * key, measured in the same process and interleaved with the verification runs, so the reader
 * sees what share of a verification is hashing.
 */
import { HASH_LABEL, HASH_SHORT, HASH_VARIANTS, type HashVariant, buildEngine, createCreditKey, sha256Of } from './fixture.js';
import { progress, runChild } from './subprocess.js';
import { type SummaryRow, fmtNs, fmtPercent, fmtRate, fmtRatio, max, median, min, secondsSince, textTable, yesNo } from './stats.js';

export const VERIFY_TARGET_PER_S = 500_000;
const ITERATIONS = 1_000_000;
const WARMUP = 200_000;
const RUNS = 5;
/** Large enough never to run out during the benchmark, and a valid credit amount (≤ 2^53 − 1). */
const BALANCE = 1e12;

type Case = 'credits' | 'unknown' | 'hash';

export interface VerifyChildResult {
  variant: HashVariant;
  iterations: number;
  keyLength: number;
  /** Calls per second of each run (wall clock). */
  runs: Record<Case, number[]>;
  /** CPU time / wall time of each run: well below 1 means the process was descheduled (a noisy run). */
  cpuShare: Record<Case, number[]>;
}

/** Child side: runs in its own process, one hash variant. */
export function measureVerify(variant: HashVariant): VerifyChildResult {
  const fx = buildEngine(variant);
  const key = createCreditKey(fx, BALANCE);
  // Same length and alphabet as a real key, but not in the store.
  const unknown = key.slice(0, -1) + (key.endsWith('z') ? 'y' : 'z');
  const sha256 = sha256Of(variant);
  const verify = fx.engine.keys.verifyKey;

  const loops: Record<Case, (n: number) => void> = {
    credits: (n) => {
      let valid = 0;
      for (let i = 0; i < n; i++) {
        const r = verify(undefined, { key });
        if (r.ok && r.value.code === 'VALID') valid++;
      }
      if (valid !== n) throw new Error(`expected ${n} VALID verifications, got ${valid}`);
    },
    unknown: (n) => {
      let notFound = 0;
      for (let i = 0; i < n; i++) {
        const r = verify(undefined, { key: unknown });
        if (r.ok && r.value.code === 'NOT_FOUND') notFound++;
      }
      if (notFound !== n) throw new Error(`expected ${n} NOT_FOUND verifications, got ${notFound}`);
    },
    hash: (n) => {
      // Use every result, so no call can be optimised away.
      let length = 0;
      for (let i = 0; i < n; i++) length += sha256(key).length;
      if (length !== 32 * n) throw new Error('unexpected hash length (a key digest is 32 characters, one a byte)');
    },
  };
  const cases: Case[] = ['credits', 'unknown', 'hash'];
  progress(`verify (${HASH_SHORT[variant]}): warm-up`);
  for (const c of cases) loops[c](WARMUP);
  const runs: Record<Case, number[]> = { credits: [], unknown: [], hash: [] };
  const cpuShare: Record<Case, number[]> = { credits: [], unknown: [], hash: [] };
  for (let run = 0; run < RUNS; run++) {
    // Rotate the order so that a noisy moment on the shared machine does not always hit the same case.
    for (let j = 0; j < cases.length; j++) {
      const c = cases[(run + j) % cases.length]!;
      const cpuStart = process.cpuUsage();
      const start = process.hrtime.bigint();
      loops[c](ITERATIONS);
      const seconds = secondsSince(start);
      const cpu = process.cpuUsage(cpuStart);
      runs[c].push(ITERATIONS / seconds);
      cpuShare[c].push((cpu.user + cpu.system) / 1e6 / seconds);
    }
    progress(`verify (${HASH_SHORT[variant]}): run ${run + 1}/${RUNS}`);
  }
  return { variant, iterations: ITERATIONS, keyLength: key.length, runs, cpuShare };
}

/** Parent side: one child per hash variant, then the table. */
export async function verifyReport(): Promise<{ text: string; summary: SummaryRow[] }> {
  // One after the other: these are timings, and the machine has two cores.
  const results: VerifyChildResult[] = [];
  for (const variant of HASH_VARIANTS) results.push(await runChild<VerifyChildResult>('verify', [variant]));
  const med = (r: VerifyChildResult, c: Case) => median(r.runs[c]);
  const range = (r: VerifyChildResult, c: Case) => `${fmtRate(min(r.runs[c]))} – ${fmtRate(max(r.runs[c]))}`;
  const target = `≥ ${fmtRate(VERIFY_TARGET_PER_S)}`;
  const rows: string[][] = [];
  const label: Record<Case, string> = { credits: 'verify, key with credits', unknown: 'verify, unknown key', hash: 'sha256 alone (baseline)' };
  for (const r of results) {
    for (const c of ['credits', 'unknown', 'hash'] as const) {
      const rate = med(r, c);
      const isVerify = c !== 'hash';
      rows.push([
        label[c],
        HASH_SHORT[r.variant],
        fmtRate(rate),
        range(r, c),
        fmtNs(1e9 / rate),
        fmtPercent(median(r.cpuShare[c])),
        isVerify ? fmtPercent(rate / med(r, 'hash')) : '—',
        isVerify ? target : '—',
        isVerify ? yesNo(rate >= VERIFY_TARGET_PER_S) : '—',
      ]);
    }
  }
  const ts = results.find((r) => r.variant === 'ts');
  const node = results.find((r) => r.variant === 'node');
  const first = results[0];
  const lines = [
    `1. Verifications per second (in-process, one core, ${(first?.iterations ?? ITERATIONS).toLocaleString('en-US')} calls per run after ${WARMUP.toLocaleString('en-US')} warm-up, median of ${RUNS} runs; key of ${first?.keyLength ?? '?'} characters, credits with monthly refill)`,
    '',
    textTable(['case', 'sha256', 'median', 'range (min – max)', 'per call', 'CPU share', 'hash share', 'target', 'meets target'], rows),
    '',
    '   hash share = time of the sha256 call alone / time of a whole verification (same process, same key).',
    '   CPU share = CPU time / wall time of the run (median); well below 100 % means the shared machine took the core away.',
  ];
  if (ts !== undefined && node !== undefined) {
    lines.push(
      `   node:crypto vs pure-TS: verify with credits ${fmtRatio(med(node, 'credits') / med(ts, 'credits'))}, unknown key ${fmtRatio(med(node, 'unknown') / med(ts, 'unknown'))}, hash alone ${fmtRatio(med(node, 'hash') / med(ts, 'hash'))}.`,
    );
  }
  const summary: SummaryRow[] = results.flatMap((r) => [
    { figure: `Verifications/s, key with credits, ${HASH_LABEL[r.variant]}`, median: fmtRate(med(r, 'credits')), target },
    { figure: `Verifications/s, unknown key, ${HASH_LABEL[r.variant]}`, median: fmtRate(med(r, 'unknown')), target },
  ]);
  return { text: lines.join('\n'), summary };
}
