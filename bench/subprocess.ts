/**
 * Each measurement runs in a fresh Node process (bench/child.ts, loaded through tsx), so that
 * one benchmark's heap and JIT state (e.g. a call site that has seen both SHA-256 functions)
 * do not colour the next. The child prints one `RESULT <json>` line on stdout; progress goes to
 * stderr, which is passed through.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const RESULT_PREFIX = 'RESULT ';

const CHILD = fileURLToPath(new URL('./child.ts', import.meta.url));
const TSX = import.meta.resolve('tsx');

export interface ChildOptions {
  /** Start the child with --expose-gc. */
  exposeGc?: boolean;
  /** Kill the child after this long; default 150 s. */
  timeoutMs?: number;
  /** The child's entry file (default bench/child.ts). */
  entry?: string;
  /** Run the entry on plain node, without the TypeScript loader (a JavaScript entry). */
  plainNode?: boolean;
  /** Further node options (e.g. --max-old-space-size=…). */
  nodeArgs?: readonly string[];
}

export function runChild<T>(task: string, args: readonly string[], options: ChildOptions = {}): Promise<T> {
  const entry = options.entry ?? CHILD;
  const nodeArgs = [
    ...(options.exposeGc === true ? ['--expose-gc'] : []),
    ...(options.nodeArgs ?? []),
    ...(options.plainNode === true ? [] : ['--import', TSX]),
    entry,
    ...(task === '' ? [] : [task]),
    ...args,
  ];
  const what = `bench child "${[task, ...args].join(' ')}"`;
  return new Promise<T>((resolve, reject) => {
    const child = spawn(process.execPath, nodeArgs, { stdio: ['ignore', 'pipe', 'inherit'] });
    // A child must not outlive the benchmark (e.g. when the parent is stopped).
    const killOnExit = () => child.kill('SIGKILL');
    process.once('exit', killOnExit);
    let stdout = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      stdout += chunk;
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${what} took longer than ${(options.timeoutMs ?? 150_000) / 1000} s and was stopped`));
    }, options.timeoutMs ?? 150_000);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`${what} failed: ${error.message}`));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      process.off('exit', killOnExit);
      if (code !== 0) {
        reject(new Error(`${what} exited with ${code ?? signal ?? 'unknown'}`));
        return;
      }
      const line = stdout.split('\n').find((l) => l.startsWith(RESULT_PREFIX));
      if (line === undefined) reject(new Error(`${what} printed no result:\n${stdout}`));
      else resolve(JSON.parse(line.slice(RESULT_PREFIX.length)) as T);
    });
  });
}

/**
 * Runs `jobs` with at most `parallel` children at a time; results in the order of `jobs`. After a
 * failure no new job starts, and the error is raised only once the running ones have finished, so
 * no child outlives the benchmark that started it.
 */
export async function runPool<T>(jobs: ReadonlyArray<() => Promise<T>>, parallel: number): Promise<T[]> {
  const results: T[] = [];
  let next = 0;
  let failure: { error: unknown } | undefined;
  const worker = async (): Promise<void> => {
    while (failure === undefined && next < jobs.length) {
      const i = next++;
      const job = jobs[i];
      if (job === undefined) continue;
      try {
        results[i] = await job();
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, jobs.length) }, worker));
  if (failure !== undefined) throw failure.error;
  return results;
}

/** Called by a child: hands its result to the parent. */
export function sendResult(result: unknown): void {
  process.stdout.write(`${RESULT_PREFIX}${JSON.stringify(result)}\n`);
}

/** Progress for the reader, on stderr (the parent passes it through). */
export function progress(message: string): void {
  process.stderr.write(`  … ${message}\n`);
}
