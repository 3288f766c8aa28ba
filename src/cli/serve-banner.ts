/** What `keysim serve` prints once it listens: how the simulator was started and how to reach it. */
import { type Simulator, describeFaults, exposureWarning, isLoopbackAddress } from '../http/index.js';

export interface BannerFacts {
  args: { workers: number; restore?: string | undefined; seed?: number | undefined; keepAlive: number };
  seedGiven: boolean;
  restored: boolean;
  rootKeyGiven: boolean;
  faultsGiven: boolean;
  allowedHosts: readonly string[];
}

/** The start state's lines: clock, seed, profile, store, workers, restore, faults, root key. */
function writeState(out: NodeJS.WritableStream, sim: Simulator, facts: BannerFacts): void {
  const { args } = facts;
  const randomSeed = !facts.seedGiven && !facts.restored && sim.store?.created !== false;
  out.write(
    `  clock: ${sim.clock.mode}, at ${new Date(sim.clock.now()).toISOString()}; compat: ${sim.engine.compat}; seed: ${sim.engine.seed}${randomSeed ? ' (random)' : ''}\n`,
  );
  if (sim.profile !== undefined) {
    const { regions, replayDelayMs: delay } = sim.profile.figures;
    out.write(
      `  profile: production, ${regions} regions (X-Keysim-Region: 1..${regions}, else one per connection in turn; answers say x-keysim-region); debits reach the database after ${delay.min}..${delay.max} ms\n`,
    );
  }
  if (sim.store !== undefined) {
    const role = sim.store.created ? 'the first replica: the store holds the start options above' : "joined: the store's seed, root key and clock are used";
    out.write(`  store: ${sim.store.url} (keys {${sim.store.prefix}}:*), ${role}; /_sim/* on any replica acts on all\n`);
  }
  if (args.workers > 1) out.write(`  ${args.workers} HTTP worker processes; this process (pid ${process.pid}) owns the engine, clock, journal and faults\n`);
  if (args.restore !== undefined) out.write(`  state restored from ${args.restore} (a reset goes back to the empty start state)\n`);
  if (facts.faultsGiven) out.write(`  injected faults (until /_sim/faults.clear or /_sim/reset): ${describeFaults(sim.faults.view)}\n`);
  if (!facts.rootKeyGiven) {
    const how = sim.store?.created === false ? "the store's" : args.seed === undefined ? 'random' : `from --seed ${args.seed}`;
    out.write(`  operator root key (generated, ${how}; pass --root-key or KEYSIM_ROOT_KEY to fix it): ${sim.rootKey}\n`);
  }
}

export function writeServeBanner(out: NodeJS.WritableStream, sim: Simulator, facts: BannerFacts): void {
  out.write(`keysim simulator listening on ${sim.url}\n`);
  writeState(out, sim, facts);
  out.write(`  idle keep-alive connections kept ${facts.args.keepAlive} s (--keep-alive)\n`);
  const hostname = new URL(sim.url).hostname;
  if (facts.allowedHosts.length > 0) {
    out.write(
      isLoopbackAddress(hostname)
        ? `  Host names answered besides the loopback ones: ${facts.allowedHosts.join(', ')}\n`
        : `  --allow-host has no effect: bound beyond loopback, every Host is answered\n`,
    );
  }
  const warning = exposureWarning(hostname);
  if (warning !== null) process.stderr.write(`keysim serve: ${warning}\n`);
  out.write("  OpenAPI document: GET /openapi.json; admin: POST /_sim/* (the operator's root key only); Ctrl-C stops.\n");
}
