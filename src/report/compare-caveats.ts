/**
 * What may make a comparison (compare.ts) say more than the runs support: a load generator that
 * fell behind (its figures held back), runs of different scenarios or loads, partial runs.
 */
import type { RunReport } from './model.js';
import type { Figure, FigureComparison } from './compare-model.js';
import type { CompareInput } from './compare-run-values.js';

/** Figures a generator that fell behind its schedule distorts: it delays sends, and the open model counts the delay. */
const GENERATOR_PACED: ReadonlySet<Figure> = new Set<Figure>(['p50', 'p90', 'p99', 'p999', 'throughput']);

/**
 * A run whose generator could not keep its schedule measured the generator as much as the service
 * (docs/compare.md#the-busy-machine): its latency and throughput can move with the machine's load
 * alone, so a "worse" or "better" on them is held back as inconclusive, with the reason. "Same"
 * stands (the change is small whatever caused it), and so do the error shares.
 */
export function holdBackGeneratorLimited(figures: FigureComparison[], base: readonly RunReport[], cand: readonly RunReport[]): void {
  const limited = (reports: readonly RunReport[]) => reports.some((r) => r.generator?.limited === true);
  const sides = [limited(base) ? 'baseline' : '', limited(cand) ? 'candidate' : ''].filter((s) => s !== '');
  if (sides.length === 0) return;
  const who = sides.length > 1 ? 'on both sides' : `on the ${sides[0] ?? ''} side`;
  const note = `held back: the load generator could not keep its schedule ${who}, so the change may be the machine's, not the service's`;
  for (const f of figures) {
    if (!GENERATOR_PACED.has(f.figure)) continue;
    // Inconclusive by its interval too: more runs on the same machine would not settle it.
    if (f.verdict === 'inconclusive') f.limitedBy = 'generator';
    if (f.verdict !== 'worse' && f.verdict !== 'better') continue;
    f.verdict = 'inconclusive';
    f.limitedBy = 'generator';
    f.note = f.note === undefined ? note : `${f.note}; ${note}`;
  }
}

/** Notes on the inputs themselves: different scenarios or loads, a lagging generator, a partial run. */
export function inputNotes(all: readonly CompareInput[], base: readonly RunReport[], cand: readonly RunReport[]): string[] {
  const notes: string[] = [];
  const scenarios = new Set(all.map((i) => i.report.scenario.name));
  if (scenarios.size > 1) notes.push(`The runs are of different scenarios (${[...scenarios].join(', ')}): the figures may differ for that reason alone.`);
  const settings = (r: RunReport) => `${r.settings.model} ${r.settings.model === 'open' ? `${r.settings.rate}/s` : `${r.settings.connections} connections`}`;
  const baseSettings = new Set(base.map(settings));
  const candSettings = new Set(cand.map(settings));
  if ([...candSettings].some((s) => !baseSettings.has(s)))
    notes.push(`The load differs: baseline ${[...baseSettings].join(', ')}, candidate ${[...candSettings].join(', ')}.`);
  for (const input of all) {
    if (input.report.generator?.limited === true)
      notes.push(`${input.source}: the load generator could not keep its schedule; its latency and throughput measure the generator as much as the service.`);
    if (input.report.status !== 'completed') notes.push(`${input.source}: the run was ${input.report.status}; its figures are partial.`);
  }
  return notes;
}
