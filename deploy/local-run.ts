/**
 * Runs what a cluster would run, on this machine: the exact command lines of the pods of rendered
 * manifests (deploy/kubernetes/render.ts) as local processes — the set-up Job's, then every segment
 * pod's, its completion index filled in, then the merge Job's (merge and cleanup) — with the shared
 * volume `/reports` mapped to a local folder. The init containers only wait for what the order
 * of these steps already ensures, so they are not run.
 *
 *   npx tsx deploy/kubernetes/render.ts --segments 4 --target http://127.0.0.1:8080 --start-in 30s > run.yaml
 *   npx tsx deploy/local-run.ts run.yaml reports/cluster
 *
 * Exits with the merge Job's exit code (92 when a segment is missing), or the set-up's when it failed.
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';

interface Container {
  command?: string[];
  args?: string[];
}
interface JobDoc {
  kind: string;
  metadata: { name: string };
  spec: { completions?: number; template: { spec: { containers: Container[] } } };
}

const REPO = fileURLToPath(new URL('..', import.meta.url));

/** A `keysim` on the PATH that runs this repository's sources, as the image's entry point runs the build. */
function keysimShim(): string {
  const dir = mkdtempSync(join(tmpdir(), 'keysim-local-run-'));
  const shim = join(dir, 'keysim');
  writeFileSync(shim, `#!/bin/sh\nexec "${process.execPath}" --import tsx "${join(REPO, 'src/cli/main.ts')}" "$@"\n`);
  chmodSync(shim, 0o755);
  return dir;
}

/** A container's command line: its command (or the image's entry point, keysim) and its args, the volume mapped. */
export function commandLine(container: Container, reports: string, index?: number): string[] {
  const words = [...(container.command ?? ['keysim']), ...(container.args ?? [])];
  return words.map((w) => (index === undefined ? w : w.replaceAll('$(JOB_COMPLETION_INDEX)', String(index))).replaceAll('/reports', reports));
}

function run(words: readonly string[], path: string): Promise<number | null> {
  const [command, ...args] = words as [string, ...string[]];
  const child = spawn(command, args, {
    cwd: REPO,
    stdio: ['ignore', 'inherit', 'inherit'],
    env: { ...process.env, PATH: `${path}:${process.env.PATH ?? ''}` },
  });
  return new Promise((done) => child.once('close', (code) => done(code)));
}

export async function localRun(manifests: string, reportsDir: string): Promise<number> {
  const jobs = parseAllDocuments(manifests)
    .map((d) => d.toJS() as JobDoc)
    .filter((d) => d.kind === 'Job');
  const setup = jobs.find((j) => j.metadata.name === 'keysim-setup');
  const segments = jobs.find((j) => j.metadata.name === 'keysim-segments');
  const merge = jobs.find((j) => j.metadata.name === 'keysim-merge');
  if (setup === undefined || segments === undefined || merge === undefined)
    throw new Error('the manifests have no keysim-setup, keysim-segments and keysim-merge Jobs: render them with deploy/kubernetes/render.ts.');
  const reports = resolve(reportsDir);
  mkdirSync(reports, { recursive: true });
  const path = keysimShim();
  try {
    const setUp = await run(commandLine(setup.spec.template.spec.containers[0] as Container, reports), path);
    if (setUp !== 0) return setUp ?? 1;
    const pod = segments.spec.template.spec.containers[0] as Container;
    const n = segments.spec.completions ?? 1;
    await Promise.all(Array.from({ length: n }, (_, i) => run(commandLine(pod, reports, i), path)));
    return (await run(commandLine(merge.spec.template.spec.containers[0] as Container, reports), path)) ?? 1;
  } finally {
    rmSync(path, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const [file, out] = process.argv.slice(2);
  if (file === undefined || out === undefined) {
    process.stderr.write('usage: npx tsx deploy/local-run.ts RENDERED.yaml REPORTS_FOLDER\n');
    process.exit(2);
  }
  localRun(readFileSync(file, 'utf8'), out).then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(`local-run: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exit(1);
    },
  );
}
