/**
 * The service's operations (every route but the admin surface) and their names: `keys.verifyKey`
 * for v2, `v1.identities.getIdentity` for version 1 — the operationIds of the OpenAPI document,
 * and the names the fault filter (`operations`) takes.
 */
import type { Route } from './route.js';
import { apiRoutes } from './v2/apis.js';
import { keyRoutes } from './v2/keys.js';
import { identityRoutes } from './v2/identities.js';
import { ratelimitRoutes } from './v2/ratelimit.js';
import { v1IdentityRoutes } from './v1/identities.js';

/** Every route of the service itself (v2, then v1), without the `/_sim/*` admin surface. */
export const SERVICE_ROUTES: readonly Route[] = [...apiRoutes, ...keyRoutes, ...identityRoutes, ...ratelimitRoutes, ...v1IdentityRoutes];

/** `/v2/keys.verifyKey` → `keys.verifyKey`; `/v1/identities.getIdentity` → `v1.identities.getIdentity`; `/_sim/reset` → `_sim.reset`. */
export function operationName(path: string): string {
  return path.replace(/^\/(v1|v2|_sim)\//, (_, v: string) => (v === 'v2' ? '' : `${v}.`));
}

/** The names of the service's operations, in route order. */
export const OPERATIONS: readonly string[] = SERVICE_ROUTES.map((route) => operationName(route.path));
