/**
 * The production profile behind HTTP: which region a request runs in. A client names it with the
 * `X-Keysim-Region` header (1..N); without one, each new connection is given the next region in
 * turn and keeps it (a client on one keep-alive connection stays in one region, as behind a
 * regional load balancer). Every answer then carries the region in `x-keysim-region`, so that a
 * client's history can attribute each decision.
 */
import type { Socket } from 'node:net';
import type { IncomingMessage } from 'node:http';
import { type Problem, invalidInput } from './envelope.js';
import type { RegionContexts, RouteContext } from './route.js';
import { type ProductionProfile } from '../engine/index.js';

/** The request header that picks a region, and the answer header that names it (lower case). */
export const REGION_HEADER = 'x-keysim-region';

/** The region contexts of a profile: the route context with each region's engine. */
export function regionContexts(ctx: RouteContext, profile: ProductionProfile): RegionContexts {
  const contexts: RouteContext[] = [];
  const regions: RegionContexts = { profile, contexts };
  // Each region's context names the profile too: a handler run in a region (every call of the
  // production profile is) can tell that it is not on the exact engine.
  for (let i = 0; i < profile.regionCount; i++) contexts.push({ ...ctx, engine: profile.region(i + 1), regions });
  return regions;
}

/** Picks each request's region: its header, else its connection's. */
export class RegionPicker {
  readonly #byConnection = new WeakMap<Socket, number>();
  #next = 0;

  constructor(readonly regions: number) {}

  /** The request's region (1-based), or the 400 to answer for a header out of range. */
  pick(req: IncomingMessage): number | Problem {
    const header = req.headers[REGION_HEADER];
    if (header !== undefined) {
      const text = Array.isArray(header) ? header.join(',') : header;
      const region = /^[0-9]{1,3}$/.test(text.trim()) ? Number(text.trim()) : NaN;
      if (region >= 1 && region <= this.regions) return region;
      const message = `must be a region number from 1 to ${this.regions}, got "${text.slice(0, 40)}"`;
      return invalidInput(`The X-Keysim-Region header ${message}; send 1..${this.regions}, or no header to be given a region per connection.`, [
        { location: `header.${REGION_HEADER}`, message },
      ]);
    }
    let region = this.#byConnection.get(req.socket);
    if (region === undefined) {
      region = (this.#next % this.regions) + 1;
      this.#next++;
      this.#byConnection.set(req.socket, region);
    }
    return region;
  }
}
