/**
 * A full disk while the history is written: the run must end with an error that says so, not
 * count the lost records as failed requests, nor crash on an unhandled rejection. /dev/full (every
 * write fails with ENOSPC) stands in for the full disk, through a link.
 */
import { existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { runScenario } from '../../src/load/run/runner.js';
import { type Scenario, defineScenario } from '../../src/load/scenario/scenario.js';
import { liveTarget } from '../../src/load/target/target.js';
import { loadSettings, startStubServer } from '../helpers/load.js';

const temps: string[] = [];
afterAll(() => {
  for (const dir of temps) rmSync(dir, { recursive: true, force: true });
});

const scenario = defineScenario<undefined>({
  name: 'inline-full-disk',
  description: 'Verifications recorded into a history on a full disk',
  setup: async () => undefined,
  mix: [{ weight: 1, build: () => ({ op: 'keys.verifyKey', body: { key: 'k' } }) }],
}) as unknown as Scenario<unknown>;

describe.skipIf(!existsSync('/dev/full'))('a full disk while recording the history', () => {
  test.each(['open', 'closed'] as const)('%s model: the run rejects with ENOSPC, naming the history', async (model) => {
    const dir = mkdtempSync(join(tmpdir(), 'keysim-full-disk-'));
    temps.push(dir);
    const historyPath = join(dir, 'history.jsonl.gz');
    symlinkSync('/dev/full', historyPath);
    const server = await startStubServer();
    try {
      const run = runScenario({
        scenario,
        target: liveTarget(server.url, 'root_full_disk_0123456789'),
        settings: loadSettings({ model, rate: 100, connections: 2, durationMs: 1_500, warmupMs: 0, timeoutMs: 2_000 }),
        seed: 1,
        thresholds: [],
        keep: false,
        keysimVersion: '0.0.0-test',
        historyPath,
      });
      await expect(run).rejects.toThrow(/Writing the history .*history\.jsonl\.gz failed: .*ENOSPC|no space/i);
    } finally {
      await server.kill();
    }
    expect(existsSync('/dev/full')).toBe(true);
  });
});
