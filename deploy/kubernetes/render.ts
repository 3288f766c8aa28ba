/**
 * Renders deploy/kubernetes/keysim-segments.yaml for one run, the start instant computed now:
 *
 *   npx tsx deploy/kubernetes/render.ts --segments 4 --target http://keysim-target:8080 \
 *     [--scenario mixed] [--rate 400] [--duration 60s] [--image keysim:latest] [--start-in 60s] > run.yaml
 *   kubectl apply -f run.yaml
 *
 * `--start-in` must cover the time for the pods to be scheduled, pull the image, and for the set-up
 * Job to run the scenario's setup once (the segments wait for its fixtures until then).
 *
 * `--replicas N [--store URL]` renders the simulator as N replicas on one Redis behind the Service
 * keysim-target (render-replicas.ts; a Redis pod of their own unless --store names one): alone, or
 * before the segments, whose --target is then that Service unless given.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseDurationMs } from '../../src/load/plan/index.js';
import { renderReplicas } from './render-replicas.js';

export const TEMPLATE = fileURLToPath(new URL('./keysim-segments.yaml', import.meta.url));

export interface RenderOptions {
  segments: number;
  target: string;
  scenario: string;
  rate: number;
  duration: string;
  image: string;
  /** The instant every segment starts its load. */
  startAt: Date;
}

/** The replicas' Service (keysim-replicas.yaml): the segments' target when they are rendered together. */
export const REPLICAS_TARGET = 'http://keysim-target:8080';

/** How long after the planned end the merge waits for a segment's report before merging what is there. */
const MERGE_MARGIN_S = 300;

export function renderManifests(options: RenderOptions): string {
  const durationMs = parseDurationMs(options.duration);
  if (durationMs === undefined) throw new Error(`--duration "${options.duration}" is not a duration: write e.g. 60s or 5m.`);
  if (!Number.isSafeInteger(options.segments) || options.segments < 1)
    throw new Error(`--segments must be a whole number of 1 or more, got ${String(options.segments)}.`);
  const deadline = Math.ceil((options.startAt.getTime() + durationMs) / 1000) + MERGE_MARGIN_S;
  const values: Record<string, string> = {
    __SEGMENTS__: String(options.segments),
    __TARGET__: options.target,
    __SCENARIO__: options.scenario,
    __RATE__: String(options.rate),
    __DURATION__: options.duration,
    __IMAGE__: options.image,
    __START_AT__: options.startAt.toISOString(),
    __START_EPOCH__: String(Math.floor(options.startAt.getTime() / 1000)),
    __MERGE_DEADLINE__: String(deadline),
  };
  return readFileSync(TEMPLATE, 'utf8').replace(/__[A-Z_]+__/g, (name) => {
    const value = values[name];
    if (value === undefined) throw new Error(`the template has an unknown placeholder ${name}`);
    return value;
  });
}

function flag(argv: readonly string[], name: string, fallback?: string): string {
  const i = argv.indexOf(`--${name}`);
  const value = i >= 0 ? argv[i + 1] : fallback;
  if (value === undefined) throw new Error(`--${name} is required (see the comment at the top of deploy/kubernetes/render.ts).`);
  return value;
}

/** What the command line asks for: the replicas, the segments, or both (replicas first). */
export function renderFromArgs(argv: readonly string[], now: number): string {
  const has = (name: string) => argv.includes(`--${name}`);
  if (has('store') && !has('replicas')) throw new Error('--store applies to the replicas: add --replicas N.');
  if (!has('segments') && !has('replicas'))
    throw new Error('give --segments N (the load), --replicas N (the simulator on Redis) or both (see the comment at the top of deploy/kubernetes/render.ts).');
  const image = flag(argv, 'image', 'keysim:latest');
  const parts: string[] = [];
  if (has('replicas')) {
    const store = has('store') ? flag(argv, 'store') : undefined;
    parts.push(renderReplicas({ replicas: Number(flag(argv, 'replicas')), image, ...(store === undefined ? {} : { store }) }));
  }
  if (has('segments')) {
    const startInMs = parseDurationMs(flag(argv, 'start-in', '60s'));
    if (startInMs === undefined) throw new Error('--start-in is not a duration: write e.g. 60s.');
    parts.push(
      renderManifests({
        segments: Number(flag(argv, 'segments')),
        target: flag(argv, 'target', has('replicas') ? REPLICAS_TARGET : undefined),
        scenario: flag(argv, 'scenario', 'mixed'),
        rate: Number(flag(argv, 'rate', '100')),
        duration: flag(argv, 'duration', '60s'),
        image,
        startAt: new Date(now + startInMs),
      }),
    );
  }
  return parts.join('---\n');
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    process.stdout.write(renderFromArgs(process.argv.slice(2), Date.now()));
  } catch (error) {
    process.stderr.write(`render: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(2);
  }
}
