/**
 * The `--store` URL of a simulator whose state lives in Redis: `redis://HOST:PORT[/DB]`,
 * `rediss://…` (TLS), or `redis-cluster://HOST:PORT,HOST:PORT,…` (a Redis Cluster, given by any of
 * its nodes). A user name and password may come before the host (`redis://:secret@host:6379`).
 */

export type StoreUrl =
  { kind: 'redis'; url: string; shown: string } | { kind: 'cluster'; nodes: Array<{ url: string }>; shown: string; username?: string; password?: string };

export type StoreUrlResult = { ok: true; value: StoreUrl } | { ok: false; message: string };

const FORMS = 'redis://HOST:PORT[/DB], rediss://HOST:PORT[/DB] or redis-cluster://HOST:PORT,HOST:PORT,…';

/**
 * The URL with its password replaced, fit for logs and error messages. The password runs to the
 * LAST `@` (a password may hold an `@`), and the scheme is optional: a refused URL without one
 * must not show its password either.
 */
function hidePassword(text: string): string {
  return text.replace(/^((?:[a-z-]+:\/\/)?)([^:@/]*):(.*)@/i, (_all, scheme: string, user: string) => `${scheme}${user}:***@`);
}

function fail(text: string, why: string): StoreUrlResult {
  return { ok: false, message: `--store ${JSON.stringify(hidePassword(text))} ${why}; give ${FORMS}.` };
}

function checkHostPort(hostPort: string): string | undefined {
  const match = /^(\[[0-9a-f:.]+\]|[^:[\]/\s]+):(\d{1,5})$/i.exec(hostPort);
  if (match === null) return `"${hostPort}" is not HOST:PORT`;
  const port = Number(match[2]);
  if (port < 1 || port > 65535) return `port ${port} is out of range (1 to 65535)`;
  return undefined;
}

function parseSingle(text: string): StoreUrlResult {
  let parsed: URL;
  try {
    parsed = new URL(text);
  } catch {
    return fail(text, 'is not a URL');
  }
  if (parsed.hostname === '') return fail(text, 'names no host');
  if (parsed.port === '') return fail(text, 'names no port');
  const db = parsed.pathname.replace(/^\//, '');
  if (db !== '' && !/^\d{1,2}$/.test(db)) return fail(text, `has "${db}" as its database number (a number from 0)`);
  if (parsed.search !== '' || parsed.hash !== '') return fail(text, 'has a query or fragment, which keysim does not read');
  return { ok: true, value: { kind: 'redis', url: text, shown: hidePassword(text) } };
}

function parseCluster(text: string): StoreUrlResult {
  const rest = text.slice('redis-cluster://'.length);
  const at = rest.lastIndexOf('@');
  const credentials = at === -1 ? '' : rest.slice(0, at);
  const hosts = (at === -1 ? rest : rest.slice(at + 1)).replace(/\/$/, '');
  if (hosts === '') return fail(text, 'names no node');
  const nodes: Array<{ url: string }> = [];
  for (const hostPort of hosts.split(',')) {
    const problem = checkHostPort(hostPort);
    if (problem !== undefined) return fail(text, `has a node that is wrong: ${problem}`);
    nodes.push({ url: `redis://${hostPort}` });
  }
  const value: StoreUrl = { kind: 'cluster', nodes, shown: hidePassword(text) };
  if (credentials !== '') {
    const colon = credentials.indexOf(':');
    const username = decodeURIComponent(colon === -1 ? credentials : credentials.slice(0, colon));
    if (username !== '') value.username = username;
    if (colon !== -1) value.password = decodeURIComponent(credentials.slice(colon + 1));
  }
  return { ok: true, value };
}

/** Parses a `--store` URL; the message of a refusal says what was wrong and the forms accepted. */
export function parseStoreUrl(text: string): StoreUrlResult {
  const scheme = /^([a-z-]+):\/\//i.exec(text)?.[1]?.toLowerCase();
  if (scheme === 'redis' || scheme === 'rediss') return parseSingle(text);
  if (scheme === 'redis-cluster') return parseCluster(text);
  return fail(text, scheme === undefined ? 'has no scheme' : `has the scheme "${scheme}", which keysim cannot use as a store`);
}
