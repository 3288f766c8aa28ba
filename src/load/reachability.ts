/**
 * The check before a run creates anything: the target answers, and it accepts the root key. A run
 * that fails here writes no report, and its error says which of the two to fix.
 */
import { httpJsonClient } from './service-api.js';
import type { Target } from './target.js';
import { classifyTransportError } from './transport-error.js';

/** The target did not answer before the run: no report is written. */
export class TargetUnreachableError extends Error {
  constructor(url: string, reason: string, message?: string) {
    super(message ?? `The target ${url} is not reachable: ${reason}. Check the URL (and that the service runs), then try again.`);
    this.name = 'TargetUnreachableError';
  }
}

/** The target answered, but refused the root key (401/403): reachable, and the key is what to fix. */
export class RootKeyRefusedError extends TargetUnreachableError {
  constructor(url: string, status: number) {
    super(
      url,
      `it refused the root key (HTTP ${status})`,
      `The target ${url} answered, but refused the root key (HTTP ${status}${status === 403 ? ': the key lacks a permission' : ''}). Set KEYSIM_ROOT_KEY (or --root-key) to a root key of that deployment with the permissions the scenarios need.`,
    );
    this.name = 'RootKeyRefusedError';
  }
}

/** Checks that the target answers and that the root key is accepted, before anything is created. */
export async function checkReachable(target: Target, timeoutMs: number): Promise<void> {
  const client = httpJsonClient(target, Math.min(timeoutMs, 10_000));
  try {
    const res = await client.post('/v2/identities.listIdentities', { limit: 1 }, 'root');
    if (res.status === 401 || res.status === 403 || (res.status === 400 && JSON.stringify(res.body).includes('authentication'))) {
      throw new RootKeyRefusedError(target.url, res.status === 400 ? 401 : res.status);
    }
    if (res.status >= 500) throw new TargetUnreachableError(target.url, `it answered ${res.status}`);
  } catch (error) {
    if (error instanceof TargetUnreachableError) throw error;
    throw new TargetUnreachableError(target.url, `${classifyTransportError(error)} (${error instanceof Error ? error.message : String(error)})`);
  } finally {
    await client.close();
  }
}
