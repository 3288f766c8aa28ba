/**
 * The check before a run creates anything: the target answers, answers like the service (its JSON
 * envelope, not a proxy's page), and accepts the root key. A run that fails here writes no report,
 * and its error says which to fix.
 */
import { NotServiceAnswerError, firstBytes } from '../http1/index.js';
import { readServiceAnswer } from '../answers/index.js';
import { httpJsonClient } from './service-api.js';
import type { Target } from './target.js';
import { classifyTransportError } from '../answers/index.js';

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

/**
 * The target answered, but not like the service (service-answer.ts): a proxy's 404 page for a URL
 * without its base path, a 421 from a gateway that does not route this host, a firewall's page, a
 * gateway's 502/503/504 page when the service behind it is down.
 */
export class NotTheServiceError extends TargetUnreachableError {
  constructor(url: string, status: number, contentType: string | undefined, body: Buffer, gateway = false) {
    const down = gateway ? `; a gateway's ${status}: is the service behind the proxy up? If it is,` : ':';
    super(
      url,
      `it does not answer like the service (${status})`,
      `The target at ${url} does not answer like the service (${status} ${contentType ?? 'without a content type'}, ${firstBytes(body, 60)})${down} check the URL and its base path (the service's API is under URL/v2/…).`,
    );
    this.name = 'NotTheServiceError';
  }
}

/** TLS verification failures: the certificate is not trusted by this machine. */
const UNTRUSTED_CERT = new Set([
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_UNTRUSTED',
]);

/** The message for a certificate this machine does not trust, or undefined for any other error. */
export function untrustedCertificateMessage(url: string, error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string' || !UNTRUSTED_CERT.has(code)) return undefined;
  const what = error instanceof Error ? error.message : code;
  return `The certificate of ${url} is not trusted (${what}): pass --ca ca.pem with the CA that signed it (PEM; several certificates may go in one file).`;
}

/** Checks that the target answers like the service and that the root key is accepted, before anything is created. */
export async function checkReachable(target: Target, timeoutMs: number): Promise<void> {
  const client = httpJsonClient(target, Math.min(timeoutMs, 10_000));
  try {
    const answer = await client.exchange('/v2/identities.listIdentities', { limit: 1 }, 'root');
    // Whatever its status, the answer must be the service's (its JSON envelope): a gateway's page is not.
    const read = readServiceAnswer(answer.status, answer.body);
    if (!read.service) throw new NotTheServiceError(target.url, answer.status, answer.contentType, answer.body, read.gateway);
    if (answer.status === 421) throw new NotTheServiceError(target.url, answer.status, answer.contentType, answer.body);
    const res = { status: answer.status, body: read.body };
    if (res.status === 401 || res.status === 403 || (res.status === 400 && JSON.stringify(res.body).includes('authentication'))) {
      throw new RootKeyRefusedError(target.url, res.status === 400 ? 401 : res.status);
    }
    if (res.status >= 500) throw new TargetUnreachableError(target.url, `it answered ${res.status}`);
  } catch (error) {
    if (error instanceof TargetUnreachableError) throw error;
    const untrusted = untrustedCertificateMessage(target.url, error);
    if (untrusted !== undefined) throw new TargetUnreachableError(target.url, 'its certificate is not trusted', untrusted);
    if (error instanceof NotServiceAnswerError)
      throw new TargetUnreachableError(
        target.url,
        'its answer could not be read',
        `The target at ${target.url} does not answer like the service: ${error.message}`,
      );
    throw new TargetUnreachableError(target.url, `${classifyTransportError(error)} (${error instanceof Error ? error.message : String(error)})`);
  } finally {
    await client.close();
  }
}
