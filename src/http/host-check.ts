/**
 * The `Host` headers a loopback-bound simulator answers. A browser page on another origin can
 * reach a loopback server by a name that resolves to 127.0.0.1 (DNS rebinding); its requests then
 * carry that name as `Host`. Accepting only the loopback names with the served port closes that
 * door; a server bound to another address is reachable by design and checks nothing.
 *
 * A reverse proxy in front of a loopback simulator that passes the client's `Host` on (nginx
 * `proxy_set_header Host $host`) sends names of its own: those are allowed by name
 * (`--allow-host NAME`, `KEYSIM_ALLOWED_HOSTS`, `createSimulator({ allowedHosts })`). A listed name
 * is one the operator vouches for — a rebinding page cannot send it unless it controls that name
 * — so it is answered on any port; `NAME:PORT` limits it to one.
 */
import type { Problem } from './envelope.js';

/** True for 127.0.0.0/8, ::1, localhost and the unspecified-address forms that never apply here. */
export function isLoopbackAddress(address: string): boolean {
  const host = address.replace(/^\[|\]$/g, '').toLowerCase();
  return host === 'localhost' || host === '::1' || host === '::ffff:127.0.0.1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** `127.0.0.1:PORT`, `localhost:PORT`, `[::1]:PORT` and the bound address itself (without the port on 80). */
export function loopbackHosts(boundAddress: string, port: number): string[] {
  const bound = boundAddress.includes(':') && !boundAddress.startsWith('[') ? `[${boundAddress}]` : boundAddress;
  const names = [...new Set(['127.0.0.1', 'localhost', '[::1]', bound.toLowerCase()])];
  const hosts = names.map((name) => `${name}:${port}`);
  // A client omits the default port from Host.
  if (port === 80) hosts.push(...names);
  return hosts;
}

/** How an allowed name without a port is kept among the allowed hosts: `NAME:*`, any port or none. */
const ANY_PORT = ':*';

/** The name of a Host header without its port: `[::1]:8787` → `[::1]`, `sim.internal:80` → `sim.internal`. */
function nameOf(host: string): string {
  const colon = host.lastIndexOf(':');
  return colon > host.lastIndexOf(']') ? host.slice(0, colon) : host;
}

const NAME = /^(\[[0-9a-f:.]+\]|[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*)$/;

/**
 * An allowed host as the user writes it (`sim.internal`, `sim.internal:8080`, `10.0.0.5`,
 * `[fd00::1]`), as kept in the allowed list (`sim.internal:*` for any port); or a message saying
 * what is wrong with it.
 */
export function allowedHostEntry(text: string): { ok: true; entry: string } | { ok: false; message: string } {
  const given = text.trim().toLowerCase().replace(/\.$/, '');
  const name = nameOf(given);
  const port = name === given ? undefined : given.slice(name.length + 1);
  const portOk = port === undefined || (/^\d{1,5}$/.test(port) && Number(port) >= 1 && Number(port) <= 65_535);
  if (!NAME.test(name) || !portOk) {
    return {
      ok: false,
      message: `"${text}" is not a host as a proxy sends it in the Host header: give a name or an address, optionally with a port (e.g. sim.internal, sim.internal:8080, 10.0.0.5, [fd00::1]), without a scheme or a path.`,
    };
  }
  return { ok: true, entry: port === undefined ? `${name}${ANY_PORT}` : `${name}:${port}` };
}

/** The allowed hosts in KEYSIM_ALLOWED_HOSTS (comma- or space-separated), as given; empty when unset. */
export function allowedHostsFromEnv(value: string | undefined): string[] {
  return (value ?? '').split(/[\s,]+/).filter((h) => h !== '');
}

/** Whether a request's Host header is one of `allowed` (case-insensitive); a missing Host is not. */
export function hostAllowed(allowed: ReadonlySet<string>, host: string | undefined): boolean {
  if (host === undefined) return false;
  // Clients send the lower-case name the server printed: look it up as sent before lower-casing.
  if (allowed.has(host)) return true;
  const lower = host.toLowerCase();
  return allowed.has(lower) || allowed.has(`${nameOf(lower).replace(/\.$/, '')}${ANY_PORT}`);
}

/** The allowed hosts as a 421's detail lists them: `sim.internal:*` shown as `sim.internal (any port)`. */
export function shownAllowedHosts(allowed: Iterable<string>): string {
  return [...allowed].map((h) => (h.endsWith(ANY_PORT) ? `${h.slice(0, -ANY_PORT.length)} (any port)` : h)).join(', ');
}

/** The 421 answered to a Host not among `allowed`: which ones are, and how to allow a proxy's. */
export function hostNotAllowed(allowed: Iterable<string>): Problem {
  return {
    status: 421,
    title: 'Misdirected Request',
    identifier: 'err:service:bad_request:host_not_allowed',
    detail:
      `This simulator listens on loopback and answers only the Host headers ${shownAllowedHosts(allowed)}; send one of them (a request naming another host is refused, as a DNS-rebinding page would send). ` +
      "Behind a reverse proxy that passes the client's Host on, allow that name: keysim serve --allow-host NAME, KEYSIM_ALLOWED_HOSTS, or createSimulator({ allowedHosts }).",
  };
}

/** The warning `keysim serve` prints when bound beyond loopback; null on loopback. */
export function exposureWarning(boundAddress: string): string | null {
  if (isLoopbackAddress(boundAddress)) return null;
  return `warning: listening on ${boundAddress}, beyond this machine: anyone who can reach it can call the service with a root key they hold, and the operator's root key runs the whole simulator (/_sim/*). Use it only on a network you trust; the Host check against DNS rebinding applies on loopback only.`;
}
