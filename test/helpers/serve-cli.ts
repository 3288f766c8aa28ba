/**
 * `keysim serve --port 0` as a child process for CLI tests that need a target outliving one run
 * (segments, shared set-ups, cleanup), and how many keys it holds (its admin snapshot).
 */
import { cleanEnv, startCli, waitUntil } from './cli.js';

export interface ServedSimulator {
  url: string;
  /** The environment to run keysim against it: KEYSIM_ROOT_KEY set. */
  env: NodeJS.ProcessEnv;
  stop: () => Promise<void>;
}

/** `keysim serve --port 0 [args]` with the root key in KEYSIM_ROOT_KEY, once it listens. */
export async function serveCli(rootKey: string, args: readonly string[] = []): Promise<ServedSimulator> {
  const env = cleanEnv({ KEYSIM_ROOT_KEY: rootKey });
  const server = startCli(['serve', '--port', '0', ...args], env);
  await waitUntil(() => /listening on (http:\/\/\S+)/.test(server.stdout()), 'the simulator to listen', server);
  const url = (/listening on (http:\/\/\S+)/.exec(server.stdout()) as RegExpExecArray)[1] as string;
  return {
    url,
    env,
    stop: async () => {
      server.child.kill('SIGTERM');
      await server.exited;
    },
  };
}

/** The keys the simulator holds now (its snapshot). */
export async function keysOn(url: string, rootKey: string): Promise<number> {
  const res = await fetch(`${url}/_sim/snapshot`, {
    method: 'POST',
    headers: { authorization: `Bearer ${rootKey}`, 'content-type': 'application/json' },
    body: '{}',
  });
  const body = (await res.json()) as { data: { keys: unknown[] } };
  return body.data.keys.length;
}
