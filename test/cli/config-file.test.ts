/**
 * The configuration file of `keysim run`: found in the working directory or given with --config,
 * JSON, TypeScript or JavaScript; every wrong key or type is a usage error naming the file, the key
 * and what is expected; flags override it, thresholds add, and its stages layer with the flags'.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, test } from 'vitest';
import { checkConfig } from '../../src/cli/config.js';
import { loadRunConfig } from '../../src/cli/config-file.js';
import { EXIT, UsageError } from '../../src/cli/exit-codes.js';
import { withConfig } from '../../src/cli/run-config.js';
import { settingsFor } from '../../src/cli/run-settings.js';
import { defineScenario } from '../../src/load/scenario/scenario.js';
import { cleanUpCli, cli, runFolders, tempDir } from '../helpers/cli.js';

afterAll(cleanUpCli);

const INDEX = fileURLToPath(new URL('../../src/index.js', import.meta.url));

function refused(value: unknown, message: RegExp): void {
  let error: unknown;
  try {
    checkConfig(value, 'keysim.config.json');
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(UsageError);
  expect((error as Error).message).toMatch(/^keysim\.config\.json: /);
  expect((error as Error).message).toMatch(message);
}

describe('checkConfig: a wrong key or type names the file, the key and what is expected', () => {
  test.each([
    [[1, 2], /the configuration must be an object/],
    [{ rat: 100 }, /unknown key "rat"\. The keys are: target, rootKeyEnv/],
    [{ rate: 'fast' }, /"rate" must be a positive number, got "fast"/],
    [{ rate: 0 }, /"rate" must be a positive number, got 0/],
    [{ connections: 2.5 }, /"connections" must be a positive whole number, got 2\.5/],
    [{ duration: '10' }, /"duration" must be a duration longer than 0 with its unit/],
    [{ duration: 10 }, /"duration" must be a duration with its unit.*got 10/],
    [{ warmup: '5' }, /"warmup" must be a duration with its unit/],
    [{ timeout: '0s' }, /"timeout" must be a duration longer than 0/],
    [{ model: 'half-open' }, /"model" must be "open" or "closed", got "half-open"/],
    [{ seed: 1.5 }, /"seed" must be a whole number ≥ 0, got 1\.5/],
    [{ history: 'yes' }, /"history" must be true or false, got "yes"/],
    [{ target: 'production' }, /"target" must be "sim" or a URL/],
    [{ rootKeyEnv: 'sk_live_123 456' }, /"rootKeyEnv" must be the name of an environment variable/],
    [{ thresholds: 'errors == 0' }, /"thresholds" must be a list of strings/],
    [{ thresholds: ['p98 < 20ms'] }, /"thresholds": Unknown percentile "p98"/],
    [{ scenarios: [1] }, /"scenarios" must be a list of strings/],
    [{ stages: '30s:100' }, /"stages" must be a list of stages/],
    [{ stages: ['30:100'] }, /"stages"\[0\]: .*has no unit/],
    [{ stages: [{ duration: '30s', target: 100, hold: true }] }, /"stages"\[0\]: unknown key "hold"/],
    [{ stages: [{ duration: '30s', target: '100' }] }, /"stages"\[0\] must be a stage/],
    [{ stages: ['0s:10'] }, /"stages": the stages last no time in total/],
    [{ stages: ['30s:100'], rate: 50 }, /"stages" sets both the rate and the duration: drop "rate"/],
    [{ startRate: 10 }, /"startRate" is the rate the first stage ramps from: it needs "stages"/],
  ])('%j', (value, message) => refused(value, message));

  test('a good configuration: stages as text or objects, everything else as the flags take it', () => {
    const c = checkConfig(
      {
        target: 'sim',
        thresholds: ['errors == 0'],
        scenarios: ['smoke'],
        stages: ['30s:100', { duration: '1m', target: 200 }],
        startRate: 5,
        warmup: '0',
        connections: 8,
        model: 'open',
        seed: 0,
        history: true,
      },
      'keysim.config.json',
    );
    expect(c.shape).toEqual({
      warmupMs: 0,
      startRate: 5,
      stages: [
        { durationMs: 30_000, target: 100 },
        { durationMs: 60_000, target: 200 },
      ],
    });
    expect(c).toMatchObject({ target: 'sim', thresholds: ['errors == 0'], scenarios: ['smoke'], connections: 8, model: 'open', seed: 0, history: true });
  });
});

describe('finding and loading the file', () => {
  test('keysim.config.json in the folder; none; --no-config; two files refused', async () => {
    const dir = tempDir();
    expect(await loadRunConfig(undefined, dir)).toBeUndefined();
    writeFileSync(join(dir, 'keysim.config.json'), JSON.stringify({ rate: 25, thresholds: ['errors == 0'] }));
    const config = await loadRunConfig(undefined, dir);
    expect(config?.shape.rate).toBe(25);
    expect(config?.file).toBe(join(dir, 'keysim.config.json'));
    expect(await loadRunConfig(false, dir)).toBeUndefined();
    writeFileSync(join(dir, 'keysim.config.mjs'), 'export default { rate: 30 };\n');
    await expect(loadRunConfig(undefined, dir)).rejects.toThrow(/Found keysim\.config\.mjs and keysim\.config\.json: keep one/);
  });

  test('a .ts config typed with defineConfig from keysim', async () => {
    const dir = tempDir();
    const file = join(dir, 'keysim.config.ts');
    writeFileSync(
      file,
      `import { defineConfig } from ${JSON.stringify(INDEX)};\nconst rate: number = 40;\nexport default defineConfig({ rate, duration: '3s', thresholds: ['errors == 0'] });\n`,
    );
    const config = await loadRunConfig(undefined, dir);
    expect(config?.shape).toEqual({ rate: 40, durationMs: 3_000 });
    expect(config?.thresholds).toEqual(['errors == 0']);
  });

  test('a JSON file that does not parse, a module without a default export, a missing --config', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'bad.json'), '{ "rate": 10, }');
    await expect(loadRunConfig(join(dir, 'bad.json'))).rejects.toThrow(/bad\.json is not valid JSON/);
    writeFileSync(join(dir, 'named.mjs'), 'export const rate = 10;\n');
    await expect(loadRunConfig(join(dir, 'named.mjs'))).rejects.toThrow(/named\.mjs has no default export: write export default defineConfig/);
    await expect(loadRunConfig(join(dir, 'missing.json'))).rejects.toThrow(/--config .*missing\.json: no such file/);
  });
});

describe('precedence: flags, then the file, then the scenario, then keysim', () => {
  const base = { scenario: [] as string[], threshold: [] as string[] };
  const file = (value: unknown) => checkConfig(value, 'keysim.config.json');

  test("flags win, the file fills the rest, thresholds add (the file's first)", () => {
    const c = file({
      target: 'http://127.0.0.1:9',
      seed: 4,
      out: 'r',
      history: true,
      timeout: '2s',
      pipelining: 2,
      connections: 3,
      model: 'closed',
      scenarios: ['smoke'],
      thresholds: ['errors == 0'],
    });
    const merged = withConfig({ ...base, seed: 9, threshold: ['requests > 0'], connections: 5 }, c, {});
    expect(merged).toMatchObject({
      target: 'http://127.0.0.1:9',
      seed: 9,
      out: 'r',
      history: true,
      timeout: '2s',
      pipelining: 2,
      connections: 5,
      model: 'closed',
      scenario: ['smoke'],
    });
    expect(merged.threshold).toEqual(['errors == 0', 'requests > 0']);
    expect(withConfig({ ...base, scenario: ['mixed'] }, c, {}).scenario).toEqual(['mixed']);
    expect(withConfig(base, undefined, {})).toMatchObject({ target: 'sim', seed: 1, out: 'reports', history: false, timeout: '10s', pipelining: 1 });
  });

  test("the root key: --root-key, then KEYSIM_ROOT_KEY, then the file's variable; a literal key warns", () => {
    const c = file({ rootKeyEnv: 'STAGING_KEY' });
    expect(withConfig(base, c, { STAGING_KEY: 'from-variable' }).rootKey).toBe('from-variable');
    expect(withConfig(base, c, { STAGING_KEY: 'from-variable', KEYSIM_ROOT_KEY: 'k' }).rootKey).toBeUndefined();
    expect(withConfig({ ...base, rootKey: 'flag' }, c, { STAGING_KEY: 'v' }).rootKey).toBe('flag');
    expect(withConfig(base, c, {}).rootKeyEnv).toBe('STAGING_KEY');
    const warnings: string[] = [];
    const literal = withConfig(base, file({ rootKey: 'unkey_secret' }), {}, (line) => warnings.push(line));
    expect(literal.rootKey).toBe('unkey_secret');
    expect(warnings.join('\n')).toMatch(/holds a root key in clear.*rootKeyEnv/);
    expect(warnings.join('\n')).not.toContain('unkey_secret');
  });

  const scenario = defineScenario({
    name: 's',
    description: '',
    defaults: { rate: 300, durationMs: 12_000, warmupMs: 2_000 },
    setup: async () => ({}),
    mix: [],
  });
  const flags = { pipelining: 1, timeout: '10s', deadAfter: '5s' };

  test("the file's stages override the scenario's rate, and reset its warm-up to none", () => {
    const s = settingsFor(scenario, flags, file({ stages: ['10s:100', '20s:100'] }).shape);
    expect(s).toMatchObject({
      durationMs: 30_000,
      warmupMs: 0,
      startRate: 0,
      rate: 100,
      stages: [
        { durationMs: 10_000, target: 100 },
        { durationMs: 20_000, target: 100 },
      ],
    });
    // A warm-up beside the stages or above them keeps.
    expect(settingsFor(scenario, { ...flags, warmup: '3s' }, file({ stages: ['10s:100'] }).shape).warmupMs).toBe(3_000);
    expect(settingsFor(scenario, flags, file({ stages: ['10s:100'], warmup: '1s', startRate: 20 }).shape)).toMatchObject({ warmupMs: 1_000, rate: 20 });
  });

  test("a --rate or --duration flag overrides the file's stages; --stage overrides the file's rate", () => {
    const staged = file({ stages: ['10s:100'] }).shape;
    const s = settingsFor(scenario, { ...flags, rate: 50 }, staged);
    expect(s.stages).toBeUndefined();
    expect(s).toMatchObject({ rate: 50, durationMs: 12_000, warmupMs: 0 });
    expect(settingsFor(scenario, { ...flags, stage: ['5s:10'] }, file({ rate: 70, duration: '1m' }).shape)).toMatchObject({
      durationMs: 5_000,
      stages: [{ durationMs: 5_000, target: 10 }],
    });
    expect(settingsFor(scenario, flags, file({ rate: 70 }).shape)).toMatchObject({ rate: 70, durationMs: 12_000, warmupMs: 2_000 });
  });

  test("a scenario's own stages, overridden by the flags", () => {
    const ramped = defineScenario({ name: 'r', description: '', defaults: { stages: [{ durationMs: 4_000, target: 40 }] }, setup: async () => ({}), mix: [] });
    expect(settingsFor(ramped, flags)).toMatchObject({ durationMs: 4_000, warmupMs: 0, stages: [{ durationMs: 4_000, target: 40 }] });
    expect(settingsFor(ramped, { ...flags, duration: '2s' })).toMatchObject({ durationMs: 2_000, rate: 100 });
  });
});

describe('keysim run --config', () => {
  test("the file's stages, seed and thresholds drive the run; --threshold adds to them", async () => {
    const dir = tempDir();
    const out = join(dir, 'reports');
    const file = join(dir, 'ci.json');
    writeFileSync(file, JSON.stringify({ scenarios: ['smoke'], stages: ['1s:20', '1s:0'], seed: 3, thresholds: ['errors == 0'], out }));
    const result = await cli(['run', '--config', file, '--quiet', '--threshold', 'requests > 0']);
    expect([EXIT.ok, EXIT.generatorLimited], result.stderr).toContain(result.code);
    const [folder] = runFolders(out);
    const report = JSON.parse(readFileSync(join(folder as string, 'report.json'), 'utf8')) as {
      seed: number;
      scenario: { name: string };
      settings: { stages: unknown };
      thresholds: Array<{ expression: string }>;
      totals: { requests: number; dropped: number };
    };
    expect(report.scenario.name).toBe('smoke');
    expect(report.seed).toBe(3);
    expect(report.settings.stages).toEqual([
      { durationMs: 1000, target: 20 },
      { durationMs: 1000, target: 0 },
    ]);
    expect(report.thresholds.map((t) => t.expression)).toEqual(expect.arrayContaining(['errors == 0', 'requests > 0']));
    expect(report.totals.requests + report.totals.dropped).toBe(20);
  });

  test('a wrong key in the file exits 2 naming the file and the key, before anything is sent', async () => {
    const dir = tempDir();
    const file = join(dir, 'keysim.config.json');
    writeFileSync(file, JSON.stringify({ durration: '10s' }));
    const result = await cli(['run', 'smoke', '--config', file, '--out', join(dir, 'reports')]);
    expect(result.code, result.stderr).toBe(EXIT.usage);
    expect(result.stderr).toContain(`${file}: unknown key "durration"`);
    expect(runFolders(join(dir, 'reports'))).toEqual([]);
    const missing = await cli(['run', 'smoke', '--config', join(dir, 'nope.json')]);
    expect(missing.code).toBe(EXIT.usage);
    expect(missing.stderr).toMatch(/nope\.json: no such file/);
  });
});
