/**
 * Two builds of the open model, A and B, against each other and against autocannon, interleaved:
 * `tsx bench/runner-ab.ts <distA> <distB> [pipelining] [rate|ceiling] [seconds] [repeats] [arrivalA] [arrivalB]`,
 * each dist built with `tsc -p tsconfig.build.json --outDir <dir>` (the same dist twice with
 * arrivals `even` and `burst` compares the schedules: runner-generators.ts). For a change to the generator's hot
 * path: each repetition runs A, B and autocannon in a rotating order against the same bare server
 * (bare-server.ts, its own process), and the ratios are taken within a repetition (B / A, and each
 * / autocannon), then summarised as min / median / max, so a busy moment of the shared machine
 * hits all sides of a ratio (docs/benchmarks.md#load-runner). `rate` fixes the requests per second
 * (both generators; CPU per request is the figure); `ceiling` asks the open model for twice
 * autocannon's best rate so far (completed per second is the figure). Not part of `npm run bench`.
 */
import { loadText } from './machine.js';
import { startServer } from './http-server.js';
import { type Arrival, type GeneratorRun, runAutocannon, runKeysim } from './runner-generators.js';
import { loadRunnerModules } from './runner-modules.js';
import { fmtRatio, max, median, min } from './stats.js';

const [distA, distB, pipeliningArg = '1', rateArg = '1000', secondsArg = '4', repeatsArg = '5', arrivalAArg = 'even', arrivalBArg = 'even'] =
  process.argv.slice(2);
if (distA === undefined || distB === undefined) throw new Error('usage: runner-ab.ts <distA> <distB> [pipelining] [rate|ceiling] [seconds] [repeats]');
const pipelining = Number(pipeliningArg);
const ceiling = rateArg === 'ceiling';
const seconds = Number(secondsArg);
const repeats = Number(repeatsArg);
const arrivalOf = (text: string): Arrival => {
  if (text !== 'even' && text !== 'burst') throw new Error(`arrival must be even or burst, got ${text}`);
  return text;
};
const arrivals = { A: arrivalOf(arrivalAArg), B: arrivalOf(arrivalBArg) };

type Arm = 'A' | 'B' | 'autocannon';
const ARMS: readonly Arm[] = ['A', 'B', 'autocannon'];
const mods = { A: await loadRunnerModules(distA), B: await loadRunnerModules(distB) };
const load = () => loadText(' / ');
const figure = (run: GeneratorRun) => (ceiling ? run.rate : run.generatorCpuUsPerRequest);
const spread = (xs: readonly number[]) => `${fmtRatio(min(xs))} / ${fmtRatio(median(xs))} / ${fmtRatio(max(xs))}`;

console.log(
  `pipelining ${pipelining}, ${ceiling ? 'ceiling (completed/s)' : `${rateArg}/s (CPU µs per request)`}, ${seconds} s runs, ${repeats} repetitions; arrivals A ${arrivals.A}, B ${arrivals.B}; load ${load()}`,
);
const server = await startServer('bare');
const runs: Record<Arm, GeneratorRun[]> = { A: [], B: [], autocannon: [] };
try {
  let best = (await runAutocannon(server, pipelining, 2)).rate;
  const asked = () => (ceiling ? Math.ceil((2 * best) / 1000) * 1000 : Number(rateArg));
  // Warm-up of both builds (JIT, connections).
  await runKeysim(mods.A, server, pipelining, asked(), 2, arrivals.A);
  await runKeysim(mods.B, server, pipelining, asked(), 2, arrivals.B);
  for (let rep = 0; rep < repeats; rep++) {
    const order = ARMS.map((_, i) => ARMS[(i + rep) % ARMS.length] as Arm);
    for (const arm of order) {
      const run =
        arm === 'autocannon'
          ? await runAutocannon(server, pipelining, seconds, ceiling ? undefined : Number(rateArg))
          : await runKeysim(mods[arm], server, pipelining, asked(), seconds, arrivals[arm]);
      if (arm === 'autocannon') best = Math.max(best, run.rate);
      if (!run.answersRight) throw new Error(`${arm}: ${run.problems}`);
      runs[arm].push(run);
    }
    const f = (arm: Arm) => figure(runs[arm][rep] as GeneratorRun);
    console.log(
      `run ${rep + 1}: A ${f('A').toFixed(1)}, B ${f('B').toFixed(1)}, autocannon ${f('autocannon').toFixed(1)}; B/A ${fmtRatio(f('B') / f('A'))}; load ${load()}`,
    );
  }
} finally {
  await server.stop();
}
const ratio = (x: Arm, y: Arm) => runs[x].map((run, i) => figure(run) / figure(runs[y][i] as GeneratorRun));
const med = (arm: Arm) => median(runs[arm].map(figure)).toFixed(1);
console.log(`medians: A ${med('A')}, B ${med('B')}, autocannon ${med('autocannon')}`);
console.log(`B / A (min / median / max): ${spread(ratio('B', 'A'))}`);
console.log(`A / autocannon: ${spread(ratio('A', 'autocannon'))}`);
console.log(`B / autocannon: ${spread(ratio('B', 'autocannon'))}`);
if (ceiling) {
  // At the ceiling the rate follows the CPU the generator got on a shared machine; its CPU per request does not.
  const cpu = (run: GeneratorRun) => run.generatorCpuUsPerRequest;
  const cpuRatios = runs.B.map((run, i) => cpu(run) / cpu(runs.A[i] as GeneratorRun));
  console.log(`CPU µs per request: medians A ${median(runs.A.map(cpu)).toFixed(1)}, B ${median(runs.B.map(cpu)).toFixed(1)}; B / A ${spread(cpuRatios)}`);
}
// The open model's lag: its corrected latency (from the intended send time) and its late sends.
const latencyOf = (key: 'correctedP50Ms' | 'correctedP99Ms') => (run: GeneratorRun) => run[key] ?? Number.NaN;
const lateShare = (run: GeneratorRun) => (run.late ?? 0) / Math.max(1, run.planned ?? 1);
for (const [label, of] of [
  ['corrected latency p50, ms', latencyOf('correctedP50Ms')],
  ['corrected latency p99, ms', latencyOf('correctedP99Ms')],
] as const) {
  const ratios = runs.B.map((run, i) => of(run) / of(runs.A[i] as GeneratorRun));
  console.log(`${label}: medians A ${median(runs.A.map(of)).toFixed(2)}, B ${median(runs.B.map(of)).toFixed(2)}; B / A ${spread(ratios)}`);
}
console.log(
  `late sends, share of planned: medians A ${(100 * median(runs.A.map(lateShare))).toFixed(2)} %, B ${(100 * median(runs.B.map(lateShare))).toFixed(2)} %`,
);
console.log(`load after: ${load()}`);
