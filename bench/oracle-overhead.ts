/**
 * Figure 6: what the oracle's machinery (docs/checking.md#the-oracle) costs — information only, nothing is asserted.
 *
 * 1. The simulator's throughput on keys.verifyKey with its journal off and on. The simulator runs
 *    alone in its own process (http-server-child.ts, as in the HTTP section); autocannon runs here.
 *    In the "on" runs this process starts the journal (/_sim/journal.start) and drains it with
 *    /_sim/journal.take every second, as the runner does (without the replay, which the runner does
 *    in the generator's process and part 2 measures). Every request carries an `x-keysim-seq`
 *    header in both kinds of run, so only the journal differs. Off and on alternate (order swapped
 *    every repetition); medians.
 * 2. The replay: JournalReplayer applying journaled keys.verifyKey entries, against the same
 *    verifications called directly on a fresh engine (oracle-child.ts replay).
 * 3. HistoryWriter.recordCall per keys.verifyKey call: the history's cost per request on the
 *    generator (oracle-child.ts history).
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { type ServerProcess, type ServerReady, startServer } from './http-server.js';
import { type AutocannonFigures, cpuUsBetween, fromAutocannon } from './http-load.js';
import type { HistoryResult, ReplayResult } from './oracle-child.js';
import { progress, runChild } from './subprocess.js';
import { type SummaryRow, fmtInt, fmtPercent, fmtRate, fmtRatio, max, median, min, secondsSince, textTable, yesNo } from './stats.js';

const CONNECTIONS = 50;
const PIPELINING = 1;
const RUN_SECONDS = 5;
/** Once, with the journal on (it exercises both paths), before the measured runs. */
const WARMUP_SECONDS = 2;
const REPEATS = 5;
/** How often the journal is drained during an "on" run, as the runner does. */
const DRAIN_INTERVAL_MS = 1_000;
/** Page size of /_sim/journal.take, as the oracle uses. */
const TAKE_PAGE = 5_000;
/** Request templates autocannon cycles over, each with its own x-keysim-seq value (prebuilt, so the header costs the generator nothing per request). */
const SEQ_TEMPLATES = 256;
const SEQ_HEADER = 'x-keysim-seq';
const PATH = '/v2/keys.verifyKey';

type Mode = 'off' | 'on';

interface DrainStats {
  /** Entries handed out by /_sim/journal.take during and just after the run. */
  journaled: number;
  takes: number;
  /** Entries without a seq or for another path (should be 0). */
  odd: number;
  overflowed: boolean;
  failure?: string;
}

/** One autocannon run, with the fields the HTTP benchmark's runs have (same meaning; "on": the final drain's CPU included). */
type JournalRun = AutocannonFigures & { mode: Mode; drain?: DrainStats };

// --- the simulator's journal -------------------------------------------------------------------

async function admin<T>(sim: ServerReady, op: string, body: unknown): Promise<T> {
  const res = await fetch(`${sim.url}/_sim/${op}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${sim.rootKey ?? ''}` },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as { data?: T };
  if (res.status !== 200 || json.data === undefined) throw new Error(`/_sim/${op} answered ${res.status}: ${JSON.stringify(json).slice(0, 300)}`);
  return json.data;
}

interface TakePage {
  entries: Array<{ path?: unknown; seq?: unknown }>;
  overflowed: boolean;
}

/** Drains the journal every second (one drain at a time, as the oracle does) until `stop()`, which drains once more. */
function startDrain(sim: ServerReady): { stop(): Promise<DrainStats> } {
  const stats: DrainStats = { journaled: 0, takes: 0, odd: 0, overflowed: false };
  let running: Promise<void> | undefined;
  const drainAll = async (): Promise<void> => {
    if (stats.failure !== undefined) return;
    try {
      for (;;) {
        const page = await admin<TakePage>(sim, 'journal.take', { max: TAKE_PAGE });
        stats.takes++;
        stats.journaled += page.entries.length;
        for (const e of page.entries) if (typeof e.seq !== 'number' || e.path !== PATH) stats.odd++;
        if (page.overflowed) stats.overflowed = true;
        if (page.entries.length < TAKE_PAGE) return;
      }
    } catch (error) {
      stats.failure = error instanceof Error ? error.message : String(error);
    }
  };
  const drain = async (): Promise<void> => {
    while (running !== undefined) await running;
    running = drainAll().finally(() => {
      running = undefined;
    });
    await running;
  };
  const timer = setInterval(() => void drain(), DRAIN_INTERVAL_MS);
  return {
    async stop() {
      clearInterval(timer);
      await drain();
      return stats;
    },
  };
}

// --- one autocannon run ------------------------------------------------------------------------

function requests(sim: ServerReady): autocannon.Request[] {
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${sim.rootKey ?? ''}` };
  const body = JSON.stringify({ key: sim.key });
  return Array.from({ length: SEQ_TEMPLATES }, (_, i) => ({
    method: 'POST' as const,
    path: PATH,
    headers: { ...headers, [SEQ_HEADER]: String(1_000_000 + i) },
    body,
  }));
}

async function runOnce(server: ServerProcess, mode: Mode, reqs: autocannon.Request[], durationSeconds: number): Promise<JournalRun> {
  const sim = server.ready;
  if (mode === 'on') await admin(sim, 'journal.start', {});
  const serverCpuStart = await server.cpu();
  const cpuStart = process.cpuUsage();
  const start = process.hrtime.bigint();
  const drain = mode === 'on' ? startDrain(sim) : undefined;
  let result: autocannon.Result;
  let drainStats: DrainStats | undefined;
  try {
    result = await new Promise<autocannon.Result>((resolve, reject) => {
      autocannon(
        {
          url: sim.url,
          method: 'POST',
          connections: CONNECTIONS,
          pipelining: PIPELINING,
          duration: durationSeconds,
          requests: reqs,
          verifyBody: (body) => typeof body === 'string' && body.includes('"code":"VALID"'),
        },
        (error, res) => (error === null || error === undefined ? resolve(res) : reject(error instanceof Error ? error : new Error(String(error)))),
      );
    });
  } finally {
    // "on": the last drain is part of the journal's cost, so the CPU window closes after it.
    drainStats = await drain?.stop();
  }
  const seconds = secondsSince(start);
  const cpu = process.cpuUsage(cpuStart);
  const serverCpuEnd = await server.cpu();
  if (mode === 'on') await admin(sim, 'journal.stop', {});
  return {
    mode,
    ...fromAutocannon(result, { seconds, generatorUs: cpu.user + cpu.system, serverUs: cpuUsBetween(serverCpuStart, serverCpuEnd) }),
    ...(drainStats === undefined ? {} : { drain: drainStats }),
  };
}

/** Every answer 2xx and VALID; "on": every executed request journaled with its seq, no overflow. */
function problemsOf(r: JournalRun): string | undefined {
  const problems: string[] = [];
  if (r.completed === 0 || r.ok2xx !== r.completed || r.non2xx + r.errors + r.timeouts + r.mismatches > 0) {
    problems.push(`completed ${r.completed}, 2xx ${r.ok2xx}, non-2xx ${r.non2xx}, errors ${r.errors}, timeouts ${r.timeouts}, wrong content ${r.mismatches}`);
  }
  const d = r.drain;
  if (d !== undefined) {
    if (d.failure !== undefined) problems.push(`draining failed: ${d.failure}`);
    if (d.overflowed) problems.push('the journal overflowed');
    if (d.odd > 0) problems.push(`${d.odd} journal entries without a seq or for another path`);
    // Every answered request was executed (journaled); nothing unsent was.
    if (d.journaled < r.ok2xx || d.journaled > r.sent) problems.push(`journaled ${d.journaled}, but autocannon counted ${r.ok2xx} answers and sent ${r.sent}`);
  }
  return problems.length === 0 ? undefined : `journal ${r.mode}: ${problems.join('; ')}`;
}

async function measureJournal(): Promise<{ runs: Record<Mode, JournalRun[]>; warm: JournalRun }> {
  const server = await startServer('sim');
  try {
    const reqs = requests(server.ready);
    progress(`oracle journal: warm-up (${WARMUP_SECONDS} s, journal on)`);
    const warm = await runOnce(server, 'on', reqs, WARMUP_SECONDS);
    const runs: Record<Mode, JournalRun[]> = { off: [], on: [] };
    for (let rep = 0; rep < REPEATS; rep++) {
      const order: Mode[] = rep % 2 === 0 ? ['off', 'on'] : ['on', 'off'];
      for (const mode of order) runs[mode].push(await runOnce(server, mode, reqs, RUN_SECONDS));
      progress(`oracle journal: run ${rep + 1}/${REPEATS}: off ${fmtRate(runs.off[rep]?.rate ?? 0)}, on ${fmtRate(runs.on[rep]?.rate ?? 0)}`);
    }
    return { runs, warm };
  } finally {
    await server.stop();
  }
}

// --- the child processes -----------------------------------------------------------------------

const CHILD = fileURLToPath(new URL('./oracle-child.ts', import.meta.url));

function runOracleChild<T>(task: 'replay' | 'history', timeoutMs = 90_000): Promise<T> {
  return runChild<T>(task, [], { entry: CHILD, timeoutMs });
}

// --- the section -------------------------------------------------------------------------------

function fmtUs(us: number): string {
  return Number.isNaN(us) ? '—' : `${us.toFixed(us < 10 ? 2 : 0)} µs`;
}

function spread(values: readonly number[], fmt: (n: number) => string): string {
  return `${fmt(min(values))} – ${fmt(max(values))}`;
}

export async function oracleReport(): Promise<{ text: string; summary: SummaryRow[] }> {
  const started = process.hrtime.bigint();
  const journal = await measureJournal();
  progress('oracle: replay (child process)');
  const replay = await runOracleChild<ReplayResult>('replay');
  progress('oracle: history (child process)');
  const history = await runOracleChild<HistoryResult>('history');

  const failures: string[] = [];
  const summary: SummaryRow[] = [];

  // 1. journal off / on
  const { runs } = journal;
  const med = {
    rate: { off: median(runs.off.map((r) => r.rate)), on: median(runs.on.map((r) => r.rate)) },
    cpu: { off: median(runs.off.map((r) => r.serverCpuUsPerRequest)), on: median(runs.on.map((r) => r.serverCpuUsPerRequest)) },
  };
  const journalRows = (['off', 'on'] as const).map((mode) => {
    const list = runs[mode];
    for (const r of list) {
      const problem = problemsOf(r);
      if (problem !== undefined) failures.push(problem);
    }
    const journaled = mode === 'on' ? fmtInt(list.reduce((a, r) => a + (r.drain?.journaled ?? 0), 0)) : '—';
    const takes = mode === 'on' ? fmtInt(median(list.map((r) => r.drain?.takes ?? 0))) : '—';
    return [
      mode,
      fmtRate(med.rate[mode]),
      spread(
        list.map((r) => r.rate),
        fmtRate,
      ),
      fmtPercent(median(list.map((r) => r.serverCpuShare))),
      fmtUs(med.cpu[mode]),
      fmtPercent(median(list.map((r) => r.generatorCpuShare))),
      fmtInt(list.reduce((a, r) => a + r.completed, 0)),
      journaled,
      takes,
      yesNo(list.every((r) => problemsOf(r) === undefined)),
    ];
  });
  const warmProblem = problemsOf(journal.warm);
  if (warmProblem !== undefined) failures.push(`warm-up: ${warmProblem}`);
  const rateRatio = med.rate.on / med.rate.off;
  const cpuRatio = med.cpu.on / med.cpu.off;
  summary.push({
    figure: `Simulator keys.verifyKey, journal on / off (drained every second; ${CONNECTIONS} connections, pipelining ${PIPELINING})`,
    median: `${fmtRatio(rateRatio)} (${fmtRate(med.rate.on)} vs ${fmtRate(med.rate.off)}; server CPU/request on / off ${fmtRatio(cpuRatio)})`,
    target: '— (information only)',
  });

  // 2. replay
  const replayRate = median(replay.replayPerSecond);
  const directRate = median(replay.directPerSecond);
  const replayRatio = replayRate / directRate;
  if (replay.wrongAnswers > 0) failures.push(`replay: ${replay.wrongAnswers} answers were not 200 VALID with the expected balance`);
  if (replay.realAgreeing !== replay.realCompared)
    failures.push(`replay: ${replay.realCompared - replay.realAgreeing} of ${replay.realCompared} replayed answers differ from the simulator's`);
  summary.push({
    figure: `Oracle replay of journaled keys.verifyKey entries (JournalReplayer.apply, ${fmtInt(replay.entries)} entries)`,
    median: `${fmtRate(replayRate)} (replay / engine.keys.verifyKey directly ${fmtRatio(replayRatio)}; direct ${fmtRate(directRate)})`,
    target: '— (information only)',
  });

  // 3. history
  const syncUs = median(history.syncUsPerCall);
  const drainedUs = median(history.drainedUsPerCall);
  if (history.written !== history.calls * history.runs) failures.push(`history: ${history.written} events written, expected ${history.calls * history.runs}`);
  summary.push({
    figure: 'History: HistoryWriter.recordCall per keys.verifyKey call (generator side)',
    median: `${fmtUs(syncUs)} (${fmtUs(drainedUs)} until gzip caught up)`,
    target: '— (information only)',
  });

  const onRate = med.rate.on;
  // http-server-child.ts starts the compiled simulator when dist/ is built.
  const serverSource = existsSync(new URL('../dist/src/http/index.js', import.meta.url)) ? 'from dist/' : 'from its sources: dist/ not built';
  const text = [
    `6. Oracle overhead, information only: the simulator's journal, the replay, the history`,
    '',
    `   Journal off vs on: autocannon (${CONNECTIONS} connections, pipelining ${PIPELINING}) in the parent process against keys.verifyKey on the simulator alone`,
    `   in its own process on 127.0.0.1 (${serverSource}); ${RUN_SECONDS} s per run after a ${WARMUP_SECONDS} s warm-up, median of ${REPEATS} runs each, off and on alternating.`,
    `   Every request carries ${SEQ_HEADER} in both; "on" = /_sim/journal.start before the run, /_sim/journal.take (pages of ${fmtInt(TAKE_PAGE)})`,
    `   every ${DRAIN_INTERVAL_MS / 1000} s from this process and once after it, as the runner does (without the replay: see below).`,
    '',
    textTable(
      ['journal', 'median', 'range (min – max)', 'server CPU', 'CPU/request', 'generator CPU', 'requests', 'journaled', 'takes/run', 'answers right'],
      journalRows,
    ),
    '',
    textTable(['on / off', 'throughput', 'server CPU/request'], [['ratio', fmtRatio(rateRatio), fmtRatio(cpuRatio)]]),
    '',
    '   answers right = every response 2xx and VALID, no errors or timeouts; "on" also: every executed request journaled with its',
    "   seq (journaled between the answers counted and the requests sent), no overflow. CPU/request = the server's CPU time per",
    '   answered request ("on": the takes included), less sensitive than the rate to what else runs on this two-core machine.',
    '',
    `   Replay (a fresh process, keysim from ${replay.source}/): a real simulator journaled ${fmtInt(replay.realCompared)} keys.verifyKey requests sent over HTTP; its`,
    `   journal start (snapshot ${fmtInt(replay.snapshotBytes)} bytes, ${fmtInt(replay.keys)} keys with credits and a monthly refill) and those entries (~${fmtInt(replay.entryBytes)} bytes`,
    `   of JSON each) are the pattern of ${fmtInt(replay.entries)} entries. Per run a fresh JournalReplayer applies them all; the baseline calls`,
    '   engine.keys.verifyKey with the same inputs on a fresh Engine restored from the same snapshot. Median of ' + `${replay.runs} runs each, alternating:`,
    '',
    textTable(
      ['path', 'median', 'range (min – max)', 'µs/entry'],
      [
        ['JournalReplayer.apply', fmtRate(replayRate), spread(replay.replayPerSecond, fmtRate), fmtUs(1e6 / replayRate)],
        ['engine.keys.verifyKey', fmtRate(directRate), spread(replay.directPerSecond, fmtRate), fmtUs(1e6 / directRate)],
        ['replay / direct', fmtRatio(replayRatio), '', ''],
      ],
    ),
    '',
    `   The replay's answers to the ${fmtInt(replay.realCompared)} real requests equal the simulator's: ${replay.realAgreeing}/${replay.realCompared}; wrong answers or balances: ${replay.wrongAnswers}.`,
    `   JournalReplayer.create (snapshot restored) ${replay.createMs.toFixed(1)} ms, not in the rates. At ${fmtRate(onRate)} (the journal-on median above)`,
    `   the replay needs ${fmtPercent(onRate / replayRate)} of one core of the generator's process.`,
    '',
    `   History (a fresh process, keysim from ${history.source}/): HistoryWriter.recordCall on a keys.verifyKey call whose answer a real simulator gave`,
    `   (key id learned from its createKey; request ids and balances varied), service and wall times given; ${history.runs} × ${fmtInt(history.calls)} calls:`,
    '',
    textTable(
      ['part', 'median', 'range (min – max)'],
      [
        ['recordCall (synchronous)', fmtUs(syncUs), spread(history.syncUsPerCall, fmtUs)],
        ['until gzip caught up', fmtUs(drainedUs), spread(history.drainedUsPerCall, fmtUs)],
      ],
    ),
    '',
    "   synchronous = the loop of recordCall alone: what blocks the generator's event loop per request (whitelisting, the key-id",
    '   lookup by SHA-256, JSON, the chunk); until gzip caught up = until writer.drain() resolved after the loop (gzip level 1 works',
    `   off the main thread). At ${fmtRate(onRate)} recordCall alone takes ${fmtPercent((syncUs * onRate) / 1e6)} of one core.`,
    `   Section time: ${secondsSince(started).toFixed(0)} s.`,
  ].join('\n');
  if (failures.length > 0) throw new Error(`wrong answers during the oracle benchmark:\n${failures.join('\n')}\n\n${text}`);
  return { text, summary };
}
