/**
 * Which route a request's path and method name, or the 404 / 405 that says why none does (a 405
 * lists the methods the path accepts, in its detail and its `Allow` header).
 */
import type { Problem } from './envelope.js';
import type { Route } from './route.js';

/** No route for the request: the problem to answer, and its headers. */
export interface RouteMiss {
  problem: Problem;
  headers?: Record<string, string>;
}

/** The 405 for a path that accepts `allowed` (comma-separated), not `method`. */
export function methodNotAllowed(path: string, allowed: string, method: string): RouteMiss {
  return {
    problem: {
      status: 405,
      title: 'Method Not Allowed',
      identifier: 'err:service:application:method_not_allowed',
      detail: `${path} accepts ${allowed}, not ${method}.`,
    },
    headers: { allow: allowed },
  };
}

/** The route for `method` on `path` (the table from routeTable, routes.ts), or why there is none. */
export function matchRoute(table: ReadonlyMap<string, readonly Route[]>, path: string, method: string): Route | RouteMiss {
  const candidates = table.get(path);
  if (candidates === undefined) {
    return {
      problem: {
        status: 404,
        title: 'Not Found',
        identifier: 'err:service:application:route_not_found',
        detail: `No operation at ${method} ${path.slice(0, 200)}. The operations are listed in GET /openapi.json.`,
      },
    };
  }
  for (const candidate of candidates) {
    if (candidate.method === method) return candidate;
  }
  return methodNotAllowed(path, candidates.map((r) => r.method).join(', '), method);
}
