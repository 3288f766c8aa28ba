/**
 * The `--store` URL of a simulator whose state lives in Redis: `redis://HOST:PORT[/DB]`,
 * `rediss://…` (TLS), or `redis-cluster://HOST:PORT,HOST:PORT,…` (a Redis Cluster, given by any of
 * its nodes). A user name and password may come before the host (`redis://:secret@host:6379`).
 */

export type StoreUrl =
  { kind: 'redis'; url: string; shown: string } | { kind: 'cluster'; nodes: Array<{ url: string }>; shown: string; username?: string; password?: string };

export type StoreUrlResult = { ok: true; value: StoreUrl } | { ok: false; message: string };

const FORMS = 'redis://HOST:PORT[/DB], rediss://HOST:PORT[/DB] or redis-cluster://HOST:PORT,HOST:PORT,…';

/** A URL's scheme and "://", as RFC 3986 spells a scheme (letters, digits, + . -). */
const SCHEME = /^([a-z][a-z0-9+.-]*):\/\//i;

/**
 * The URL with its password replaced, fit for logs and error messages. The credentials run to the
 * LAST "@" (a password may hold "@", "/", "#" … unescaped, and a refused URL may have no scheme or
 * one keysim does not know): at worst more than the password is hidden, never less.
 */
function hidePassword(text: string): string {
  const at = text.lastIndexOf('@');
  if (at === -1) return text;
  const colon = text.indexOf(':', SCHEME.exec(text)?.[0].length ?? 0);
  if (colon === -1 || colon > at) return text;
  return `${text.slice(0, colon)}:***${text.slice(at)}`;
}

/** Whether a user name or password decodes (a lone "%" does not: node-redis would throw at connect). */
function decodable(text: string): boolean {
  try {
    decodeURIComponent(text);
    return true;
  } catch {
    return false;
  }
}

const BROKEN_ESCAPE = 'has a user name or password with a broken %-escape (write a "%" in it as %25)';

/** The port a single-node URL names in digits (after its credentials, before its path), if any. */
function portOf(text: string): number | undefined {
  const rest = text.slice(text.lastIndexOf('@') + 1).replace(SCHEME, '');
  const match = /^(?:\[[^\]]*\]|[^:/?#]*):(\d+)(?:[/?#]|$)/.exec(rest);
  return match === null ? undefined : Number(match[1]);
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
  // Checked before the URL parser, which refuses such a port as "not a URL" and takes 0.
  const port = portOf(text);
  if (port !== undefined && (port < 1 || port > 65535)) return fail(text, `has a port that is wrong: port ${port} is out of range (1 to 65535)`);
  let parsed: URL;
  try {
    parsed = new URL(text);
  } catch {
    return fail(text, 'is not a URL');
  }
  if (parsed.hostname === '') return fail(text, 'names no host');
  if (parsed.port === '') return fail(text, 'names no port');
  if (!decodable(parsed.username) || !decodable(parsed.password)) return fail(text, BROKEN_ESCAPE);
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
    const [username, password] = colon === -1 ? [credentials, undefined] : [credentials.slice(0, colon), credentials.slice(colon + 1)];
    if (!decodable(username) || (password !== undefined && !decodable(password))) return fail(text, BROKEN_ESCAPE);
    if (username !== '') value.username = decodeURIComponent(username);
    if (password !== undefined) value.password = decodeURIComponent(password);
  }
  return { ok: true, value };
}

/** Parses a `--store` URL; the message of a refusal says what was wrong and the forms accepted. */
export function parseStoreUrl(text: string): StoreUrlResult {
  const scheme = SCHEME.exec(text)?.[1]?.toLowerCase();
  if (scheme === 'redis' || scheme === 'rediss') return parseSingle(text);
  if (scheme === 'redis-cluster') return parseCluster(text);
  return fail(text, scheme === undefined ? 'has no scheme' : `has the scheme "${scheme}", which keysim cannot use as a store`);
}
