/**
 * The simulator's replicas on Kubernetes (render.ts --replicas N [--store URL]): valid objects
 * (the API schemas of kubernetes-models), N pods of `keysim serve` on one store behind the
 * Service the load Jobs target, from the load's image and with its root key, ready through
 * /_sim/health; a Redis of their own unless a store is named. And deploy/local-replicas.ts, which
 * runs those pods' command lines on this machine with a real redis-server, runs a load through
 * them and leaves no process and no folder behind.
 */
import { spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { Job } from 'kubernetes-models/batch/v1/Job';
import { PersistentVolumeClaim } from 'kubernetes-models/v1/PersistentVolumeClaim';
import { Service } from 'kubernetes-models/v1/Service';
import { afterAll, describe, expect, test } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { renderFromArgs } from '../../deploy/kubernetes/render.js';
import { IN_CLUSTER_STORE, renderReplicas } from '../../deploy/kubernetes/render-replicas.js';
import { localServeArgs } from '../../deploy/local-replicas.js';
import { EXIT } from '../../src/cli/exit-codes.js';
import { cleanEnv, cleanUpCli, tempDir } from '../helpers/cli.js';
import { startRedis } from '../helpers/redis-server.js';

afterAll(cleanUpCli);

const REPO = fileURLToPath(new URL('../..', import.meta.url));

interface Container {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  env?: Array<{ name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } }>;
  ports?: Array<{ name: string; containerPort: number }>;
  readinessProbe?: { httpGet?: { path: string; port: string | number } };
}
interface Doc {
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  spec: {
    replicas?: number;
    selector?: Record<string, unknown> & { matchLabels?: Record<string, string> };
    ports?: Array<{ port: number; targetPort: string | number }>;
    template: { metadata?: { labels: Record<string, string> }; spec: { containers: Container[] } };
  };
}

const documents = (text: string) => parseAllDocuments(text).map((d) => d.toJS() as Doc);
const find = (docs: Doc[], kind: string, name: string) => docs.find((d) => d.kind === kind && d.metadata.name === name) as Doc;
const podOf = (doc: Doc) => doc.spec.template.spec.containers[0] as Container;
const MODELS: Record<string, new (data: never) => { validate(): void }> = { Deployment, Service, Job, PersistentVolumeClaim };

describe('deploy/kubernetes: the simulator as replicas on Redis', () => {
  test('every rendered object validates against the Kubernetes API schemas, with and without an external store', () => {
    const own = documents(renderReplicas({ replicas: 3, image: 'keysim:1' }));
    expect(own.map((d) => `${d.kind}/${d.metadata.name}`)).toEqual([
      'Deployment/keysim-redis',
      'Service/keysim-redis',
      'Deployment/keysim-simulator',
      'Service/keysim-target',
    ]);
    const external = documents(renderReplicas({ replicas: 2, image: 'keysim:1', store: 'rediss://:secret@redis.example:6380/2' }));
    expect(external.map((d) => `${d.kind}/${d.metadata.name}`)).toEqual(['Deployment/keysim-simulator', 'Service/keysim-target']);
    const both = documents(renderFromArgs(['--replicas', '3', '--segments', '2', '--image', 'keysim:1'], Date.parse('2030-01-01T00:00:00Z')));
    for (const doc of [...own, ...external, ...both]) {
      const Model = MODELS[doc.kind];
      expect(Model, doc.kind).toBeDefined();
      expect(() => new (Model as NonNullable<typeof Model>)(doc as never).validate(), `${doc.kind}/${doc.metadata.name}`).not.toThrow();
    }
  });

  test('a schema violation is caught (the check can fail): a string where replicas takes a number', () => {
    const deployment = find(documents(renderReplicas({ replicas: 3, image: 'keysim:1' })), 'Deployment', 'keysim-simulator') as unknown as {
      spec: Record<string, unknown>;
    };
    deployment.spec.replicas = 'three';
    expect(() => new Deployment(deployment as never).validate()).toThrow();
  });

  test("N pods of keysim serve on the store, ready through /_sim/health, from the load Jobs' image with their root key, behind the Service the load targets", () => {
    const docs = documents(renderFromArgs(['--replicas', '5', '--segments', '2', '--image', 'registry.example/keysim:7'], Date.parse('2030-01-01T00:00:00Z')));
    const simulator = find(docs, 'Deployment', 'keysim-simulator');
    expect(simulator.spec.replicas).toBe(5);
    const pod = podOf(simulator);
    expect(pod.args).toEqual(['serve', '--host', '0.0.0.0', '--port', '8080']);
    expect(pod.env?.find((e) => e.name === 'KEYSIM_STORE')?.value).toBe(IN_CLUSTER_STORE);
    expect(pod.readinessProbe?.httpGet).toEqual({ path: '/_sim/health', port: 'http' });
    expect(pod.ports).toEqual([{ name: 'http', containerPort: 8080 }]);
    // The segments' pods: the same image, the same root key Secret, the replicas' Service as target.
    const segments = podOf(find(docs, 'Job', 'keysim-segments'));
    expect(pod.image).toBe('registry.example/keysim:7');
    expect(segments.image).toBe(pod.image);
    const rootKey = (c: Container) => c.env?.find((e) => e.name === 'KEYSIM_ROOT_KEY')?.valueFrom?.secretKeyRef;
    expect(rootKey(pod)).toEqual(rootKey(segments));
    const service = find(docs, 'Service', 'keysim-target');
    expect(segments.args).toEqual(expect.arrayContaining(['--target', `http://${service.metadata.name}:${service.spec.ports?.[0]?.port}`]));
    // The Service selects exactly the simulator's pods (not the Redis pod), on the pods' named port.
    expect(service.spec.selector).toEqual(simulator.spec.template.metadata?.labels);
    expect(simulator.spec.selector?.matchLabels).toEqual(simulator.spec.template.metadata?.labels);
    expect(service.spec.selector).not.toEqual(find(docs, 'Deployment', 'keysim-redis').spec.template.metadata?.labels);
    expect(service.spec.ports?.[0]?.targetPort).toBe('http');
  });

  test("the own Redis: redis:7 without persistence, its Service the replicas' store; an external store replaces it", () => {
    const docs = documents(renderReplicas({ replicas: 2, image: 'keysim:1' }));
    const redis = podOf(find(docs, 'Deployment', 'keysim-redis'));
    expect(redis.image).toBe('redis:7');
    expect(redis.args).toEqual(['--save', '', '--appendonly', 'no']);
    const service = find(docs, 'Service', 'keysim-redis');
    expect(IN_CLUSTER_STORE).toBe(`redis://${service.metadata.name}:${service.spec.ports?.[0]?.port}`);
    const external = documents(renderReplicas({ replicas: 2, image: 'keysim:1', store: 'redis-cluster://r1:7000,r2:7000' }));
    expect(podOf(find(external, 'Deployment', 'keysim-simulator')).env?.find((e) => e.name === 'KEYSIM_STORE')?.value).toBe('redis-cluster://r1:7000,r2:7000');
  });

  test.each([
    [['--replicas', '0'], /--replicas must be a whole number of 1 or more, got 0/],
    [['--replicas', '2', '--store', 'http://redis:6379'], /--store "http:\/\/redis:6379" has the scheme "http"/],
    [['--store', 'redis://redis:6379'], /--store applies to the replicas: add --replicas N/],
    [[], /give --segments N \(the load\), --replicas N/],
  ])('render %j is refused with what to change', (args, message) => {
    expect(() => renderFromArgs(args, 0)).toThrow(message);
  });

  test('locally a replica binds loopback on a free port, and answers the Host of the Service stand-in', () => {
    expect(localServeArgs({ args: ['serve', '--host', '0.0.0.0', '--port', '8080'] })).toEqual([
      'serve',
      '--host',
      '127.0.0.1',
      '--port',
      '0',
      '--allow-host',
      '127.0.0.1',
    ]);
  });
});

interface LocalRun {
  code: number | null;
  output: string;
  pids: number[];
  folder: string | undefined;
}

/** `npx tsx deploy/local-replicas.ts FILE ARGS` as a child process; the pids and folder it named. */
function localReplicas(file: string, args: readonly string[]): Promise<LocalRun> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(REPO, 'deploy', 'local-replicas.ts'), file, ...args], {
    cwd: REPO,
    env: cleanEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const limit = setTimeout(() => child.kill('SIGKILL'), 170_000);
  return new Promise((resolve) =>
    child.once('close', (code) => {
      clearTimeout(limit);
      const pids = [...output.matchAll(/^local-replicas: .*?\(pid (\d+)\)/gm)].map((m) => Number(m[1]));
      resolve({ code, output, pids, folder: /^local-replicas: temporary folder (\S+)/m.exec(output)?.[1] });
    }),
  );
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('deploy/local-replicas.ts', () => {
  const manifests = () => {
    const file = join(tempDir(), 'replicas.yaml');
    writeFileSync(file, renderReplicas({ replicas: 3, image: 'keysim:1' }));
    return file;
  };

  test(
    'three replicas and their Redis as the manifests start them, a load through the Service stand-in over all three, then nothing left',
    { timeout: 180_000 },
    async () => {
      const run = await localReplicas(manifests(), [
        // Closed model: six connections open for sure (one per replica at least, through the stand-in),
        // and no schedule to keep, so nothing here depends on the machine's pace.
        'run',
        'smoke',
        '--model',
        'closed',
        '--connections',
        '6',
        '--duration',
        '2s',
        '--history',
        '--quiet',
      ]);
      expect(run.code, run.output).toBe(EXIT.ok);
      expect(run.output).toMatch(/redis-server \(pid \d+\) on redis:\/\/127\.0\.0\.1:\d+, as the Deployment keysim-redis/);
      expect(run.output.match(/replica \d \(pid \d+\) on http:\/\/127\.0\.0\.1:\d+, ready \(GET \/_sim\/health\)/g)).toHaveLength(3);
      expect(run.output.match(/: the first replica$/gm)).toHaveLength(1);
      expect(run.output.match(/: joined$/gm)).toHaveLength(2);
      // The load judged the invariants and the oracle over answers from all three replicas.
      expect(run.output).toContain('invariants clean, oracle agrees');
      const perReplica = /connections per replica: (\d+), (\d+), (\d+)/.exec(run.output);
      for (const count of perReplica?.slice(1) ?? []) expect(Number(count)).toBeGreaterThan(0);
      expect(perReplica).not.toBeNull();
      // redis-server, three replicas, the load: all gone, and the folder removed.
      expect(run.pids).toHaveLength(5);
      expect(run.pids.filter(alive)).toEqual([]);
      expect(run.folder).toBeDefined();
      expect(existsSync(run.folder as string)).toBe(false);
    },
  );

  test('with an external store (--store URL) the replicas use that Redis, and no Redis of their own is started', { timeout: 180_000 }, async () => {
    const redis = await startRedis();
    try {
      const file = join(tempDir(), 'replicas.yaml');
      writeFileSync(file, renderReplicas({ replicas: 2, image: 'keysim:1', store: redis.url }));
      const run = await localReplicas(file, ['run', 'smoke', '--model', 'closed', '--connections', '4', '--duration', '1s', '--quiet']);
      expect(run.code, run.output).toBe(EXIT.ok);
      expect(run.output).not.toContain('redis-server (pid');
      // Two replicas and the load.
      expect(run.pids).toHaveLength(3);
      expect(run.pids.filter(alive)).toEqual([]);
      expect(await redis.cli('EXISTS', '{keysim}:genesis')).toBe('1');
      expect(Number(await redis.cli('XLEN', '{keysim}:log'))).toBeGreaterThan(0);
    } finally {
      await redis.close();
    }
  });

  test("a load that fails still stops everything it started and removes its folder, with the load's exit code", { timeout: 180_000 }, async () => {
    const run = await localReplicas(manifests(), ['run', 'no-such-scenario', '--quiet']);
    expect(run.code, run.output).toBe(EXIT.usage);
    expect(run.output).toMatch(/the load exited 2/);
    expect(run.pids).toHaveLength(5);
    expect(run.pids.filter(alive)).toEqual([]);
    expect(existsSync(run.folder as string)).toBe(false);
  });
});
