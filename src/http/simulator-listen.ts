/**
 * Where a simulator (simulator.ts) listens: this process's own node:http server, or `--workers N`
 * HTTP worker processes on one port with this process as the engine owner (cluster.ts).
 */
import type { AddressInfo } from 'node:net';
import type { ServerOptions } from './server-options.js';
import type { ObservedFaultInjector } from './observed-faults.js';
import type { RouteContext } from './route.js';
import type { EngineBackend } from './engine-backend.js';
import { createSimulatorServer } from './server.js';
import { startCluster } from './cluster.js';

/** A listening simulator: its address and how to stop listening. */
export interface Listening {
  address: AddressInfo;
  close: () => Promise<void>;
}

/** Computes the `Host` headers to accept once the address is known (null: every one). */
type HostsFor = (address: AddressInfo) => string[] | null;

export async function listenInProcess(
  ctx: RouteContext | EngineBackend,
  serverOptions: ServerOptions,
  host: string,
  port: number,
  hostsFor: HostsFor,
): Promise<Listening> {
  const { server, setAllowedHosts } = createSimulatorServer(ctx, serverOptions);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  setAllowedHosts(hostsFor(address));
  const close = () =>
    new Promise<void>((resolve, reject) => {
      server.close((error) => (error === undefined ? resolve() : reject(error)));
      server.closeAllConnections();
    });
  return { address, close };
}

export interface WorkersListen {
  /** The simulator's options: the workers are given the server's among them. */
  options: ServerOptions;
  version: string;
  sha256: (text: string) => string;
  workers: number;
  host: string;
  port: number;
  hostsFor: HostsFor;
}

export async function listenWithWorkers(ctx: RouteContext & { faults: ObservedFaultInjector }, listen: WorkersListen): Promise<Listening> {
  const { options } = listen;
  // The server options a worker is sent at its start (cluster-protocol.ts): only those given, no functions.
  const cluster = await startCluster({
    ctx,
    sha256: listen.sha256,
    workers: listen.workers,
    host: listen.host,
    port: listen.port,
    serverOptions: {
      ...(options.maxBodyBytes === undefined ? {} : { maxBodyBytes: options.maxBodyBytes }),
      ...(options.errorsUrl === undefined ? {} : { errorsUrl: options.errorsUrl }),
      ...(options.validateResponses === undefined ? {} : { validateResponses: options.validateResponses }),
      ...(options.coalesceWrites === undefined ? {} : { coalesceWrites: options.coalesceWrites }),
      ...(options.keepAliveTimeoutMs === undefined ? {} : { keepAliveTimeoutMs: options.keepAliveTimeoutMs }),
      version: listen.version,
    },
    allowedHosts: listen.hostsFor,
    log: options.log ?? ((line) => process.stderr.write(`${line}\n`)),
  });
  return { address: cluster.address, close: cluster.close };
}
