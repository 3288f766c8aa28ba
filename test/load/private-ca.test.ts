/**
 * An https target whose certificate a private CA signed (generated here with the openssl CLI into
 * a temporary folder): without --ca the pre-flight check and keysim cleanup say how to trust it;
 * with --ca (the PEM file) every client trusts it — pre-flight, target detection, the set-up
 * client, the load client — with no NODE_EXTRA_CA_CERTS.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { type Server, createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { readCaFile } from '../../src/cli/ca-file.js';
import { cleanupCommand } from '../../src/cli/commands/cleanup.js';
import { EXIT, UsageError } from '../../src/cli/exit-codes.js';
import { checkReachable } from '../../src/load/target/reachability.js';
import { runScenario } from '../../src/load/run/runner.js';
import { type Scenario, defineScenario } from '../../src/load/scenario/scenario.js';
import { httpJsonClient } from '../../src/load/target/service-api.js';
import { detectUrlTarget, liveTarget } from '../../src/load/target/target.js';
import { runClosedPhase } from '../../src/load/executors/closed-model.js';
import { Recorder } from '../../src/load/metrics/recorder.js';
import type { PlannedRequest } from '../../src/load/executors/open-model-requests.js';
import { loadSettings } from '../helpers/load.js';

const ROOT_KEY = 'root_private_ca_0123456789';
let dir: string;
let server: Server;
let url: string;
let caPath: string;
const requests: string[] = [];

function openssl(...args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'keysim-ca-'));
  openssl(
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-days',
    '2',
    '-subj',
    '/CN=keysim test CA',
    '-keyout',
    'ca.key',
    '-out',
    'ca.pem',
  );
  openssl(
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-subj',
    '/CN=127.0.0.1',
    '-keyout',
    'server.key',
    '-out',
    'server.csr',
  );
  writeFileSync(join(dir, 'san.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  openssl(
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-days',
    '2',
    '-extfile',
    'san.ext',
    '-out',
    'server.pem',
  );
  caPath = join(dir, 'ca.pem');
  // The server sends its chain (its certificate and the CA's), as most do.
  const chain = readFileSync(join(dir, 'server.pem'), 'utf8') + readFileSync(caPath, 'utf8');
  server = createServer({ key: readFileSync(join(dir, 'server.key')), cert: chain }, (req, res) => {
    requests.push(req.url ?? '');
    req.resume();
    req.on('end', () => {
      const body = req.url?.endsWith('identities.listIdentities')
        ? { meta: { requestId: 'r' }, data: [], pagination: { hasMore: false } }
        : { meta: { requestId: 'r' }, data: { valid: true, code: 'VALID' } };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});

const scenario = defineScenario<undefined>({
  name: 'inline-private-ca',
  description: 'Verifications over TLS with a private CA',
  setup: async () => undefined,
  mix: [{ weight: 1, build: () => ({ op: 'keys.verifyKey', body: { key: 'k' } }) }],
}) as unknown as Scenario<unknown>;

describe('a target whose certificate a private CA signed', () => {
  test('without --ca, pre-flight says the certificate is not trusted and how to trust it (not "not reachable: other … Check the URL")', async () => {
    const error = await checkReachable(liveTarget(url, ROOT_KEY), 5_000).catch((e: unknown) => e as Error);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toBe(
      `The certificate of ${url} is not trusted (self-signed certificate in certificate chain): pass --ca ca.pem with the CA that signed it (PEM; several certificates may go in one file).`,
    );
  });

  test('with --ca, every client trusts it: pre-flight, detection, the set-up client and the load client', async () => {
    const ca = readCaFile(caPath);
    const detected = await detectUrlTarget(url, ROOT_KEY, 5_000, ca);
    expect(detected.target.ca).toBe(ca);
    await expect(checkReachable(detected.target, 5_000)).resolves.toBeUndefined();
    const client = httpJsonClient(detected.target, 5_000);
    try {
      expect((await client.post('/v2/keys.verifyKey', { key: 'k' }, 'root')).status).toBe(200);
    } finally {
      await client.close();
    }
    const before = requests.filter((r) => r.endsWith('keys.verifyKey')).length;
    const report = await runScenario({
      scenario,
      target: detected.target,
      settings: loadSettings({ rate: 40, connections: 2, durationMs: 300, warmupMs: 0 }),
      seed: 1,
      thresholds: [],
      keep: false,
      keysimVersion: '0.0.0-test',
    });
    const verify = report.operations.find((o) => o.operation === 'keys.verifyKey');
    expect(verify?.requests).toBeGreaterThan(0);
    expect(verify?.statuses).toEqual({ '200': verify?.requests });
    expect(requests.filter((r) => r.endsWith('keys.verifyKey')).length - before).toBe(verify?.requests);
  });

  test('the closed model ignored --ca (it trusted any certificate): it trusts the given CA, and refuses a certificate another CA signed', async () => {
    const ca = readCaFile(caPath) as string;
    // Another private CA, which did not sign the server's certificate.
    openssl(
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '2',
      '-subj',
      '/CN=keysim other CA',
      '-keyout',
      'other.key',
      '-out',
      'other.pem',
    );
    const otherCa = readCaFile(join(dir, 'other.pem')) as string;
    // Bounded by a minute, ended by what it waits for (no pace assumed): three answers, or three failures.
    const phase = { name: 'load', startMs: 0, durationMs: 60_000, rate: 0, count: 0, warmup: false };
    const next = (): PlannedRequest => ({ operation: 'keys.verifyKey', label: 'verify', spec: { op: 'keys.verifyKey', body: { key: 'k' } }, check: undefined });
    const closedRun = async (trusted: string, base: string) => {
      const recorder = new Recorder();
      const stop = new AbortController();
      let ended = 0;
      recorder.onCompletion = () => {
        if (++ended >= 3) stop.abort();
      };
      const settings = loadSettings({ model: 'closed', connections: 2, timeoutMs: 10_000 });
      await runClosedPhase({ target: liveTarget(`${url}${base}`, ROOT_KEY, trusted), settings, phase, next, recorder, signal: stop.signal });
      const verify = recorder.finish(phase.durationMs).operations.find((o) => o.operation === 'keys.verifyKey');
      return { verify, reached: () => requests.filter((r) => r === `${base}/v2/keys.verifyKey`).length };
    };
    const right = await closedRun(ca, '/right');
    expect(right.reached()).toBeGreaterThanOrEqual(3);
    expect(right.verify?.statuses).toEqual({ '200': right.verify?.requests });
    const wrong = await closedRun(otherCa, '/wrong');
    // Not one request reached the server: the TLS handshake failed, as every other client's does.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(wrong.reached()).toBe(0);
    expect(wrong.verify?.statuses ?? {}).toEqual({});
    expect(wrong.verify?.transportErrors.other).toBeGreaterThanOrEqual(3);
  });

  test('the same run in the closed model, through the runner with --ca: every request answered 200', async () => {
    const target = (await detectUrlTarget(url, ROOT_KEY, 5_000, readCaFile(caPath))).target;
    const report = await runScenario({
      scenario,
      target,
      // 2 s, not 0.3: on a busy machine the TLS handshakes alone took longer than 0.3 s, and no request was sent.
      settings: loadSettings({ model: 'closed', connections: 2, durationMs: 2_000, warmupMs: 0 }),
      seed: 1,
      thresholds: [],
      keep: false,
      keysimVersion: '0.0.0-test',
    });
    const verify = report.operations.find((o) => o.operation === 'keys.verifyKey');
    expect(verify?.requests).toBeGreaterThan(0);
    expect(verify?.statuses).toEqual({ '200': verify?.requests });
  });

  test('keysim cleanup: without --ca it says how to trust the certificate (exit 3); with --ca it runs', async () => {
    const args = { target: url, tag: 'keysim-20260101T000000-1', dryRun: true, out: dir, namespace: [], rootKey: ROOT_KEY };
    const stderr: string[] = [];
    const write = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((text: string) => stderr.push(text) > 0) as typeof process.stderr.write;
    let without: number;
    try {
      without = await cleanupCommand(args, () => undefined);
    } finally {
      process.stderr.write = write;
    }
    expect(without).toBe(EXIT.targetUnreachable);
    expect(stderr.join('')).toMatch(/The certificate of https:\/\/127\.0\.0\.1:\d+ is not trusted .*: pass --ca ca\.pem/);
    expect(await cleanupCommand({ ...args, ca: caPath }, () => undefined)).toBe(EXIT.ok);
  });

  test('--ca with a file that holds no certificate is a usage error saying what to give', () => {
    const bad = join(dir, 'not-a-cert.pem');
    writeFileSync(bad, 'hello');
    expect(() => readCaFile(bad)).toThrow(UsageError);
    expect(() => readCaFile(bad)).toThrow(/holds no PEM certificate/);
    expect(() => readCaFile(join(dir, 'missing.pem'))).toThrow(/cannot read it/);
  });
});
