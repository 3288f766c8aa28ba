/**
 * The cluster manifests: rendered, they are valid Kubernetes objects (checked against the API
 * schemas of kubernetes-models), the segments' Job is Indexed with one pod per segment and its
 * completion index as --segment; and the pods' exact command lines, run as local processes by
 * deploy/local-run.ts against a `keysim serve`, produce a merged report of the whole plan.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Job } from 'kubernetes-models/batch/v1/Job';
import { PersistentVolumeClaim } from 'kubernetes-models/v1/PersistentVolumeClaim';
import { afterAll, describe, expect, test } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { renderManifests } from '../../deploy/kubernetes/render.js';
import { localRun } from '../../deploy/local-run.js';
import { EXIT } from '../../src/cli/exit-codes.js';
import { WORKER_CHILD_ENV } from '../../src/cli/segment-flags.js';
import type { RunReport } from '../../src/report/model.js';
import { cleanEnv, cleanUpCli, startCli, tempDir, waitUntil } from '../helpers/cli.js';
import { freePort } from '../helpers/nginx.js';
import { keysOn } from '../helpers/serve-cli.js';

afterAll(cleanUpCli);

const render = (overrides: Partial<Parameters<typeof renderManifests>[0]> = {}) =>
  renderManifests({
    segments: 4,
    target: 'http://keysim-target:8080',
    scenario: 'mixed',
    rate: 400,
    duration: '60s',
    image: 'keysim:1',
    startAt: new Date('2030-01-01T00:01:00Z'),
    ...overrides,
  });

const documents = (text: string) => parseAllDocuments(text).map((d) => d.toJS() as { kind: string; metadata: { name: string } });

describe('deploy/kubernetes', () => {
  test('every rendered object validates against the Kubernetes API schemas', () => {
    const docs = documents(render());
    expect(docs.map((d) => `${d.kind}/${d.metadata.name}`)).toEqual([
      'PersistentVolumeClaim/keysim-reports',
      'Job/keysim-setup',
      'Job/keysim-segments',
      'Job/keysim-merge',
    ]);
    for (const doc of docs) {
      const model = doc.kind === 'Job' ? new Job(doc as never) : new PersistentVolumeClaim(doc as never);
      expect(() => model.validate()).not.toThrow();
    }
  });

  test('a schema violation is caught (the check can fail): a string where parallelism takes a number', () => {
    const job = documents(render()).find((d) => d.metadata.name === 'keysim-segments') as unknown as { spec: Record<string, unknown> };
    job.spec.parallelism = 'four';
    expect(() => new Job(job as never).validate()).toThrow();
  });

  test('the segments Job is Indexed, N pods at once, each its completion index as --segment, one start instant', () => {
    const job = documents(render({ segments: 6 })).find((d) => d.metadata.name === 'keysim-segments') as unknown as {
      spec: {
        completionMode: string;
        completions: number;
        parallelism: number;
        template: { spec: { containers: Array<{ args: string[]; env: Array<{ name: string }> }> } };
      };
    };
    expect(job.spec).toMatchObject({ completionMode: 'Indexed', completions: 6, parallelism: 6 });
    const container = job.spec.template.spec.containers[0];
    expect(container?.args).toEqual(expect.arrayContaining(['--segment', '$(JOB_COMPLETION_INDEX)/6', '--start-at', '2030-01-01T00:01:00.000Z']));
    expect(container?.env.map((e) => e.name)).toContain('JOB_COMPLETION_INDEX');
    // Set-up once: every pod takes the set-up Job's fixtures, and waits for them only until the start instant.
    expect(container?.args).toEqual(expect.arrayContaining(['--fixtures', '/reports/fixtures.json']));
    const wait = (job.spec.template.spec as unknown as { initContainers: Array<{ args: string[] }> }).initContainers[0];
    expect(wait?.args.join(' ')).toContain(String(Date.parse('2030-01-01T00:01:00Z') / 1000));
    expect(() => render({ duration: 'soon' })).toThrow(/not a duration/);
  });

  test("the set-up runs once, and the merge Job judges across the set-up's and the segments' histories, then cleans up once", () => {
    const docs = documents(render()) as unknown as Array<{
      metadata: { name: string };
      spec: { template: { spec: { containers: Array<{ args: string[] }> } } };
    }>;
    const args = (name: string) => (docs.find((d) => d.metadata.name === name)?.spec.template.spec.containers[0]?.args ?? []).join(' ');
    expect(args('keysim-setup')).toContain('--setup-only --fixtures /reports/fixtures.json --history');
    expect(args('keysim-merge')).toContain('keysim merge /reports/parts/* --history /reports/setup/*');
    expect(args('keysim-merge')).toContain(
      'keysim cleanup --target http://keysim-target:8080 --fixtures /reports/fixtures.json --out /reports/setup --resources /reports/parts/*',
    );
  });

  test(
    'local-run left the folder of its keysim shim in the temporary folder: it removes it, here after a set-up that failed',
    { timeout: 180_000 },
    async () => {
      // os.tmpdir() follows TMPDIR: the shim's folder is made in a folder of this test's own.
      const tmp = tempDir();
      const previous = process.env.TMPDIR;
      process.env.TMPDIR = tmp;
      let code: number;
      try {
        code = await localRun(render({ segments: 1, target: `http://127.0.0.1:${await freePort()}` }), join(tmp, 'reports'));
      } finally {
        if (previous === undefined) delete process.env.TMPDIR;
        else process.env.TMPDIR = previous;
      }
      expect(code).not.toBe(EXIT.ok);
      expect(readdirSync(tmp).filter((name) => name.startsWith('keysim-local-run-'))).toEqual([]);
    },
  );

  test(
    "local-run: the pods' exact command lines as local processes give one merged report of the whole plan, and leave nothing on the target",
    { timeout: 180_000 },
    async () => {
      const env = cleanEnv({ KEYSIM_ROOT_KEY: 'root_deploy_local_run_0123456789' });
      const server = startCli(['serve', '--port', '0'], env);
      await waitUntil(() => /listening on (http:\/\/\S+)/.test(server.stdout()), 'the simulator to listen', server);
      const url = (/listening on (http:\/\/\S+)/.exec(server.stdout()) as RegExpExecArray)[1] as string;
      const reports = tempDir();
      // The start instant a few seconds ahead, not the half minute a cluster needs: a pod this busy
      // machine starts after it starts late and says so (as `run --workers` children do,
      // WORKER_CHILD_ENV) instead of refusing, so the test neither waits out a wide margin nor fails on a narrow one.
      const manifests = render({ segments: 2, target: url, scenario: 'verify-hot-keys', rate: 20, duration: '2s', startAt: new Date(Date.now() + 5_000) });
      const given = { KEYSIM_ROOT_KEY: 'root_deploy_local_run_0123456789', [WORKER_CHILD_ENV]: '1' };
      const previous = Object.fromEntries(Object.keys(given).map((name) => [name, process.env[name]]));
      Object.assign(process.env, given);
      let code: number;
      try {
        code = await localRun(manifests, reports);
      } finally {
        for (const [name, value] of Object.entries(previous)) {
          if (value === undefined) delete process.env[name];
          else process.env[name] = value;
        }
      }
      expect([EXIT.ok, EXIT.generatorLimited, EXIT.thresholdFailed] as number[]).toContain(code);
      const merged = JSON.parse(readFileSync(join(reports, 'merged', 'report.json'), 'utf8')) as RunReport;
      expect(merged.totals.requests).toBe(40);
      expect(merged.merge).toMatchObject({ segments: 2, partial: false });
      // One set-up (its history judged with the segments'), one cleanup after the merge: no key left.
      expect(merged.invariants?.notes.join(' ')).not.toMatch(/Not judged across segments/);
      expect(await keysOn(url, 'root_deploy_local_run_0123456789')).toBe(0);
      server.child.kill('SIGTERM');
      await server.exited;
    },
  );
});
