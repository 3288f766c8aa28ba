/**
 * Before any load: every mix entry of a run (the scenario's mix and each phase's own) is built
 * once, on a copy of the fixtures and with a random of its own, and the operation it names is
 * checked (operation-names.ts). The copy keeps builds that count what they built (credits-drain's
 * round robin) unchanged for the real load; fixtures that cannot be copied (they hold functions)
 * are built on as they are. A build that throws here is left to the load, which reports it.
 */
import { Random } from '../../engine/index.js';
import { operationProblem } from './operation-names.js';
import type { MixEntry, PhaseSpec, Scenario } from './scenario.js';

function copyOf(fixtures: unknown): unknown {
  try {
    return structuredClone(fixtures);
  } catch {
    return fixtures;
  }
}

/** One message per mix entry whose request names an unknown operation; empty when all are known. */
export function mixOperationProblems(scenario: Scenario<unknown>, specs: ReadonlyArray<PhaseSpec<unknown>>, fixtures: unknown, seed: number): string[] {
  const mixes = new Map<ReadonlyArray<MixEntry<unknown>>, string>([[scenario.mix, 'the mix']]);
  for (const spec of specs) if (spec.mix !== undefined && !mixes.has(spec.mix)) mixes.set(spec.mix, `the mix of phase "${spec.name}"`);
  const problems: string[] = [];
  const random = new Random(seed ^ 0x5eed);
  for (const [mix, where] of mixes) {
    for (const [i, entry] of mix.entries()) {
      let op: unknown;
      try {
        op = entry.build(copyOf(fixtures), random).op;
      } catch {
        continue;
      }
      const problem = operationProblem(op, `${where}, entry ${entry.name === undefined ? i : `"${entry.name}"`},`);
      if (problem !== undefined) problems.push(problem);
    }
  }
  return problems;
}
