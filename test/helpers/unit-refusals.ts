/**
 * What the unit tier refuses: Node's own entry points to a server, a socket, a child process and a
 * worker thread, replaced by functions that throw until `restore()` puts the originals back.
 * Everything higher up (node:http, node:https, node:tls, undici, fetch, execa-like wrappers) goes
 * through one of these, so a unit-tier file that starts anything fails with a message naming the
 * tier file to change.
 */
import * as dgram from 'node:dgram';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import * as net from 'node:net';

/** What a refused call says: what happened and how to fix it. */
export const REFUSAL =
  'is refused in the unit tier (no server, no process, no socket): move this file out of UNIT_TESTS in test/tiers.ts, or keep the test away from live resources';

const require = createRequire(import.meta.url);

/** Where the entry point lives, its name there, and how a refusal names it. */
type Patch = [owner: Record<string, unknown>, name: string, shown: string];

function patches(): Patch[] {
  // The CommonJS objects behind the builtins: changing them, then syncBuiltinESMExports(), changes
  // the named ESM exports too (`import { spawn } from 'node:child_process'` sees the refusal).
  const child = require('node:child_process') as Record<string, unknown>;
  const workers = require('node:worker_threads') as Record<string, unknown>;
  const dgramModule = require('node:dgram') as Record<string, unknown>;
  return [
    [net.Server.prototype as unknown as Record<string, unknown>, 'listen', 'server.listen()'],
    [net.Socket.prototype as unknown as Record<string, unknown>, 'connect', 'socket.connect()'],
    [dgram.Socket.prototype as unknown as Record<string, unknown>, 'bind', 'dgram socket.bind()'],
    [dgramModule, 'createSocket', 'dgram.createSocket()'],
    ...['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork'].map((name): Patch => [child, name, `child_process.${name}()`]),
    [workers, 'Worker', 'new Worker()'],
  ];
}

/** Replaces every entry point by a refusal; returns the function that restores them. */
export function refuseLiveResources(): () => void {
  const saved = patches().map(([owner, name, shown]) => ({ owner, name, shown, original: owner[name] }));
  for (const { owner, name, shown } of saved) {
    owner[name] = function refused(): never {
      throw new Error(`${shown} ${REFUSAL}`);
    };
  }
  syncBuiltinESMExports();
  return () => {
    for (const { owner, name, original } of saved) owner[name] = original;
    syncBuiltinESMExports();
  };
}
