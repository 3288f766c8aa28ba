/**
 * Checks a value a user's file exports against the scenario contract (scenario.ts), so that a
 * mistake is named before any load instead of failing halfway through a run: scenario files are
 * loaded at run time, where the type checker cannot help.
 */
import { isRecord } from '../scenario/index.js';
import type { Scenario } from '../scenario/index.js';
import { clockStartMs } from '../scenario/index.js';
import { parseThreshold } from './thresholds.js';
import { ruleIdProblems } from '../rules/index.js';

/** Whether an export is meant as a scenario (an object with a `setup` or a `mix`). */
export function looksLikeScenario(value: unknown): boolean {
  return isRecord(value) && ('setup' in value || 'mix' in value);
}

/** What is wrong with `value` as a scenario, one message per problem; empty when it is one. */
export function scenarioProblems(value: unknown): string[] {
  if (!isRecord(value))
    return [`is not a scenario object (got ${value === null ? 'null' : typeof value}): export default defineScenario({ name, description, setup, mix })`];
  const problems: string[] = [];
  if (typeof value.name !== 'string' || value.name.trim() === '') problems.push('has no name (a non-empty string)');
  else if (!/^[\w.-]+$/.test(value.name)) problems.push(`name "${value.name}" may hold only letters, digits, ".", "_" and "-" (it names the report's folder)`);
  if (value.description !== undefined && typeof value.description !== 'string') problems.push('description must be a string');
  if (typeof value.setup !== 'function') problems.push('has no setup function (async setup(ctx) { … return fixtures; })');
  if (!Array.isArray(value.mix)) problems.push('has no mix (an array of { weight, build })');
  else if (value.mix.length === 0) problems.push('has an empty mix: give it at least one { weight, build } entry');
  else {
    for (const [i, entry] of value.mix.entries()) {
      if (!isRecord(entry)) problems.push(`mix[${i}] is not an object`);
      else {
        if (typeof entry.weight !== 'number' || !(entry.weight > 0) || !Number.isFinite(entry.weight)) problems.push(`mix[${i}].weight must be a number > 0`);
        if (typeof entry.build !== 'function') problems.push(`mix[${i}] has no build function`);
        if (entry.check !== undefined && typeof entry.check !== 'function') problems.push(`mix[${i}].check must be a function`);
      }
    }
  }
  for (const fn of ['phases', 'finish'] as const) {
    if (value[fn] !== undefined && typeof value[fn] !== 'function') problems.push(`${fn} must be a function`);
  }
  if (value.requires !== undefined && (!Array.isArray(value.requires) || value.requires.some((r) => r !== 'clock')))
    problems.push("requires must be ['clock'] or []");
  if (value.clockMode !== undefined) {
    if (value.clockMode !== 'frozen' && value.clockMode !== 'running')
      problems.push(`clockMode must be 'frozen' or 'running', got ${JSON.stringify(value.clockMode)}`);
    else if (value.clockMode === 'running' && (value.clock !== undefined || (Array.isArray(value.requires) && value.requires.includes('clock')))) {
      problems.push(
        "clockMode 'running' cannot go with requires: ['clock'] or clock.startAt: a clock that runs by itself cannot be moved in steps (drop one of them)",
      );
    }
  }
  problems.push(...ruleIdProblems(value.rules));
  if (value.thresholds !== undefined) {
    if (!Array.isArray(value.thresholds)) problems.push('thresholds must be an array of strings such as "errors == 0"');
    else {
      for (const t of value.thresholds) {
        const parsed = typeof t === 'string' ? parseThreshold(t) : { ok: false as const, error: 'not a string' };
        if (!parsed.ok) problems.push(`threshold ${JSON.stringify(t)}: ${parsed.error}`);
      }
    }
  }
  if (value.clock !== undefined) {
    if (!isRecord(value.clock)) problems.push("clock must be { startAt: '<ISO-8601 instant>' }");
    else {
      try {
        clockStartMs({ clock: value.clock as { startAt: string | number } });
      } catch (error) {
        problems.push(error instanceof Error ? error.message : String(error));
      }
    }
  }
  return problems;
}

/** `value` as a scenario, or throws an Error listing what is wrong, prefixed with `where`. */
export function asScenario(value: unknown, where: string): Scenario<unknown> {
  const problems = scenarioProblems(value);
  if (problems.length > 0) throw new Error(`${where} ${problems.join('; ')}`);
  const scenario = value as unknown as Scenario<unknown>;
  return scenario.description === undefined ? { ...scenario, description: '' } : scenario;
}
