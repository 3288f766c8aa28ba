/**
 * A real nginx (Debian's /usr/sbin/nginx) as the test's reverse proxy: a master process run as the
 * current user, in the foreground (`daemon off`), with everything it writes — pid, error log,
 * access log, temp folders — in a fresh temporary folder, listening on 127.0.0.1 only. The
 * caller gives the `http { … }` body's server blocks (see nginx-modes.ts); this file adds what
 * every configuration needs and a parseable access log, then starts, waits and stops.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Socket, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** Where Debian installs it; PATH is searched too. */
export function nginxBinary(): string | undefined {
  if (existsSync('/usr/sbin/nginx')) return '/usr/sbin/nginx';
  try {
    const found = execFileSync('sh', ['-c', 'command -v nginx'], { encoding: 'utf8' }).trim();
    return found === '' ? undefined : found;
  } catch {
    return undefined;
  }
}

/** One line of the access log: what the client asked, what it got, what the upstream said. */
export interface AccessLine {
  method: string;
  uri: string;
  /** What nginx answered: 444 = closed without an answer, 499 = the client went away first. */
  status: number;
  /** The upstream's status(es) as nginx logs them: "-" when nothing was proxied, "504", "200"… */
  upstreamStatus: string;
  requestTimeS: number;
}

export interface Nginx {
  /** `http://127.0.0.1:PORT` (or https:// with TLS), one per public port. */
  urls: string[];
  ports: number[];
  dir: string;
  /** A public port's access log so far (nginx writes each line when its request ends). */
  accessLog(port: number): AccessLine[];
  /** Asks the master to stop gracefully, then kills it, and removes the folder. */
  stop(): Promise<void>;
}

/** The variables of a log line, tab-separated; the request line is split by nginx itself. */
const LOG_FORMAT = "'$request_method\\t$request_uri\\t$status\\t$upstream_status\\t$request_time'";

/**
 * Builds the `http { … }` body's blocks for the public ports (and the folder, for files such as
 * certificates). Each public server logs to `accessLogOf(dir, port)` in the `keysim` format.
 */
export type ServerBlocks = (ports: readonly number[], dir: string) => string;

/** The access log directive of a public port's server. */
export const accessLogOf = (dir: string, port: number): string => `access_log ${dir}/access-${port}.log keysim;`;

export interface NginxOptions {
  /** How many public ports (e.g. one per scenario, for separate access logs); default 1. */
  ports?: number;
  /** The URLs are https:// (the blocks listen with ssl). */
  tls?: boolean;
  /** Writes files the configuration needs into the folder before nginx starts (certificates). */
  prepare?: (dir: string) => void;
}

/** A port that was free a moment ago (bound to 0 by node, then released). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port from the loopback listener');
  return address.port;
}

function configFile(dir: string, blocks: string): string {
  // As root (CI), the workers would run as nobody, who cannot enter the 0700 folder (the gzip
  // mode's inner socket); as another user the directive is not allowed, and not needed.
  const user = process.getuid?.() === 0 ? 'user root;' : '';
  return `
${user}
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
worker_processes 1;
events { worker_connections 256; }
http {
  client_body_temp_path ${dir}/tmp/body;
  proxy_temp_path ${dir}/tmp/proxy;
  fastcgi_temp_path ${dir}/tmp/fastcgi;
  uwsgi_temp_path ${dir}/tmp/uwsgi;
  scgi_temp_path ${dir}/tmp/scgi;
  log_format keysim ${LOG_FORMAT};
  access_log off;
  default_type application/octet-stream;
${blocks}
}
`;
}

/** Asks until something answers on the port (any status): the master and its worker are up. */
async function waitUntilAnswering(port: number, child: ChildProcess, dir: string, errors: () => string): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`nginx exited (${child.exitCode}) on start: ${errors()}\n${readIf(join(dir, 'error.log'))}`);
    const answered = await new Promise<boolean>((resolve) => {
      const socket = new Socket();
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
      socket.connect(port, '127.0.0.1');
    });
    if (answered) return;
    if (Date.now() > deadline) throw new Error(`nginx did not listen on 127.0.0.1:${port} within 20 s: ${errors()}`);
    await sleep(50);
  }
}

function readIf(file: string): string {
  return existsSync(file) ? readFileSync(file, 'utf8') : '';
}

export function parseAccessLog(text: string): AccessLine[] {
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      const [method = '', uri = '', status = '', upstreamStatus = '', time = ''] = line.split('\t');
      return { method, uri, status: Number(status), upstreamStatus, requestTimeS: Number(time) };
    });
}

/**
 * Starts nginx with `blocks` on `options.ports` free loopback ports. A port taken between the
 * choice and nginx's bind (EADDRINUSE) is retried with others.
 */
export async function startNginx(blocks: ServerBlocks, options: NginxOptions = {}): Promise<Nginx> {
  const binary = nginxBinary();
  if (binary === undefined) throw new Error('nginx is not installed: apt-get install -y --no-install-recommends nginx');
  for (let attempt = 0; ; attempt++) {
    const dir = mkdtempSync(join(tmpdir(), 'keysim-nginx-'));
    mkdirSync(join(dir, 'tmp'));
    options.prepare?.(dir);
    const ports: number[] = [];
    for (let i = 0; i < (options.ports ?? 1); i++) ports.push(await freePort());
    writeFileSync(join(dir, 'nginx.conf'), configFile(dir, blocks(ports, dir)));
    const child = spawn(binary, ['-p', dir, '-c', join(dir, 'nginx.conf'), '-g', 'daemon off;'], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    try {
      for (const port of ports) await waitUntilAnswering(port, child, dir, () => stderr);
    } catch (error) {
      child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
      if (attempt < 5 && /Address already in use/.test(String(error))) continue;
      throw error;
    }
    return {
      urls: ports.map((port) => `${options.tls === true ? 'https' : 'http'}://127.0.0.1:${port}`),
      ports,
      dir,
      accessLog: (port) => parseAccessLog(readIf(join(dir, `access-${port}.log`))),
      stop: () => stopNginx(child, dir),
    };
  }
}

async function stopNginx(child: ChildProcess, dir: string): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGQUIT');
    const graceful = await Promise.race([exited.then(() => true), sleep(5_000).then(() => false)]);
    if (!graceful) {
      child.kill('SIGKILL');
      await exited;
    }
  }
  rmSync(dir, { recursive: true, force: true });
}
