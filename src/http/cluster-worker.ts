/**
 * An HTTP worker of `keysim serve --workers N` (started by cluster.ts, never by hand): the whole
 * transport pipeline of server.ts — routes, bodies, JSON, authentication header, schemas,
 * envelopes — with the engine owner behind an `EngineLink`. It serves the connections the owner
 * hands it and holds no state of the service: if it dies, the owner starts another and nothing
 * but its open connections is lost.
 */
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { OwnerMessage, WorkerMessage } from './cluster-protocol.js';
import { EngineLink } from './engine-link.js';
import { createSimulatorServer } from './server.js';

function send(message: WorkerMessage): void {
  if (process.connected) process.send?.(message);
}

let link: EngineLink | undefined;
let server: Server | undefined;

// Ctrl-C (and a service manager's SIGTERM) reach the whole process group: the owner decides when
// workers stop (it sends 'stop'), so that it closes the port first and restarts none of them.
process.on('SIGINT', () => undefined);
process.on('SIGTERM', () => undefined);

// The owner is gone (stopped or killed): a worker never outlives it.
process.on('disconnect', () => {
  link?.fail('the engine owner is gone');
  process.exit(0);
});

process.on('message', (message: OwnerMessage, handle?: Socket) => {
  switch (message.k) {
    case 'init': {
      link = new EngineLink(send, message.faultsActive, message.routes);
      const created = createSimulatorServer(link, { ...message.options, workerId: message.workerId });
      created.setAllowedHosts(message.allowedHosts);
      server = created.server;
      send({ k: 'ready' });
      return;
    }
    case 'answers':
    case 'faults':
      link?.receive(message);
      return;
    case 'stop':
      if (server === undefined) process.exit(0);
      server.close(() => process.exit(0));
      server.closeAllConnections();
      return;
    case 'connection':
      // This server never listens itself: the owner accepts and hands each connection over.
      if (server !== undefined && handle !== undefined) server.emit('connection', handle);
      else handle?.destroy();
      return;
  }
});
