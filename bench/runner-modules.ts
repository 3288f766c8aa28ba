/**
 * keysim's load layer as users run it: the compiled `dist/` (built by `npm run bench`) when it
 * exists, else the sources through tsx, whose per-closure wrappers cost a little CPU per request.
 * runner-ab.ts loads two builds side by side (`distDir`: another build's `dist/`).
 */
import { existsSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import type * as OpenModel from '../src/load/executors/open-model.js';
import type * as Plan from '../src/load/plan/plan.js';
import type * as RecorderModule from '../src/load/metrics/recorder.js';

export interface RunnerModules {
  OpenModelExecutor: typeof OpenModel.OpenModelExecutor;
  Recorder: typeof RecorderModule.Recorder;
  planPhases: typeof Plan.planPhases;
  plannedCount: typeof Plan.plannedCount;
  /** Where they were loaded from, for the report. */
  source: 'dist' | 'src';
}

export async function loadRunnerModules(distDir?: string): Promise<RunnerModules> {
  const built = (file: string) =>
    distDir === undefined ? new URL(`../dist/src/load/${file}.js`, import.meta.url) : pathToFileURL(`${distDir}/src/load/${file}.js`);
  if (distDir !== undefined && !existsSync(built('open-model'))) throw new Error(`no build in ${distDir} (tsc -p tsconfig.build.json --outDir ${distDir})`);
  if (existsSync(built('open-model')) && existsSync(built('recorder')) && existsSync(built('plan'))) {
    const [open, recorder, plan] = (await Promise.all([import(built('open-model').href), import(built('recorder').href), import(built('plan').href)])) as [
      typeof OpenModel,
      typeof RecorderModule,
      typeof Plan,
    ];
    return {
      OpenModelExecutor: open.OpenModelExecutor,
      Recorder: recorder.Recorder,
      planPhases: plan.planPhases,
      plannedCount: plan.plannedCount,
      source: 'dist',
    };
  }
  const [open, recorder, plan] = await Promise.all([
    import('../src/load/executors/open-model.js'),
    import('../src/load/metrics/recorder.js'),
    import('../src/load/plan/plan.js'),
  ]);
  return {
    OpenModelExecutor: open.OpenModelExecutor,
    Recorder: recorder.Recorder,
    planPhases: plan.planPhases,
    plannedCount: plan.plannedCount,
    source: 'src',
  };
}
