/** `keysim serve`: the simulator as a standalone server. */
import { randomInt } from 'node:crypto';
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { type CheckedSnapshot, MAX_REGIONS, PRODUCTION_FIGURES } from '../../engine/index.js';
import {
  DEFAULT_KEEP_ALIVE_TIMEOUT_MS,
  FAULT_KEYS,
  MAX_KEEP_ALIVE_TIMEOUT_MS,
  allowedHostEntry,
  allowedHostsFromEnv,
  MAX_WORKERS,
  RESTORE_STREAM_MAX_BODY_BYTES,
  createSimulator,
  nodeSha256,
  parseInstant,
  parseStoreUrl,
  randomRootKey,
  readSnapshotFile,
} from '../../http/index.js';
import { EXIT } from '../exit-codes.js';

import { faultsFromFlags } from '../fault-flags.js';
import { example } from '../help-example.js';
import { writeServeBanner } from '../serve-banner.js';

interface ServeArgs {
  host: string;
  port: number;
  rootKey?: string;
  clock: 'system' | 'manual';
  start?: string;
  seed?: number;
  restore?: string;
  compat?: 'interface' | 'production';
  profile: 'exact' | 'production';
  regions?: number;
  replayDelay?: string;
  maxBodyBytes: number;
  restoreMaxBodyBytes: number;
  errorsUrl?: string;
  fault?: string[];
  workers: number;
  keepAlive: number;
  allowHost?: string[];
  store?: string;
  storePrefix?: string;
  storeCheckpointEvery?: number;
}

/** A MIN..MAX range of whole milliseconds, or null. */
function parseDelay(text: string): { min: number; max: number } | null {
  const match = /^([0-9]+)\.\.([0-9]+)$/.exec(text.trim());
  if (match === null) return null;
  const min = Number(match[1]);
  const max = Number(match[2]);
  return Number.isSafeInteger(min) && Number.isSafeInteger(max) && min <= max ? { min, max } : null;
}

/** --profile, --regions and --replay-delay together: true, or what is wrong and how to fix it. */
function checkProfileFlags(args: { profile?: unknown; regions?: number | undefined; replayDelay?: string | undefined; workers?: unknown }): true | string {
  const production = args.profile === 'production';
  if (!production && (args.regions !== undefined || args.replayDelay !== undefined)) {
    return `${args.regions === undefined ? '--replay-delay' : '--regions'} applies to the production profile only: add --profile production.`;
  }
  if (!production) return true;
  if (Number(args.workers) > 1) return '--profile production runs in one process: leave out --workers (or use --profile exact).';
  if (args.regions !== undefined) {
    const regions = Number(args.regions);
    if (!Number.isInteger(regions) || regions < 1 || regions > MAX_REGIONS)
      return `--regions must be an integer from 1 to ${MAX_REGIONS}, got ${String(args.regions)}.`;
  }
  if (args.replayDelay !== undefined && parseDelay(String(args.replayDelay)) === null) {
    return `--replay-delay must be MIN..MAX in whole milliseconds with MIN ≤ MAX (e.g. 1..5000), got "${String(args.replayDelay)}".`;
  }
  return true;
}

/** The most entries between two checkpoints --store-checkpoint-every takes (the log holds about twice as many). */
const MAX_CHECKPOINT_EVERY = 10_000_000;

/** --store and what it cannot go with: true, or what is wrong and how to fix it. */
function checkStoreFlags(args: {
  store?: string | undefined;
  storePrefix?: unknown;
  storeCheckpointEvery?: unknown;
  workers?: unknown;
  profile?: unknown;
  restore?: unknown;
}): true | string {
  if (args.store === undefined) {
    const flag = args.storePrefix !== undefined ? '--store-prefix' : args.storeCheckpointEvery !== undefined ? '--store-checkpoint-every' : undefined;
    return flag === undefined ? true : `${flag} applies to a store-backed simulator only: add --store redis://HOST:PORT.`;
  }
  const every = args.storeCheckpointEvery;
  if (every !== undefined && !(Number.isInteger(every) && (every as number) >= 1 && (every as number) <= MAX_CHECKPOINT_EVERY)) {
    return `--store-checkpoint-every must be an integer from 1 to ${MAX_CHECKPOINT_EVERY}, got ${typeof every === 'number' ? String(every) : JSON.stringify(every)}.`;
  }
  const url = parseStoreUrl(args.store);
  if (!url.ok) return url.message;
  if (Number(args.workers) > 1) return '--store runs one process per replica: leave out --workers and start more replicas on the same --store.';
  if (args.profile === 'production') return '--store runs the exact profile: leave out --profile production.';
  if (args.restore !== undefined)
    return '--store starts from the state in the store: leave out --restore, and restore a snapshot with POST /_sim/restore once a replica is up.';
  return true;
}

/** KEYSIM_STORE, when set and not empty (a store URL for replicas started by a manifest). */
function storeFromEnv(): string | undefined {
  const value = process.env.KEYSIM_STORE;
  return value === undefined || value === '' ? undefined : value;
}

/** Exits 2 with the message: bad input the user can fix. */
function usageError(message: string): never {
  process.stderr.write(`keysim serve: ${message}\n`);
  process.exit(EXIT.usage);
}

export const serveCommand: CommandModule<object, ServeArgs> = {
  command: 'serve',
  describe: 'Run the simulator as an HTTP server (v1 and v2 API, admin surface under /_sim)',
  builder: (y: Argv) =>
    y
      .option('host', { type: 'string', default: '127.0.0.1', describe: 'Address to listen on' })
      .option('port', { type: 'number', default: 8787, describe: 'Port to listen on (0 = a free port)' })
      .option('root-key', {
        type: 'string',
        describe:
          "Root key of the start workspace and the operator's credential, the only one /_sim/* answers (or set KEYSIM_ROOT_KEY); default: a random one, printed",
      })
      .option('clock', {
        choices: ['system', 'manual'] as const,
        default: 'system' as const,
        describe: 'system: real time plus an offset; manual: frozen until moved',
      })
      .option('start', { type: 'string', describe: 'Where the clock starts: ISO-8601 (e.g. 2028-02-28T23:59:59Z) or Unix ms; default now' })
      .option('seed', {
        type: 'number',
        describe: 'Seed of every generated id and key, the start root key included (reproducible runs); default: a random seed and a random root key',
      })
      .option('restore', {
        type: 'string',
        describe:
          "Start from a snapshot file (the data of /_sim/snapshot, or a /_sim/restore body); needs the operator's root key of that snapshot (--root-key)",
      })
      .option('compat', {
        choices: ['interface', 'production'] as const,
        describe: 'Follow the interface document, or the production service where they differ; default interface (production with --profile production)',
      })
      .option('profile', {
        choices: ['exact', 'production'] as const,
        default: 'exact' as const,
        describe:
          'exact: one linearizable engine; production: the production service as it behaves, regions with their own credit counters (60 s) and key caches (10 s) over one database, debits replayed to it later. A request picks its region with X-Keysim-Region: N; every answer names it in x-keysim-region',
      })
      .option('regions', { type: 'number', describe: `Regions of --profile production (1..${MAX_REGIONS}); default ${PRODUCTION_FIGURES.regions}` })
      .option('replay-delay', {
        type: 'string',
        describe: `Delay before a region's debit reaches the database, MIN..MAX ms (seeded) with --profile production; default ${PRODUCTION_FIGURES.replayDelayMs.min}..${PRODUCTION_FIGURES.replayDelayMs.max}`,
      })
      .option('max-body-bytes', { type: 'number', default: 10 * 1024 * 1024, describe: 'Largest accepted request body (413 beyond)' })
      .option('restore-max-body-bytes', {
        type: 'number',
        default: RESTORE_STREAM_MAX_BODY_BYTES,
        describe:
          'Largest /_sim/restore body, read as it arrives one record at a time (413 beyond; with --workers a restore body is read whole, up to 256 MiB)',
      })
      .option('errors-url', { type: 'string', describe: 'Base URL of the error `type` field' })
      .option('fault', {
        type: 'string',
        array: true,
        describe: `Inject a fault, KEY=VALUE (repeatable; as /_sim/faults.set): ${FAULT_KEYS.join(', ')}. latencyMs=N, MIN..MAX or MEAN~STDDEV; rates 0..1; operations=keys.verifyKey,…`,
      })
      .option('workers', {
        type: 'number',
        default: 1,
        describe: `HTTP worker processes on the port (1..${MAX_WORKERS}); from 2, this process owns the one engine and the workers do the HTTP, parsing and validation. Pays off with a core for each worker, this process and the load generator; on fewer cores it gains little`,
      })
      .option('keep-alive', {
        type: 'number',
        default: DEFAULT_KEEP_ALIVE_TIMEOUT_MS / 1000,
        describe:
          'Seconds an idle keep-alive connection stays open (answers say Keep-Alive: timeout=N). Behind a reverse proxy keep it longer than the proxy keeps idle upstream connections (nginx keepalive_timeout, an AWS ALB idle timeout: 60 s), or the proxy answers 502 when the two close at once',
      })
      .option('allow-host', {
        type: 'string',
        array: true,
        describe:
          "A further Host name to answer on loopback (repeatable; or KEYSIM_ALLOWED_HOSTS, comma-separated): for a reverse proxy that passes the client's Host on. NAME answers it on any port, NAME:PORT on that one; every other Host still gets 421 (the DNS-rebinding protection)",
      })
      .option('store', {
        type: 'string',
        describe:
          "Keep the state in Redis (or set KEYSIM_STORE): redis://HOST:PORT[/DB], rediss://… or redis-cluster://HOST:PORT,…. Every simulator started on the same store is a replica of one simulator: same state, same clock, same answers; the first one's --seed, --root-key, --clock, --start and --fault are the store's",
      })
      .option('store-prefix', {
        type: 'string',
        describe: "Names the store's keys ({PREFIX}:log …), so several simulators can share one Redis; default keysim",
      })
      .option('store-checkpoint-every', {
        type: 'number',
        describe:
          "Log entries between two checkpoints of the store's state; default 10000. The log holds about twice as many entries; a replica started later begins at the newest checkpoint. Each checkpoint costs one replica a snapshot of the state",
      })
      .check((args) => {
        const store = checkStoreFlags({ ...args, store: args.store ?? storeFromEnv() });
        if (store !== true) return store;
        const workers = Number(args.workers);
        if (!Number.isInteger(workers) || workers < 1 || workers > MAX_WORKERS)
          return `--workers must be an integer from 1 to ${MAX_WORKERS}, got ${String(args.workers)}.`;
        const profile = checkProfileFlags(args);
        if (profile !== true) return profile;
        if (!Number.isInteger(args.port) || args.port < 0 || args.port > 65_535) return `--port must be an integer from 0 to 65535, got ${String(args.port)}.`;
        if (args.seed !== undefined && !Number.isSafeInteger(args.seed)) return `--seed must be an integer, got ${String(args.seed)}.`;
        const maxBody = Number(args.maxBodyBytes);
        if (!Number.isInteger(maxBody) || maxBody < 1) return '--max-body-bytes must be a positive integer.';
        const maxRestore = Number(args.restoreMaxBodyBytes);
        if (!Number.isSafeInteger(maxRestore) || maxRestore < 1) return '--restore-max-body-bytes must be a positive integer.';
        if (args.start !== undefined) {
          const start = parseInstant(args.start, '--start');
          if (!start.ok) return `--start: ${start.error.detail}`;
        }
        if (args.fault !== undefined) {
          const faults = faultsFromFlags(args.fault.map(String));
          if (!faults.ok) return faults.message;
        }
        const keepAlive = Number(args.keepAlive);
        if (!Number.isInteger(keepAlive) || keepAlive < 1 || keepAlive * 1000 > MAX_KEEP_ALIVE_TIMEOUT_MS) {
          return `--keep-alive must be a whole number of seconds from 1 to ${MAX_KEEP_ALIVE_TIMEOUT_MS / 1000}, got ${String(args.keepAlive)}.`;
        }
        for (const host of (args.allowHost as unknown[] | undefined) ?? []) {
          const entry = allowedHostEntry(String(host));
          if (!entry.ok) return `--allow-host: ${entry.message}`;
        }
        return true;
      })
      .example(...example('$0 serve --port 0 --clock manual --start 2028-02-28T23:59:59Z', 'a frozen clock just before a leap day'))
      .example(...example('KEYSIM_ROOT_KEY=root_dev_123456 $0 serve', 'a fixed root key for a local app'))
      .example(...example('$0 serve --root-key root_dev_123456 --restore state.json', 'start from a snapshot saved from /_sim/snapshot'))
      .example(...example('$0 serve --profile production --regions 3 --seed 7', 'three regions that drift as production does'))
      .example(...example('$0 serve --store redis://127.0.0.1:6379 --port 8788', 'a replica of the simulator kept in that Redis (start one per port or host)'))
      .example(...example('$0 serve --allow-host sim.internal --keep-alive 75', 'behind a reverse proxy that passes Host: sim.internal on'))
      .example(
        ...example(
          '$0 serve --fault errorRate=0.05 --fault latencyMs=5..50 --fault operations=keys.verifyKey',
          '5 % of verifications answer 500, all wait 5–50 ms',
        ),
      ) as unknown as Argv<ServeArgs>,
  handler: async (args: ArgumentsCamelCase<ServeArgs>) => {
    const fromEnv = process.env.KEYSIM_ROOT_KEY;
    const givenRootKey = args.rootKey ?? (fromEnv === undefined || fromEnv === '' ? undefined : fromEnv);
    let snapshot: CheckedSnapshot | undefined;
    if (args.restore !== undefined) {
      if (givenRootKey === undefined)
        usageError("--restore needs the operator's root key of that snapshot (--root-key or KEYSIM_ROOT_KEY): a snapshot holds root keys as hashes only.");
      // The snapshot itself, the answer of /_sim/snapshot or a restore body, read one record at a time.
      const read = await readSnapshotFile(args.restore, nodeSha256);
      if (!read.ok) usageError(`--restore ${args.restore}: ${read.message}`);
      snapshot = read.snapshot;
    }
    // Without a seed nothing is reproducible, the root key least of all (a fixed default would
    // give every machine the same one): both are drawn at random. An explicit --seed reproduces
    // everything; a restored state goes on with its own seed unless one is given.
    const seed = args.seed ?? snapshot?.seed ?? randomInt(1, 2 ** 47);
    const store = args.store ?? storeFromEnv();
    // On a store the root key comes from the store's seed when none is given: every replica
    // started without --root-key then agrees with the first.
    const rootKey = givenRootKey ?? (args.seed === undefined && store === undefined ? randomRootKey() : undefined);
    const start = args.start === undefined ? undefined : parseInstant(args.start, '--start');
    const faults = args.fault === undefined || args.fault.length === 0 ? undefined : faultsFromFlags(args.fault.map(String));
    const allowedHosts = [...(args.allowHost ?? []).map(String), ...allowedHostsFromEnv(process.env.KEYSIM_ALLOWED_HOSTS)];
    for (const host of allowedHosts) {
      const entry = allowedHostEntry(host);
      if (!entry.ok) usageError(`KEYSIM_ALLOWED_HOSTS: ${entry.message}`);
    }
    const compat = args.compat ?? (args.profile === 'production' ? 'production' : 'interface');
    const replayDelayMs = args.replayDelay === undefined ? undefined : (parseDelay(args.replayDelay) ?? undefined);
    let sim;
    try {
      sim = await createSimulator({
        host: args.host,
        port: args.port,
        clock: args.clock,
        seed,
        compat,
        ...(args.profile === 'production' ? { profile: 'production' as const } : {}),
        ...(args.regions === undefined ? {} : { regions: args.regions }),
        ...(replayDelayMs === undefined ? {} : { replayDelayMs }),
        maxBodyBytes: args.maxBodyBytes,
        restoreMaxBodyBytes: args.restoreMaxBodyBytes,
        ...(rootKey === undefined ? {} : { rootKey }),
        ...(snapshot === undefined ? {} : { snapshot }),
        ...(start?.ok === true ? { startMs: start.value } : {}),
        ...(args.errorsUrl === undefined ? {} : { errorsUrl: args.errorsUrl }),
        ...(faults?.ok === true ? { faults: faults.config } : {}),
        workers: args.workers,
        keepAliveTimeoutMs: args.keepAlive * 1000,
        ...(allowedHosts.length === 0 ? {} : { allowedHosts }),
        ...(store === undefined ? {} : { store }),
        ...(args.storePrefix === undefined ? {} : { storePrefix: args.storePrefix }),
        ...(args.storeCheckpointEvery === undefined ? {} : { storeCheckpointEvery: args.storeCheckpointEvery }),
      });
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code === 'KEYSIM_BAD_SNAPSHOT') usageError(`--restore ${args.restore ?? ''}: ${error instanceof Error ? error.message : String(error)}`);
      const hint = code === 'EADDRINUSE' ? ` Port ${args.port} is taken: choose another with --port, or --port 0 for a free one.` : '';
      // The store's errors say "cannot start the simulator: …" themselves: said once is enough.
      const message = (error instanceof Error ? error.message : String(error)).replace(/^cannot start the simulator: /, '').replace(/\.$/, '');
      process.stderr.write(`keysim serve: cannot start: ${message}.${hint}\n`);
      process.exit(code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL' ? EXIT.usage : EXIT.failure);
    }
    const out = process.stdout;
    writeServeBanner(out, sim, {
      args,
      seedGiven: args.seed !== undefined,
      restored: snapshot !== undefined,
      rootKeyGiven: givenRootKey !== undefined,
      faultsGiven: faults?.ok === true,
      allowedHosts,
    });

    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) return;
      stopping = true;
      out.write(`keysim simulator: ${signal}, stopping\n`);
      sim.close().then(
        () => process.exit(EXIT.ok),
        () => process.exit(EXIT.failure),
      );
    };
    process.on('SIGINT', () => stop('SIGINT'));
    process.on('SIGTERM', () => stop('SIGTERM'));
    await new Promise<never>(() => undefined);
  },
};
