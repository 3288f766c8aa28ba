/**
 * identities-crud: identities created, read, paged through, updated and deleted under load.
 *
 * Four groups, all named `<tag>-<group>-<n>`:
 *   stable  made in setup, only read: every read is exact;
 *   mutable made in setup, updated by the load with self-describing values (meta.sig names the
 *           identity and the revision, the rate limit is derived from the revision), so an answer
 *           that mixes two identities or two updates shows up;
 *   doomed  made in setup, each deleted exactly once by the load;
 *   new     created by the load under fresh names.
 * Pages come back in ascending id order whatever runs at the same time; the load follows cursors
 * that earlier pages returned. The end-of-run walk over every page checks that the groups add up
 * to what the run's answers say was created and deleted, give or take the creations and deletions
 * without answer (transport errors, or cut off at the end of a closed-model phase), which may or
 * may not have taken effect. The warm-up only reads, so every creation and deletion is in the
 * measured figures.
 */
import {
  type MixEntry,
  type PhaseSpec,
  SETUP_CONCURRENCY,
  type ScenarioContext,
  checkResult,
  createIdentity,
  defineScenario,
  deleteQuietly,
  expectError,
  inParallel,
  isInt,
  isRecord,
  notJudged,
  okData,
  okList,
  readOutcome,
  sameJson,
  shown,
  statusCount,
  withoutAnswer,
} from '../src/index.js';
import { ascendingIds, paginationProblem, plannedCount } from './support/common.js';

const STABLE = 40;
const MUTABLE = 20;
const PAGE = 20;
const WEIGHTS = { get: 40, list: 15, update: 20, create: 15, delete: 10 } as const;
const WEIGHT_SUM = Object.values(WEIGHTS).reduce((a, b) => a + b, 0);
const limitOfRevision = (rev: number): number => 100 + (rev % 50);

interface Member {
  id: string;
  externalId: string;
}

interface CrudFixtures {
  tag: string;
  stable: Member[];
  mutable: Member[];
  /** Doomed identities not yet handed to a delete request. */
  doomed: Member[];
  doomedTotal: number;
  doomedExhausted: boolean;
  /** Revisions sent per mutable externalId (the last to arrive wins, so any of them may remain). */
  revisions: Map<string, Set<number>>;
  nextRevision: number;
  createdNames: string[];
  /** Cursors returned by pages so far (a bounded sample). */
  cursors: string[];
}

const group = (f: CrudFixtures, name: string) => `${f.tag}-${name}-`;

function identityShape(item: unknown): string | undefined {
  return isRecord(item) && typeof item.id === 'string' && item.id.startsWith('id_') && typeof item.externalId === 'string'
    ? undefined
    : `not an identity: ${JSON.stringify(item)}`;
}

/** A mutable identity as answered: meta and rate limit must describe the same revision of the same identity. */
function mutableProblem(item: Record<string, unknown>): string | undefined {
  const meta = isRecord(item.meta) ? item.meta : {};
  const none = item.ratelimits === undefined || (Array.isArray(item.ratelimits) && item.ratelimits.length === 0);
  if (meta.rev === 0 && meta.sig === `${String(item.externalId)}#0` && none) return undefined;
  if (!isInt(meta.rev) || meta.sig !== `${String(item.externalId)}#${meta.rev}`)
    return `meta ${JSON.stringify(item.meta)} does not describe ${String(item.externalId)}`;
  const limits = Array.isArray(item.ratelimits) ? item.ratelimits : [];
  const rl: unknown = limits[0];
  if (limits.length !== 1 || !isRecord(rl) || rl.name !== 'requests' || rl.limit !== limitOfRevision(meta.rev) || rl.duration !== 60_000) {
    return `ratelimits ${JSON.stringify(item.ratelimits)} do not match revision ${meta.rev}`;
  }
  return undefined;
}

const getEntry: MixEntry<CrudFixtures> = {
  name: 'getIdentity stable',
  weight: WEIGHTS.get,
  build(f, random) {
    const member = f.stable[random.int(f.stable.length)] as Member;
    // Alternate the two kinds of reference: the id and the externalId.
    return { op: 'identities.getIdentity', body: { identity: random.int(2) === 0 ? member.id : member.externalId } };
  },
  check(r, f) {
    const d = okData(r);
    if (typeof d === 'string') return d;
    const n = f.stable.findIndex((m) => m.id === d.id);
    const member = f.stable[n];
    if (member === undefined || d.externalId !== member.externalId) return `not a stable identity: ${shown(r)}`;
    return sameJson(d.meta, { group: 'stable', n }) ? undefined : `meta ${JSON.stringify(d.meta)}, expected {group: 'stable', n: ${n}}`;
  },
};

const listEntry: MixEntry<CrudFixtures> = {
  name: 'listIdentities page',
  weight: WEIGHTS.list,
  build(f, random) {
    const cursor = f.cursors.length > 0 && random.int(3) > 0 ? f.cursors[random.int(f.cursors.length)] : undefined;
    return { op: 'identities.listIdentities', body: cursor === undefined ? { limit: PAGE } : { limit: PAGE, cursor } };
  },
  check(r, f) {
    const list = okList(r);
    if (typeof list === 'string') return list;
    if (list.items.length > PAGE) return `${list.items.length} items for limit ${PAGE}`;
    const problem = list.items.map(identityShape).find((p) => p !== undefined) ?? ascendingIds(list.items) ?? paginationProblem(list.pagination);
    if (problem !== undefined) return problem;
    for (const item of list.items as Array<Record<string, unknown>>) {
      if (String(item.externalId).startsWith(group(f, 'mut'))) {
        const p = mutableProblem(item);
        if (p !== undefined) return p;
      }
    }
    const cursor = list.pagination.cursor;
    if (typeof cursor === 'string' && f.cursors.length < 64) f.cursors.push(cursor);
    return undefined;
  },
};

const updateEntry: MixEntry<CrudFixtures> = {
  name: 'updateIdentity',
  weight: WEIGHTS.update,
  build(f, random) {
    const member = f.mutable[random.int(f.mutable.length)] as Member;
    const rev = ++f.nextRevision;
    f.revisions.get(member.externalId)?.add(rev);
    return {
      op: 'identities.updateIdentity',
      body: {
        identity: member.externalId,
        meta: { rev, sig: `${member.externalId}#${rev}` },
        ratelimits: [{ name: 'requests', limit: limitOfRevision(rev), duration: 60_000 }],
      },
    };
  },
  check(r, f) {
    const d = okData(r);
    if (typeof d === 'string') return d;
    if (!f.mutable.some((m) => m.id === d.id && m.externalId === d.externalId)) return `not a mutable identity: ${shown(r)}`;
    // The answer is the identity right after this update, so it cannot show revision 0.
    return (isRecord(d.meta) && d.meta.rev === 0 ? 'the update was not applied' : undefined) ?? mutableProblem(d);
  },
};

const createEntry: MixEntry<CrudFixtures> = {
  name: 'createIdentity',
  weight: WEIGHTS.create,
  build(f) {
    const externalId = `${group(f, 'new')}${f.createdNames.length}`;
    f.createdNames.push(externalId);
    return { op: 'identities.createIdentity', body: { externalId, meta: { group: 'new' } } };
  },
  check(r) {
    const d = okData(r);
    if (typeof d === 'string') return d;
    return typeof d.identityId === 'string' && d.identityId.startsWith('id_') ? undefined : `identityId ${String(d.identityId)}`;
  },
};

const deleteEntry: MixEntry<CrudFixtures> = {
  name: 'deleteIdentity',
  weight: WEIGHTS.delete,
  build(f) {
    const member = f.doomed.shift();
    if (member === undefined) {
      // More deletions than planned (a higher rate than setup sized for): delete the first doomed
      // one again, which must then answer 404.
      f.doomedExhausted = true;
      return { op: 'identities.deleteIdentity', body: { identity: `${group(f, 'doomed')}0` } };
    }
    return { op: 'identities.deleteIdentity', body: { identity: member.id } };
  },
  check(r, f) {
    if (r.status === 404 && f.doomedExhausted) return expectError(r, 404, 'identity_not_found');
    if (r.status !== 200 || !isRecord(r.body) || !isRecord(r.body.meta) || 'data' in r.body) return `expected 200 with only meta, got ${shown(r)}`;
    return undefined;
  },
};

const readOnlyMix: ReadonlyArray<MixEntry<CrudFixtures>> = [getEntry, listEntry];

async function setup(ctx: ScenarioContext): Promise<CrudFixtures> {
  const tag = ctx.tag;
  // Enough doomed identities for every deletion the measured phase plans, with a margin.
  const plannedDeletes = Math.ceil((plannedCount(ctx.settings.rate, ctx.settings.durationMs) * WEIGHTS.delete) / WEIGHT_SUM);
  const doomedTotal = Math.min(2_000, Math.ceil(plannedDeletes * 1.5) + 10);
  const make = (name: string, count: number, meta: (n: number) => Record<string, unknown>) =>
    inParallel(
      Array.from({ length: count }, (_, n) => n),
      SETUP_CONCURRENCY,
      async (n): Promise<Member> => {
        const externalId = `${tag}-${name}-${n}`;
        return { externalId, id: await createIdentity(ctx, { externalId, meta: meta(n) }) };
      },
    );
  const stable = await make('stable', STABLE, (n) => ({ group: 'stable', n }));
  const mutable = await make('mut', MUTABLE, (n) => ({ rev: 0, sig: `${tag}-mut-${n}#0` }));
  const doomed = await make('doomed', doomedTotal, () => ({ group: 'doomed' }));
  const fixtures: CrudFixtures = {
    tag,
    stable,
    mutable,
    doomed,
    doomedTotal,
    doomedExhausted: false,
    revisions: new Map(mutable.map((m) => [m.externalId, new Set([0])])),
    nextRevision: 0,
    createdNames: [],
    cursors: [],
  };
  // The load's own creations, whatever became of them.
  ctx.onCleanup(async () => {
    await inParallel(fixtures.createdNames, SETUP_CONCURRENCY, (externalId) => deleteQuietly(ctx, 'identities.deleteIdentity', { identity: externalId }));
  });
  return fixtures;
}

/** Every identity of the run, by walking all pages (bounded), with the problems seen on the way. */
async function walkAll(
  ctx: ScenarioContext,
  f: CrudFixtures,
): Promise<{ ours: Array<Record<string, unknown>>; problems: string[]; pages: number; lost?: string }> {
  const ours: Array<Record<string, unknown>> = [];
  const problems: string[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  let last = '';
  let pages = 0;
  for (; pages < 1_000;) {
    // A read: asked again when its answer never came; a page that never came leaves the walk unfinished.
    const outcome = await readOutcome(ctx, 'identities.listIdentities', cursor === undefined ? { limit: 100 } : { limit: 100, cursor });
    pages++;
    if (!outcome.answered) return { ours, problems, pages, lost: `page ${pages} of identities.listIdentities: ${outcome.why}` };
    const list = okList(outcome.response);
    if (typeof list === 'string') {
      problems.push(`page ${pages}: ${list}`);
      break;
    }
    const p = ascendingIds(list.items) ?? paginationProblem(list.pagination);
    if (p !== undefined) problems.push(`page ${pages}: ${p}`);
    for (const item of list.items) {
      if (!isRecord(item) || typeof item.id !== 'string') continue;
      if (item.id <= last) problems.push(`page ${pages}: ${item.id} after ${last}`);
      last = item.id;
      if (seen.has(item.id)) problems.push(`${item.id} listed twice`);
      seen.add(item.id);
      if (typeof item.externalId === 'string' && item.externalId.startsWith(`${f.tag}-`)) ours.push(item);
    }
    cursor = typeof list.pagination.cursor === 'string' ? list.pagination.cursor : undefined;
    if (cursor === undefined) break;
  }
  if (cursor !== undefined) problems.push('more than 1000 pages: walk stopped');
  return { ours, problems, pages };
}

/** The end-of-run checks, in order: all of them judge the identities listed at the end. */
const CHECK_NAMES = [
  'pages in ascending id order, no duplicates',
  'stable identities intact',
  'updates whole and consistent',
  'deletions add up',
  'creations add up',
] as const;

export default defineScenario<CrudFixtures>({
  name: 'identities-crud',
  // The service rules it exercises and judges (src/load/rules/rules.ts).
  rules: ['identities.lifecycle'],
  description: 'Identities created, read, paged through, updated and deleted under load; the pages add up at the end',
  defaults: { rate: 200, durationMs: 10_000, warmupMs: 1_000 },
  setup,
  mix: [getEntry, listEntry, updateEntry, createEntry, deleteEntry],
  phases(ctx) {
    const list: PhaseSpec<CrudFixtures>[] = [];
    if (ctx.settings.warmupMs > 0) list.push({ name: 'warm-up (reads only)', durationMs: ctx.settings.warmupMs, warmup: true, mix: readOnlyMix });
    list.push({ name: 'crud', durationMs: ctx.settings.durationMs });
    return list;
  },
  async finish(ctx, f, results) {
    const { ours, problems, pages, lost } = await walkAll(ctx, f);
    // Every check below reads the whole list: a page that never came leaves them all unjudged.
    if (lost !== undefined) return CHECK_NAMES.map((name) => notJudged(name, 1, lost));
    const byGroup = (name: string) => ours.filter((item) => String(item.externalId).startsWith(group(f, name)));
    const deletes = results.operation('identities.deleteIdentity');
    const creates = results.operation('identities.createIdentity');
    const deleted = statusCount(deletes, 200);
    const created = statusCount(creates, 200);
    const unknownDeletes = withoutAnswer(deletes);
    const unknownCreates = withoutAnswer(creates);
    const unknown = (n: number, what: string) => (n > 0 ? `, ${n} ${what} without answer (may have taken effect)` : '');
    const stableListed = byGroup('stable');
    const stableOk = f.stable.every((m, n) =>
      stableListed.some((item) => item.id === m.id && item.externalId === m.externalId && sameJson(item.meta, { group: 'stable', n })),
    );
    const mutableListed = byGroup('mut');
    const mutableProblems = f.mutable.flatMap((m) => {
      const item = mutableListed.find((i) => i.id === m.id);
      if (item === undefined) return [`${m.externalId} missing`];
      const p = mutableProblem(item);
      if (p !== undefined) return [p];
      const rev = isRecord(item.meta) ? item.meta.rev : undefined;
      return isInt(rev) && f.revisions.get(m.externalId)?.has(rev) === true ? [] : [`${m.externalId} shows revision ${String(rev)}, never sent to it`];
    });
    const doomedLeft = byGroup('doomed').length;
    const newListed = byGroup('new').length;
    return [
      checkResult(
        CHECK_NAMES[0],
        problems.length === 0,
        problems.length === 0 ? `${pages} pages, ${ours.length} identities of this run` : problems.slice(0, 8).join('; '),
      ),
      checkResult(
        CHECK_NAMES[1],
        stableOk && stableListed.length === STABLE,
        `${stableListed.length} of ${STABLE} listed${stableOk ? ', all exact' : ', some differ'}`,
      ),
      checkResult(
        CHECK_NAMES[2],
        mutableProblems.length === 0 && mutableListed.length === MUTABLE,
        mutableProblems.length === 0 ? `${MUTABLE} mutable identities, each at a revision it was sent` : mutableProblems.slice(0, 8).join('; '),
      ),
      checkResult(
        CHECK_NAMES[3],
        doomedLeft <= f.doomedTotal - deleted && doomedLeft >= f.doomedTotal - deleted - unknownDeletes,
        `${doomedLeft} doomed left of ${f.doomedTotal}, ${deleted} deletions answered 200${unknown(unknownDeletes, 'deletions')}`,
      ),
      checkResult(
        CHECK_NAMES[4],
        newListed >= created && newListed <= created + unknownCreates,
        `${newListed} new identities listed, ${created} creations answered 200${unknown(unknownCreates, 'creations')}`,
      ),
    ];
  },
  thresholds: ['errors == 0', 'checks == 0'],
});
