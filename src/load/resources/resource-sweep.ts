/**
 * Finding and deleting what a run left on its target, by its tag and its ledger: shared by the
 * end of every run on a target that outlives it and by `keysim cleanup --tag`.
 *
 * How each kind is found again:
 * - keys and APIs: through the ledger (the public API lists neither), and on a simulator also in
 *   its snapshot by name; a key is checked with keys.getKey. APIs have no delete operation: they
 *   stay, empty, named after the tag.
 * - identities: listed; every externalId starting with `<tag>-` is the run's (so one created by
 *   a request whose answer was lost is found too).
 * - overrides: listed in every namespace the run used (its ledger, plus any named by the
 *   caller); every identifier starting with `<tag>-` is the run's.
 * - namespaces: only those the run created through the simulator's admin surface (a live
 *   deployment creates them on first use and offers no delete), from the ledger or the
 *   simulator's snapshot; probed with a cost-0 limit.
 */
import type { ResourceCount, ResourcesSection } from '../../report/model.js';
import { RESOURCE_KINDS, type ResourceEntry, type ResourceKind, type ResourceLedger } from './resources.js';
import type { ServiceApi, SimulatorAdmin } from '../scenario/index.js';

export interface SweepOptions {
  /** Calls through it are noted in `ledger` (resource-tracking.ts). */
  api: ServiceApi;
  /** The simulator's admin surface (namespaces are deleted through it); undefined on a live target. */
  admin: SimulatorAdmin | undefined;
  ledger: ResourceLedger;
  /** Namespaces to search for overrides beyond the ledger's (e.g. KEYSIM_NAMESPACE). */
  namespaces?: readonly string[];
  /**
   * A simulator's whole state (`/_sim/snapshot`): on a simulator the run's keys and namespaces are
   * found by name even without the ledger. Undefined on a live target.
   */
  snapshot?: () => Promise<unknown>;
}

/** The run's keys (by their name or their API's) and namespaces in a simulator's snapshot, added to the ledger. */
function fromSnapshot(snapshot: unknown, ledger: ResourceLedger, prefix: string): void {
  const list = (name: string): unknown[] => {
    const v = typeof snapshot === 'object' && snapshot !== null ? (snapshot as Record<string, unknown>)[name] : undefined;
    return Array.isArray(v) ? v : [];
  };
  const ours = (name: string | undefined) => name !== undefined && name.startsWith(prefix);
  const apis = new Set(
    list('apis')
      .filter((a) => ours(field(a, 'name')))
      .map((a) => field(a, 'id')),
  );
  for (const key of list('keys')) {
    const id = field(key, 'id');
    const name = field(key, 'name');
    if (id !== undefined && (ours(name) || apis.has(field(key, 'apiId')))) ledger.created({ kind: 'keys', id, ...(name === undefined ? {} : { name }) });
  }
  for (const ns of list('namespaces')) {
    const name = field(ns, 'name');
    const deletedAt = typeof ns === 'object' && ns !== null ? (ns as { deletedAt?: unknown }).deletedAt : undefined;
    if (name !== undefined && ours(name) && deletedAt === null) ledger.created({ kind: 'namespaces', id: name });
  }
}

const PAGE = 100;
/** Pages read per listing at most (10,000 items): a bound on a target with a huge workspace. */
const MAX_PAGES = 100;

interface Page {
  items: unknown[];
  cursor: string | undefined;
  /** 404/410: the listed container (a namespace) is gone. */
  gone: boolean;
}

async function page(api: ServiceApi, op: 'identities.listIdentities' | 'ratelimit.listOverrides', body: Record<string, unknown>): Promise<Page> {
  const res = await api.call(op, body);
  if (res.status === 404 || res.status === 410) return { items: [], cursor: undefined, gone: true };
  const b = res.body as { data?: unknown; pagination?: { hasMore?: unknown; cursor?: unknown } } | undefined;
  if (res.status !== 200 || !Array.isArray(b?.data)) throw new Error(`${op} answered ${res.status}: ${JSON.stringify(res.body)?.slice(0, 200) ?? 'no body'}`);
  const cursor = b.pagination?.hasMore === true && typeof b.pagination.cursor === 'string' ? b.pagination.cursor : undefined;
  return { items: b.data, cursor, gone: false };
}

async function listAll(
  api: ServiceApi,
  op: 'identities.listIdentities' | 'ratelimit.listOverrides',
  body: Record<string, unknown>,
): Promise<{ items: unknown[]; gone: boolean }> {
  const items: unknown[] = [];
  let cursor: string | undefined;
  for (let n = 0; n < MAX_PAGES; n++) {
    const p = await page(api, op, { ...body, limit: PAGE, ...(cursor === undefined ? {} : { cursor }) });
    if (p.gone) return { items, gone: true };
    items.push(...p.items);
    cursor = p.cursor;
    if (cursor === undefined) break;
  }
  return { items, gone: false };
}

const field = (item: unknown, name: string): string | undefined => {
  const v = typeof item === 'object' && item !== null ? (item as Record<string, unknown>)[name] : undefined;
  return typeof v === 'string' ? v : undefined;
};

/**
 * Brings the ledger up to date with the target: adds the run's identities and overrides that
 * listing finds, marks as deleted what is gone. Returns the resources still there (APIs included).
 */
export async function findLeftovers(options: SweepOptions): Promise<ResourceEntry[]> {
  const { api, ledger } = options;
  const prefix = `${ledger.tag}-`;
  if (options.snapshot !== undefined) fromSnapshot(await options.snapshot(), ledger, prefix);

  const listed = await listAll(api, 'identities.listIdentities', {});
  const seen = new Set<string>();
  for (const item of listed.items) {
    const id = field(item, 'id');
    const externalId = field(item, 'externalId');
    if (id === undefined || externalId === undefined || !externalId.startsWith(prefix)) continue;
    seen.add(id);
    ledger.created({ kind: 'identities', id, name: externalId });
  }
  for (const entry of ledger.open.filter((e) => e.kind === 'identities' && !seen.has(e.id))) {
    const res = await api.call('identities.getIdentity', { identity: entry.id });
    if (res.status === 404 || res.status === 410) ledger.deleted('identities', entry.id);
  }

  const namespaces = new Set<string>(options.namespaces ?? []);
  for (const entry of ledger.all) {
    if (entry.kind === 'overrides' && entry.namespace !== undefined) namespaces.add(entry.namespace);
    if (entry.kind === 'namespaces') namespaces.add(entry.id);
  }
  for (const namespace of namespaces) {
    const { items, gone } = await listAll(api, 'ratelimit.listOverrides', { namespace });
    const present = new Set<string>();
    for (const item of items) {
      const identifier = field(item, 'identifier');
      if (identifier === undefined || !identifier.startsWith(prefix)) continue;
      present.add(identifier);
      ledger.created({ kind: 'overrides', id: identifier, namespace });
    }
    for (const entry of ledger.open.filter((e) => e.kind === 'overrides' && e.namespace === namespace && !present.has(e.id))) {
      ledger.deleted('overrides', entry.id, namespace);
    }
    if (gone) ledger.deleted('namespaces', namespace);
  }

  for (const entry of ledger.open.filter((e) => e.kind === 'keys')) {
    const res = await api.call('keys.getKey', { keyId: entry.id });
    if (res.status === 404 || res.status === 410) ledger.deleted('keys', entry.id);
  }
  for (const entry of ledger.open.filter((e) => e.kind === 'namespaces')) {
    const res = await api.call('ratelimit.limit', { namespace: entry.id, identifier: `${prefix}probe`, limit: 1, duration: 1000, cost: 0 });
    if (res.status === 404 || res.status === 410) ledger.deleted('namespaces', entry.id);
  }
  return ledger.open;
}

/** A resource that could not be deleted, and why. */
export interface DeleteFailure {
  entry: ResourceEntry;
  reason: string;
}

const DELETE_ORDER: readonly ResourceKind[] = ['overrides', 'keys', 'identities', 'namespaces'];

/** Deletes `entries` (overrides, keys, identities, then namespaces); APIs have no delete operation and are skipped. */
export async function deleteResources(options: SweepOptions, entries: readonly ResourceEntry[]): Promise<DeleteFailure[]> {
  const { api, admin } = options;
  const failures: DeleteFailure[] = [];
  const expectGone = async (entry: ResourceEntry, op: 'keys.deleteKey' | 'identities.deleteIdentity' | 'ratelimit.deleteOverride', body: unknown) => {
    const res = await api.call(op, body);
    if (res.status !== 200 && res.status !== 404 && res.status !== 410)
      failures.push({ entry, reason: `${op} answered ${res.status}: ${JSON.stringify(res.body)?.slice(0, 200) ?? 'no body'}` });
  };
  for (const kind of DELETE_ORDER) {
    for (const entry of entries.filter((e) => e.kind === kind)) {
      try {
        if (kind === 'overrides') await expectGone(entry, 'ratelimit.deleteOverride', { namespace: entry.namespace, identifier: entry.id });
        else if (kind === 'keys') await expectGone(entry, 'keys.deleteKey', { keyId: entry.id });
        else if (kind === 'identities') await expectGone(entry, 'identities.deleteIdentity', { identity: entry.id });
        else if (admin === undefined)
          failures.push({ entry, reason: "namespaces are deleted through the simulator's admin surface, which this target does not offer" });
        else await admin.deleteNamespace(entry.id);
      } catch (error) {
        failures.push({ entry, reason: error instanceof Error ? error.message : String(error) });
      }
    }
  }
  return failures;
}

/** A resource in one line, e.g. `key key_123 (keysim-…-smoke-limited)`. */
export function describeResource(entry: ResourceEntry): string {
  const kind = { apis: 'API', keys: 'key', identities: 'identity', overrides: 'override', namespaces: 'namespace' }[entry.kind];
  const where = entry.namespace === undefined ? '' : ` in namespace ${entry.namespace}`;
  return `${kind} ${entry.id}${entry.name === undefined ? '' : ` (${entry.name})`}${where}`;
}

/** `keysim cleanup` for a run's leftovers on a target, as the messages show it. */
export function cleanupCommandFor(url: string, tag: string): string {
  return `keysim cleanup --target ${url} --tag ${tag}`;
}

/** The report's resources section from the ledger after the cleanup (or instead of it). */
export function resourcesSection(
  ledger: ResourceLedger,
  options: { disposal: ResourcesSection['disposal']; url: string; notes?: readonly string[] },
): ResourcesSection {
  const counts = ledger.counts();
  const kinds: ResourceCount[] = RESOURCE_KINDS.filter((kind) => counts[kind].created > 0).map((kind) => {
    const { created, deleted } = counts[kind];
    const left = created - deleted;
    // APIs have no delete operation; --keep and a discarded simulator leave everything on purpose.
    const leftExpected = options.disposal !== 'cleaned' || kind === 'apis' ? left : 0;
    return { kind, created, deleted, left, leftExpected };
  });
  const unexpectedlyLeft = kinds.reduce((sum, k) => sum + k.left - k.leftExpected, 0);
  const somethingToDelete = kinds.some((k) => k.kind !== 'apis' && k.left > 0);
  return {
    tag: ledger.tag,
    disposal: options.disposal,
    kinds,
    unexpectedlyLeft,
    ...(somethingToDelete && options.disposal !== 'discarded' ? { cleanupCommand: cleanupCommandFor(options.url, ledger.tag) } : {}),
    notes: [...(options.notes ?? [])],
  };
}
