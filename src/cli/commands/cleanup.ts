/**
 * `keysim cleanup --target URL --tag <run tag>`: deletes what a run left on a target (after
 * --keep, a crash or a kill), found by the run's tag and the ledger the run wrote beside its
 * reports (keys can be found no other way: the public API does not list them).
 */
import { existsSync } from 'node:fs';
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { ResourceLedger, RESOURCE_KINDS, type ResourceEntry, ledgerPath } from '../../load/resources/index.js';
import { RESOURCES_FILE, ResourcesFileError, readOpenResources } from '../../load/resources/index.js';
import { trackingAdmin, trackingServiceApi } from '../../load/resources/index.js';
import { deleteResources, describeResource, findLeftovers, type SweepOptions } from '../../load/resources/index.js';
import { type HttpJsonClient, ServiceCallError, detailOf, httpJsonClient, serviceApi, simulatorAdmin } from '../../load/target/index.js';
import { detectUrlTarget, liveTarget } from '../../load/target/index.js';
import { classifyTransportError } from '../../load/answers/index.js';
import { kindLabel } from '../../report/resources-text.js';
import { EXIT, type ExitCode, UsageError } from '../exit-codes.js';
import { readFixturesTag } from '../fixtures-file.js';
import { example } from '../help-example.js';
import { readCaFile } from '../ca-file.js';
import { untrustedCertificateMessage } from '../../load/target/index.js';

interface CleanupArgs {
  target: string;
  /** The run's tag; or --fixtures, whose file names the shared set-up's. */
  tag?: string;
  fixtures?: string;
  dryRun: boolean;
  out: string;
  namespace: string[];
  /** Segments' resources.json files or run folders (docs/distributed.md#set-up-once). */
  resources?: string[];
  rootKey?: string;
  /** --ca: the PEM file of the CA(s) to trust for an https target. */
  ca?: string;
}

/** A run's tag: `keysim-` and its run id. Anything looser could match what other runs, or people, made. */
const TAG_PATTERN = /^keysim-[0-9A-Za-z][0-9A-Za-z-]*$/;

function perKind(entries: readonly ResourceEntry[]): string {
  const parts = RESOURCE_KINDS.map((kind) => [kind, entries.filter((e) => e.kind === kind).length] as const)
    .filter(([, n]) => n > 0)
    .map(([kind, n]) => `${n} ${kindLabel(kind)}`);
  return parts.length === 0 ? 'nothing' : parts.join(', ');
}

/** `data` of an admin call (`/_sim/<op>`), or a ServiceCallError. */
async function simulatorCall(client: HttpJsonClient, op: string): Promise<unknown> {
  const res = await client.post(`/_sim/${op}`, {}, 'root');
  if (res.status !== 200) throw new ServiceCallError(`/_sim/${op}`, res.status, detailOf(res.body));
  return (res.body as { data?: unknown }).data;
}

/** The tag to clean up: --tag, or the one in the shared set-up's --fixtures file (they must agree when both are given). */
function runTag(args: Pick<CleanupArgs, 'tag' | 'fixtures'>): string {
  const fromFile = args.fixtures === undefined ? undefined : readFixturesTag(args.fixtures);
  if (args.tag !== undefined && fromFile !== undefined && args.tag !== fromFile) {
    throw new UsageError(
      `--tag ${args.tag} and --fixtures ${args.fixtures as string} name different runs (the file's set-up is ${fromFile}): give one of them.`,
    );
  }
  const tag = args.tag ?? fromFile;
  if (tag === undefined)
    throw new UsageError(
      'Name the run to clean up: --tag <run tag> (its summary names it), or --fixtures FILE for a shared set-up (keysim run --setup-only --fixtures FILE).',
    );
  return tag;
}

export async function cleanupCommand(args: CleanupArgs, write: (text: string) => void = (t) => process.stdout.write(t)): Promise<ExitCode> {
  const tag = runTag(args);
  if (!TAG_PATTERN.test(tag)) {
    throw new UsageError(
      `--tag "${tag}" is not a run tag: a run's tag looks like keysim-20260101T120000-1 (the run's summary and --keep name it, and so does its ledger file, <reports>/.resources/<tag>.jsonl).`,
    );
  }
  try {
    new URL(args.target);
  } catch {
    throw new UsageError(`--target must be the URL of the deployment the run went to, e.g. https://api.example.com, got "${args.target}".`);
  }
  const fromEnv = process.env.KEYSIM_ROOT_KEY;
  const rootKey = args.rootKey ?? (fromEnv === '' ? undefined : fromEnv);
  if (rootKey === undefined) throw new UsageError("keysim cleanup needs the target's root key: set KEYSIM_ROOT_KEY (recommended) or pass --root-key.");
  try {
    liveTarget(args.target, rootKey);
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }

  // What segments run elsewhere created and handed to the teardown: read before anything is asked of the target.
  const handedBack: ResourceEntry[] = [];
  for (const path of args.resources ?? []) {
    try {
      handedBack.push(...readOpenResources(path, tag).open);
    } catch (error) {
      if (error instanceof ResourcesFileError) throw new UsageError(`--resources: ${error.message}`);
      throw error;
    }
  }

  const ca = readCaFile(args.ca);
  const { target, note } = await detectUrlTarget(args.target, rootKey, undefined, ca);
  if (note !== undefined) process.stderr.write(`keysim: ${note}\n`);
  const path = ledgerPath(args.out, tag);
  const hasLedger = existsSync(path);
  // A dry run changes nothing, not even the ledger.
  const ledger = hasLedger ? ResourceLedger.read(path, tag, !args.dryRun) : new ResourceLedger(tag);
  for (const entry of handedBack) ledger.created(entry);
  if (!hasLedger && handedBack.length > 0) {
    write(
      `No ledger of run ${tag} in ${path}: using the ${handedBack.length} resources the --resources files list, and looking for identities and overrides by the tag.\n`,
    );
  } else if (!hasLedger && target.clockControl) {
    write(`No ledger of run ${tag} in ${path}: looking for its resources by the tag in the simulator's snapshot.\n`);
  } else if (!hasLedger) {
    write(
      `No ledger of run ${tag} in ${path}: keys (and APIs) cannot be found without it, as the API does not list them. ` +
        'Looking for identities and overrides by the tag only (overrides in the namespaces named with --namespace or KEYSIM_NAMESPACE). ' +
        'Pass --out with the reports folder of the run to use its ledger.\n',
    );
  }
  const client = httpJsonClient(target, 10_000);
  const namespaces = [...args.namespace, ...(process.env.KEYSIM_NAMESPACE ? [process.env.KEYSIM_NAMESPACE] : [])];
  const sweep: SweepOptions = {
    api: trackingServiceApi(serviceApi(client), ledger),
    admin: target.clockControl ? trackingAdmin(simulatorAdmin(client), ledger) : undefined,
    ledger,
    namespaces,
    ...(target.clockControl ? { snapshot: async () => await simulatorCall(client, 'snapshot') } : {}),
  };
  try {
    let leftovers: ResourceEntry[];
    try {
      leftovers = await findLeftovers(sweep);
    } catch (error) {
      const untrusted = untrustedCertificateMessage(target.url, error);
      process.stderr.write(
        `keysim: could not look for the resources of ${tag} on ${target.url}: ${untrusted ?? `${error instanceof Error ? error.message : String(error)} (${classifyTransportError(error)})`}\n`,
      );
      return EXIT.targetUnreachable;
    }
    const apis = leftovers.filter((e) => e.kind === 'apis');
    const deletable = leftovers.filter((e) => e.kind !== 'apis');
    const apisLine = apis.length === 0 ? '' : `${apis.length} APIs stay: the service has no operation to delete one (they are empty, named after the tag).\n`;
    if (args.dryRun) {
      write(`Dry run: would delete from ${target.url}: ${perKind(deletable)}.\n`);
      for (const kind of RESOURCE_KINDS) for (const entry of deletable.filter((e) => e.kind === kind)) write(`  ${describeResource(entry)}\n`);
      write(apisLine);
      return EXIT.ok;
    }
    const failures = await deleteResources(sweep, deletable);
    const failed = new Set(failures.map((f) => f.entry));
    write(`Deleted from ${target.url}: ${perKind(deletable.filter((e) => !failed.has(e)))}.\n${apisLine}`);
    if (failures.length > 0) {
      write(`Could not delete ${perKind(failures.map((f) => f.entry))}:\n`);
      for (const f of failures) write(`  ${describeResource(f.entry)}: ${f.reason}\n`);
      return EXIT.resourcesLeft;
    }
    ledger.discardFile();
    return EXIT.ok;
  } finally {
    await client.close();
  }
}

export const cleanupCommandModule: CommandModule<object, CleanupArgs> = {
  command: 'cleanup',
  describe: 'Delete what a run left on a target (after --keep, a crash or a kill), found by its tag',
  builder: (y: Argv) =>
    y
      .option('target', { type: 'string', demandOption: true, describe: 'The base URL the run went to' })
      .option('tag', { type: 'string', describe: "The run's tag, e.g. keysim-20260101T120000-1 (the names of what it created start with it)" })
      .option('fixtures', { type: 'string', describe: "A shared set-up's fixtures file (keysim run --setup-only --fixtures FILE): its tag, instead of --tag" })
      .option('dry-run', { type: 'boolean', default: false, describe: 'List what would be deleted; delete nothing' })
      .option('out', {
        type: 'string',
        default: 'reports',
        describe: 'The reports folder of the run: its ledger (.resources/<tag>.jsonl) lists the keys it made',
      })
      .option('namespace', {
        type: 'string',
        array: true,
        default: [],
        describe: "Also look for the run's overrides in this rate-limit namespace (repeatable; KEYSIM_NAMESPACE is searched too)",
      })
      .option('resources', {
        type: 'string',
        array: true,
        describe: `Also delete what segments run elsewhere left: their ${RESOURCES_FILE} files or run folders (repeatable)`,
      })
      .option('root-key', { type: 'string', describe: 'Root key of the target (prefer the KEYSIM_ROOT_KEY variable)' })
      .option('ca', { type: 'string', describe: "PEM file of the CA(s) that signed an https target's certificate (a private CA)" })
      .example(...example('KEYSIM_ROOT_KEY=… $0 cleanup --target https://api.example.com --tag keysim-20260101T120000-1 --dry-run', 'list what the run left'))
      .example(
        ...example(
          'KEYSIM_ROOT_KEY=… $0 cleanup --target https://api.example.com --tag keysim-20260101T120000-1',
          'delete it (exit 95 if something could not be)',
        ),
      )
      .example(
        ...example(
          'KEYSIM_ROOT_KEY=… $0 cleanup --target https://api.example.com --tag keysim-20260101T120000-1 --resources reports/*-segment-*',
          "with the keys the segments' load created",
        ),
      )
      .example(
        ...example(
          'KEYSIM_ROOT_KEY=… $0 cleanup --target https://api.example.com --fixtures fixtures.json --out reports/setup --resources reports/*-segment-*',
          'after segments that shared a set-up: its tag from the fixtures file',
        ),
      ) as unknown as Argv<CleanupArgs>,
  handler: async (args: ArgumentsCamelCase<CleanupArgs>) => {
    process.exitCode = await cleanupCommand(args);
  },
};
