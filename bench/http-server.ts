/**
 * The benchmark's HTTP servers as child processes (the parent side of http-server-child.ts):
 * each server runs alone in its process, and none outlives the benchmark that started it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/**
 * `bare-coalesced`: the bare server with the simulator's write coalescing, so that a reader can
 * tell how much of the simulator's figure at pipelining 10 is that one step (not a target).
 */
export type ServerKind = 'sim' | 'bare' | 'bare-coalesced';

/** What the server child prints when it is ready. */
export interface ServerReady {
  kind: ServerKind;
  url: string;
  pid: number;
  /** Simulator only: the fixture created through its HTTP API. */
  rootKey?: string;
  apiId?: string;
  /** Plaintext of a key with 10^12 credits. */
  key?: string;
  namespace?: string;
}

export interface ServerCpu {
  userUs: number;
  systemUs: number;
}

export const READY_PREFIX = 'READY ';
export const CPU_PREFIX = 'CPU ';

// Run through tsx like the other benchmarks; compiled to JavaScript (for profiling without tsx's
// transform), this file starts the compiled child with plain node.
const COMPILED = import.meta.url.endsWith('.js');
const SERVER_CHILD = fileURLToPath(new URL(COMPILED ? './http-server-child.js' : './http-server-child.ts', import.meta.url));
const LOADER: readonly string[] = COMPILED ? [] : ['--import', import.meta.resolve('tsx')];

export interface ServerProcess {
  ready: ServerReady;
  /** The server process's CPU time so far. */
  cpu(): Promise<ServerCpu>;
  /** Asks it to exit (so a --cpu-prof profile is written); SIGKILL if it has not within 5 s. */
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();
// Whatever ends this process (an exception included), no server child outlives it.
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/**
 * `args`: after the kind, e.g. `['--workers', '2']` for the simulator. `child`: another checkout's
 * http-server-child.ts (its simulator then runs from that checkout's dist/; http-ab.ts).
 */
export function startServer(
  kind: ServerKind,
  nodeArgs: readonly string[] = [],
  args: readonly string[] = [],
  childPath: string = SERVER_CHILD,
): Promise<ServerProcess> {
  const loader = childPath.endsWith('.ts') ? ['--import', import.meta.resolve('tsx')] : LOADER;
  const child = spawn(process.execPath, [...nodeArgs, ...loader, childPath, kind, ...args], { stdio: ['pipe', 'pipe', 'inherit'] });
  running.add(child);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  void exited.then(() => running.delete(child));
  const cpuWaiters: Array<{ resolve: (cpu: ServerCpu) => void; reject: (error: Error) => void }> = [];
  child.once('exit', (code, signal) => {
    for (const waiter of cpuWaiters.splice(0)) waiter.reject(new Error(`${kind} server exited with ${code ?? signal ?? 'unknown'}`));
  });
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.stdin.end();
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  };
  return new Promise<ServerProcess>((resolve, reject) => {
    const fail = (message: string) => {
      child.kill('SIGKILL');
      reject(new Error(`${kind} server: ${message}`));
    };
    const timer = setTimeout(() => fail('not ready after 30 s'), 30_000);
    child.once('error', (error) => {
      clearTimeout(timer);
      fail(error.message);
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${kind} server exited with ${code ?? signal ?? 'unknown'}`));
    });
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (line.startsWith(READY_PREFIX)) {
        clearTimeout(timer);
        const ready = JSON.parse(line.slice(READY_PREFIX.length)) as ServerReady;
        resolve({
          ready,
          cpu: () =>
            new Promise<ServerCpu>((resolveCpu, rejectCpu) => {
              if (child.exitCode !== null || child.signalCode !== null) {
                rejectCpu(new Error(`${kind} server has exited`));
                return;
              }
              cpuWaiters.push({ resolve: resolveCpu, reject: rejectCpu });
              child.stdin.write('cpu\n');
            }),
          stop,
        });
      } else if (line.startsWith(CPU_PREFIX)) {
        cpuWaiters.shift()?.resolve(JSON.parse(line.slice(CPU_PREFIX.length)) as ServerCpu);
      }
    });
  });
}
