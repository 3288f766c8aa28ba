/**
 * The words every rendering (terminal summary, Markdown, HTML) uses for the load generator's own
 * figures: the banner of a generator-limited run and the one-line figures of a phase. One source,
 * so that the three say the same thing.
 */
import type { GeneratorPhase, GeneratorSection, RunReport, ThresholdResult } from './model.js';

/** What to do about a generator-limited run. */
export const GENERATOR_ADVICE =
  'lower the rate (--rate) or the connections (--connections), stop other work on this machine or run keysim on a quieter one, or run the generator on a different machine from the service';

/** The banner's headline and its detail, or undefined when the generator kept its schedule (or was not judged). */
export function generatorBanner(report: RunReport): { headline: string; detail: string } | undefined {
  const generator = report.generator;
  if (generator === undefined || !generator.limited) return undefined;
  const machine = generator.loadAverage > 0 ? ` The machine's load average was ${generator.loadAverage} on ${report.environment.cpus} CPUs.` : '';
  const inconclusive = report.thresholds.some((t) => thresholdVerdict(t) === 'inconclusive');
  return {
    headline: inconclusive
      ? 'INCONCLUSIVE — the load generator was the bottleneck, not necessarily the service.'
      : 'NOTE — the load generator could not keep its schedule; every threshold could still be judged.',
    detail:
      `keysim could not keep its own schedule (${generator.reasons.join('; ')}), so its latency and throughput figures measure the generator as well as the service. ` +
      'Its lag only adds to latency and takes from throughput: a latency or throughput threshold that passes anyway is passed; one that fails is judged again over the sends made on time, ' +
      `with the generator's own delay allowed for, and is failed if it still fails, inconclusive otherwise (error-rate thresholds and checks are judged as measured).${machine} ` +
      `${inconclusive ? 'To get a verdict' : 'For figures of the service alone'}: ${GENERATOR_ADVICE}.`,
  };
}

/** One phase's figures in a line, e.g. `late 3/500 (0.6 %) · loop delay p99 4.1 ms · main thread busy 35 % · process CPU 1.2 cores`. */
export function generatorPhaseText(phase: GeneratorPhase): string {
  const late =
    phase.scheduledSends === null || phase.lateSends === null
      ? 'no schedule (closed model)'
      : `late ${phase.lateSends}/${phase.scheduledSends}${phase.scheduledSends > 0 ? ` (${Math.round((phase.lateSends / phase.scheduledSends) * 1000) / 10} %)` : ''}`;
  return `${late} · loop delay p99 ${phase.loopDelayMs.p99} ms (max ${phase.loopDelayMs.max} ms) · main thread busy ${Math.round(phase.mainThreadBusy * 100)} % · process CPU ${phase.processCpuCores} cores`;
}

/**
 * The generator's figures over all measured phases in one line (the worst phase of each figure),
 * e.g. `late 3/500 (0.6 %) · loop delay p99 4.1 ms (max 9 ms) · main thread busy 35 % · process CPU 1.2 cores`
 * for one phase, `… over 19 phases (worst of each)` for several.
 */
export function generatorSummaryText(section: GeneratorSection): string | undefined {
  const phases = section.phases;
  if (phases.length === 0) return undefined;
  if (phases.length === 1) return generatorPhaseText(phases[0] as GeneratorPhase);
  const share = (p: GeneratorPhase) => (p.scheduledSends === null || p.lateSends === null || p.scheduledSends === 0 ? -1 : p.lateSends / p.scheduledSends);
  const worst = (pick: (p: GeneratorPhase) => number) => phases.reduce((a, b) => (pick(b) > pick(a) ? b : a));
  const late = worst(share);
  const delay = worst((p) => p.loopDelayMs.p99);
  const max = Math.max(...phases.map((p) => p.loopDelayMs.max));
  const busy = Math.max(...phases.map((p) => p.mainThreadBusy));
  const cpu = Math.max(...phases.map((p) => p.processCpuCores));
  const lateText =
    late.scheduledSends === null || late.lateSends === null
      ? 'no schedule (closed model)'
      : `late ${late.lateSends}/${late.scheduledSends} in phase "${late.name}"`;
  return `over ${phases.length} phases, the worst of each: ${lateText} · loop delay p99 ${delay.loopDelayMs.p99} ms in phase "${delay.name}" (max ${max} ms) · main thread busy ${Math.round(busy * 100)} % · process CPU ${cpu} cores`;
}

/** How the corrected latency is named: only the open model's is corrected (the closed model has no intended send times). */
export function latencyLabel(report: RunReport): string {
  return report.settings.model === 'open' ? 'corrected' : 'latency';
}

/** A threshold's verdict: an inconclusive one (the generator's lag may explain it) is not a failed one. */
export function thresholdVerdict(result: ThresholdResult): 'passed' | 'failed' | 'inconclusive' {
  return result.passed ? 'passed' : result.inconclusive === true ? 'inconclusive' : 'failed';
}
