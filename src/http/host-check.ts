/**
 * The `Host` headers a loopback-bound simulator answers. A browser page on another origin can
 * reach a loopback server by a name that resolves to 127.0.0.1 (DNS rebinding); its requests then
 * carry that name as `Host`. Accepting only the loopback names with the served port closes that
 * door; a server bound to another address is reachable by design and checks nothing.
 */

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

/** Whether a request's Host header is one of `allowed` (case-insensitive); a missing Host is not. */
export function hostAllowed(allowed: ReadonlySet<string>, host: string | undefined): boolean {
  // Clients send the lower-case name the server printed: look it up as sent before lower-casing.
  return host !== undefined && (allowed.has(host) || allowed.has(host.toLowerCase()));
}

/** The warning `keysim serve` prints when bound beyond loopback; null on loopback. */
export function exposureWarning(boundAddress: string): string | null {
  if (isLoopbackAddress(boundAddress)) return null;
  return `warning: listening on ${boundAddress}, beyond this machine: anyone who can reach it can call the service with a root key they hold, and the operator's root key runs the whole simulator (/_sim/*). Use it only on a network you trust; the Host check against DNS rebinding applies on loopback only.`;
}
