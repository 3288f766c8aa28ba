/**
 * An answer that says the service has no such route — 405, or a 404 that is the service's
 * route-not-found error or no error envelope at all (a bare "404 page not found") — is never a
 * right answer to a request keysim sent: the request went nowhere, so it proves nothing. The load
 * counts it as a failed per-response check, whatever the scenario's own check says. A 404 in the
 * service's envelope with another code (a key not found) is an answer of the operation.
 */
import { isRecord } from '../scenario/index.js';

/** The failure message for an answer that says there is no such route; undefined for any other answer. */
export function noSuchRoute(status: number, body: unknown): string | undefined {
  if (status === 405) return 'the service answered 405 (Method Not Allowed): the request reached no operation';
  if (status !== 404) return undefined;
  const error = isRecord(body) && isRecord(body.error) ? body.error : undefined;
  const code = error === undefined ? undefined : typeof error.type === 'string' ? error.type : typeof error.code === 'string' ? error.code : undefined;
  if (code === undefined) return 'the service answered 404 without its error envelope: no such route (is the operation name right?)';
  if (/route_not_found/i.test(code)) return `the service answered 404 ${code}: no such route (is the operation name right?)`;
  return undefined;
}
