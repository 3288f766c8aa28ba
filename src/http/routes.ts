/** Every route the simulator serves, in one list: the router and the OpenAPI document read it. */
import type { Route } from './route.js';
import { apiRoutes } from './v2/apis.js';
import { keyRoutes } from './v2/keys.js';
import { identityRoutes } from './v2/identities.js';
import { ratelimitRoutes } from './v2/ratelimit.js';
import { v1IdentityRoutes } from './v1/identities.js';
import { adminRoutes } from './admin.js';

export const ROUTES: readonly Route[] = [...apiRoutes, ...keyRoutes, ...identityRoutes, ...ratelimitRoutes, ...v1IdentityRoutes, ...adminRoutes];

/** path → the routes on it (one per method). */
export function routeTable(routes: readonly Route[] = ROUTES): Map<string, Route[]> {
  const table = new Map<string, Route[]>();
  for (const route of routes) {
    const list = table.get(route.path) ?? [];
    list.push(route);
    table.set(route.path, list);
  }
  return table;
}
