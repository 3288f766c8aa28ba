/** Every route the simulator serves, in one list: the router and the OpenAPI document read it. */
import type { Route } from './route.js';
import { SERVICE_ROUTES } from './operations.js';
import { adminRoutes } from './admin.js';

export const ROUTES: readonly Route[] = [...SERVICE_ROUTES, ...adminRoutes];

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
