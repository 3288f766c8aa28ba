/**
 * Helpers for a scenario's setup: fixtures made through the public API, each registered for
 * deletion at the end of the run, and rate-limit namespaces. They throw (naming the operation and
 * the service's answer) when a fixture cannot be made, which fails the run's setup.
 */
import { type Json, shown } from './scenario-checks.js';
import type { Operation, ScenarioContext } from './scenario.js';
import { READ_ATTEMPTS, readOutcome } from './scenario-calls.js';

/** Resolves after `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Runs `fn` over `items` with at most `limit` calls in flight; results in input order. */
export async function inParallel<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      out[index] = await fn(items[index] as T, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/** Fixture calls in flight at once while setting up (well under the service's own limits). */
export const SETUP_CONCURRENCY = 16;

/**
 * Calls a deletion (e.g. keys.deleteKey) whose target may already be gone (deleted by the load, or with its namespace,
 * whatever order the cleanups run in): 200, 404 and 410 are all fine; any other answer throws. For `ctx.onCleanup`.
 */
export async function deleteQuietly(ctx: ScenarioContext, op: Operation, body: unknown): Promise<void> {
  const response = await ctx.api.call(op, body);
  if (response.status !== 200 && response.status !== 404 && response.status !== 410)
    throw new Error(`cleanup ${op} ${JSON.stringify(body)} answered ${shown(response)}`);
}

/**
 * Creates an API named `<ctx.tag>-<purpose>` and returns its id; throws when the service refuses.
 * An API named after the run. The public operations include no API deletion, so on a live target
 * the (then empty) API stays behind; its name says which run made it.
 */
export async function createTaggedApi(ctx: ScenarioContext, purpose: string): Promise<string> {
  const name = `${ctx.tag}-${purpose}`;
  const { apiId } = await ctx.api.data<{ apiId: string }>('apis.createApi', { name });
  if (ctx.target.kind === 'live')
    ctx.log(`created API "${name}" (${apiId}); the service has no operation to delete an API, so it stays (empty once its keys are deleted)`);
  return apiId;
}

/** A key made by `createKey`: its id, and the key itself (the secret a verification sends). */
export interface CreatedKey {
  keyId: string;
  key: string;
}

/**
 * keys.createKey with `body` (e.g. `{ apiId, credits: { remaining: 100 } }`), its deletion
 * registered for the end of the run; throws an Error naming the operation when the service refuses.
 */
export async function createKey(ctx: ScenarioContext, body: Json): Promise<CreatedKey> {
  const created = await ctx.api.data<CreatedKey>('keys.createKey', body);
  ctx.onCleanup(() => deleteQuietly(ctx, 'keys.deleteKey', { keyId: created.keyId }));
  return { keyId: created.keyId, key: created.key };
}

/**
 * identities.createIdentity with `body`, its deletion registered for the end of the run; returns
 * the identity's id; throws an Error naming the operation when the service refuses.
 */
export async function createIdentity(ctx: ScenarioContext, body: Json & { externalId: string }): Promise<string> {
  const { identityId } = await ctx.api.data<{ identityId: string }>('identities.createIdentity', body);
  ctx.onCleanup(() => deleteQuietly(ctx, 'identities.deleteIdentity', { identity: identityId }));
  return identityId;
}

/**
 * A rate-limit namespace for the run; returns its name. Throws when the target has none and
 * cannot make one (a live target without the namespace named in KEYSIM_NAMESPACE). Production has no public operation that creates one, so:
 * - on a simulator (the embedded one, or `keysim serve` reached over a URL), the admin surface
 *   creates `<tag>-<suffix>` and deletes it at the end;
 * - on a live target, the scenario cannot create it. It uses `KEYSIM_NAMESPACE` when set (a
 *   namespace made beforehand, e.g. in the dashboard), else `<tag>-<suffix>`, and probes it with a
 *   cost-0 limit (which consumes nothing). A target that creates namespaces on first use
 *   (production) then works whatever the compat setting; one that follows the interface document
 *   answers 404, and the run stops with a message saying which namespace must exist. This probe
 *   is what makes the scenario independent of `compat`.
 */
export async function ensureNamespace(ctx: ScenarioContext, suffix: string): Promise<string> {
  const own = `${ctx.tag}-${suffix}`;
  const admin = ctx.admin;
  if (admin !== undefined) {
    await admin.createNamespace(own);
    ctx.onCleanup(() => admin.deleteNamespace(own));
    return own;
  }
  const given = process.env.KEYSIM_NAMESPACE;
  const namespace = given !== undefined && given !== '' ? given : own;
  // Cost 0 consumes nothing: asked again when its answer never came (a dropped connection, a gateway's 502).
  const outcome = await readOutcome(ctx, 'ratelimit.limit', { namespace, identifier: `${ctx.tag}-probe`, limit: 1, duration: 1000, cost: 0 });
  if (!outcome.answered) throw new Error(`probing the rate-limit namespace "${namespace}": no answer came in ${READ_ATTEMPTS} attempts (${outcome.why})`);
  const probe = outcome.response;
  if (probe.status === 404) {
    const message =
      `the rate-limit namespace "${namespace}" does not exist on the target and the public API cannot create one: ` +
      'create it beforehand and name it in KEYSIM_NAMESPACE';
    ctx.log(message);
    throw new Error(message);
  }
  if (probe.status !== 200) throw new Error(`probing the rate-limit namespace "${namespace}" answered ${shown(probe)}`);
  ctx.log(
    given !== undefined && given !== ''
      ? `using the rate-limit namespace "${namespace}" from KEYSIM_NAMESPACE`
      : `the target created the rate-limit namespace "${namespace}" on first use; there is no public operation to delete it, so it stays`,
  );
  return namespace;
}
