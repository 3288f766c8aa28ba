/**
 * nginx configurations in front of keysim's simulator, one per way a real reverse proxy gets in
 * the way of a load run. Each public port has its own upstream; a port hides the simulator's admin
 * surface (`/_sim/*` answers 404), so that keysim takes the target for a live deployment, unless
 * told to forward it (refill-midnight's port: the simulator's clock is read there). The simulator's
 * `Date` header is passed on (nginx would write its own). Shedding faults strike only the load's
 * verifications (`keys.verifyKey`, `ratelimit.limit`), as a proxy that sheds load would; set-up and
 * cleanup calls get through, except in the modes that change every answer (gzip, TLS, idle
 * timeouts, one request per connection, a dead upstream). The drop and timeout modes strike the
 * scenarios' own calls outside set-up too: their reads of keys (`keys.getKey`: end-of-run balances,
 * fixtures read back) and `ratelimit.multiLimit` (ratelimit-rules' walk), besides the bursts' and
 * probes' verifications and rate-limit checks.
 */
import type { FaultsConfig } from '../../src/http/faults.js';
import { type ServerBlocks, accessLogOf } from './nginx.js';

export interface ProxyMode {
  name: string;
  /** What the mode does, for the test names. */
  does: string;
  /** Blocks once per configuration (split_clients, an inner server), given the upstream URL. */
  shared?: () => string;
  /** The public server of one port (`admin`: forward `/_sim/*` instead of hiding it). */
  server: (upstream: string, port: number, dir: string, admin: boolean) => string;
  /** Faults the simulator behind it is started with (e.g. answer latency, for nginx's 504). */
  simulatorFaults?: FaultsConfig;
  tls?: boolean;
  /** The upstream is never reached: the run cannot do anything but stop (exit 3 or 96). */
  unreachable?: boolean;
}

/** A public port's upstream, and whether its admin surface is forwarded. */
export interface PortTarget {
  upstream: string;
  admin: boolean;
}

/** The whole configuration of a mode: its shared blocks, then the public server of each port. */
export const modeBlocks =
  (mode: ProxyMode, targets: readonly PortTarget[]): ServerBlocks =>
  (ports, dir) =>
    (mode.shared?.() ?? '') + ports.map((port, i) => mode.server(targets[i]?.upstream ?? '', port, dir, targets[i]?.admin ?? false)).join('');

/** The load's verification routes, where the shedding faults strike. */
const VERIFICATIONS = '~ ^/v2/(keys\\.verifyKey|ratelimit\\.limit)$';
/** The verifications and the scenarios' own reads and multi-limit checks, where the drop and timeout faults strike. */
const OWN_CALLS = '~ ^/v2/(keys\\.verifyKey|ratelimit\\.limit|ratelimit\\.multiLimit|keys\\.getKey)$';
/** The operations of OWN_CALLS. */
export const OWN_CALL_OPERATIONS = ['keys.verifyKey', 'ratelimit.limit', 'ratelimit.multiLimit', 'keys.getKey'] as const;

/** `/_sim/*` as a live deployment answers it: a JSON 404 (not forwarded). */
const hideAdmin = (admin: boolean): string => (admin ? '' : HIDE_ADMIN);
const HIDE_ADMIN = `
    location /_sim/ {
      default_type application/json;
      return 404 '{"meta":{"requestId":"req_nginx"},"error":{"title":"Not Found","detail":"no such route","status":404,"type":"https://example.invalid/not_found"}}';
    }`;

/** Forwarding to the simulator, over kept-alive upstream connections, its Date header kept. */
const forward = (upstream: string, extra = ''): string => `
      proxy_pass ${upstream};
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_pass_header Date;
      proxy_pass_header Server;${extra}`;

function listen(port: number, dir: string, tls = false): string {
  const ssl = tls ? ` ssl;\n    ssl_certificate ${dir}/server.crt;\n    ssl_certificate_key ${dir}/server.key` : '';
  return `listen 127.0.0.1:${port}${ssl};\n    ${accessLogOf(dir, port)}`;
}

/** One public server: admin hidden, the verifications' location, everything else forwarded. */
function server(
  port: number,
  dir: string,
  upstream: string,
  admin: boolean,
  options: { verifications?: string; routes?: string; server?: string; tls?: boolean } = {},
): string {
  return `
  server {
    ${listen(port, dir, options.tls)}
    ${options.server ?? ''}
    ${hideAdmin(admin)}
    location ${options.routes ?? VERIFICATIONS} {${options.verifications ?? ''}${forward(upstream)}
    }
    location / {${forward(upstream)}
    }
  }`;
}

/** A share of requests, drawn per request id (nginx's own random, so about the share). */
const share = (variable: string, percent: number): string => `
  split_clients "$request_id" ${variable} { ${percent}% 1; * 0; }`;

export const MODES: readonly ProxyMode[] = [
  {
    name: 'plain',
    does: 'forwards everything (the control)',
    server: (upstream, port, dir, admin) => server(port, dir, upstream, admin),
  },
  {
    name: 'drop-before',
    does: "closes the connection without an answer (444) for ~10 % of verifications and of the scenarios' own reads, before forwarding them (not executed)",
    shared: () => share('$keysim_drop', 10),
    server: (upstream, port, dir, admin) =>
      server(port, dir, upstream, admin, { routes: OWN_CALLS, verifications: '\n      if ($keysim_drop) { return 444; }' }),
  },
  {
    name: 'timeout-after',
    does: 'answers 504 after a short proxy_read_timeout for the slow verifications and own reads of the scenarios, which the service executes anyway',
    // Normal latency, mean 100 ms, sd 320 ms: about 10 % take over 500 ms (z = 1.25).
    simulatorFaults: { latencyMs: { mean: 100, stddev: 320 }, operations: [...OWN_CALL_OPERATIONS] },
    server: (upstream, port, dir, admin) => server(port, dir, upstream, admin, { routes: OWN_CALLS, verifications: '\n      proxy_read_timeout 500ms;' }),
  },
  {
    name: 'shed',
    does: 'answers 503 (~6 %) and 429 (~6 %) to verifications with its own HTML pages, before forwarding them',
    shared: () => '\n  split_clients "$request_id" $keysim_shed { 6% 503; 6% 429; * 0; }',
    server: (upstream, port, dir, admin) =>
      server(port, dir, upstream, admin, { verifications: '\n      if ($keysim_shed = 503) { return 503; }\n      if ($keysim_shed = 429) { return 429; }' }),
  },
  {
    name: 'gzip',
    does: 'gzips every JSON answer although keysim never asked for it (an inner server compresses, the outer passes it through)',
    server: (upstream, port, dir, admin) => `
  server {
    listen unix:${dir}/inner-${port}.sock;
    access_log off;
    gzip on;
    gzip_types application/json;
    gzip_min_length 0;
    gzip_proxied any;
    location / {${forward(upstream)}
    }
  }
  server {
    ${listen(port, dir)}
    ${hideAdmin(admin)}
    location / {${forward(`http://unix:${dir}/inner-${port}.sock:`, '\n      proxy_set_header Accept-Encoding gzip;')}
    }
  }`,
  },
  {
    name: 'html',
    does: 'answers ~10 % of verifications 200 with an HTML page, before forwarding them',
    shared: () => share('$keysim_html', 10),
    server: (upstream, port, dir, admin) =>
      server(port, dir, upstream, admin, {
        verifications:
          "\n      default_type text/html;\n      if ($keysim_html) { return 200 '<!doctype html><html><body><h1>Please wait</h1></body></html>'; }",
      }),
  },
  {
    name: 'idle-timeout',
    does: 'closes idle client connections after 1 s, without a Keep-Alive hint',
    server: (upstream, port, dir, admin) => server(port, dir, upstream, admin, { server: 'keepalive_timeout 1s;' }),
  },
  {
    name: 'one-request',
    does: 'closes every client connection after one request (keepalive_requests 1)',
    server: (upstream, port, dir, admin) => server(port, dir, upstream, admin, { server: 'keepalive_requests 1;' }),
  },
  {
    name: 'tls',
    does: 'serves HTTPS with a certificate of a private CA (keysim is given it with --ca)',
    tls: true,
    server: (upstream, port, dir, admin) => server(port, dir, upstream, admin, { tls: true }),
  },
  {
    name: 'dead-upstream',
    does: 'forwards to a closed port: every request but /_sim/* is a 502',
    unreachable: true,
    // The test passes a port nothing listens on as the upstream.
    server: (upstream, port, dir, admin) => server(port, dir, upstream, admin),
  },
];
