/**
 * `keysim run` at a URL behind a proxy, as a process: a URL missing its base path (the proxy's
 * HTML 404) exits 3 before any load, saying to check the URL and its base path — not "namespace
 * does not exist … create it" later in the run; and "ca" in keysim.config.json names the CA file
 * relative to the file.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { checkConfig } from '../../src/cli/config.js';
import { withConfig } from '../../src/cli/run-config.js';
import { cleanEnv, cleanUpCli, cli, tempDir } from '../helpers/cli.js';
import { startStubServer } from '../helpers/load.js';

afterAll(cleanUpCli);

test('a URL missing its base path (a proxy\'s HTML 404) exits 3 before any load: "does not answer like the service … check the URL and its base path"', async () => {
  const proxy = await startStubServer((_req, res) =>
    res.writeHead(404, { 'content-type': 'text/html' }).end('<html><body><h1>404 Not Found</h1><hr>nginx</body></html>'),
  );
  const out = tempDir();
  try {
    const run = await cli(
      ['run', 'ratelimit-live-edges', '--target', proxy.url, '--yes', '--out', out, '--no-config'],
      cleanEnv({ KEYSIM_ROOT_KEY: 'root_proxy_cli_0123456789' }),
    );
    expect(run.code).toBe(3);
    expect(run.stderr).toMatch(
      new RegExp(`the target at ${proxy.url} does not answer like the service \\(404 text/html, .*\\): check the URL and its base path`, 'i'),
    );
    expect(run.stderr).not.toMatch(/namespace/i);
    // The pre-flight probe (and target detection) only: nothing was created, no load was sent.
    expect(proxy.paths.filter((p) => !p.startsWith('/_sim/') && p !== '/v2/identities.listIdentities')).toEqual([]);
  } finally {
    await proxy.kill();
  }
});

test('"ca" in keysim.config.json is read like --ca, relative to the file; --ca on the command line wins', () => {
  const dir = tempDir();
  const file = join(dir, 'keysim.config.json');
  writeFileSync(file, '{}');
  const config = checkConfig({ target: 'https://api.example.com', ca: 'certs/ca.pem' }, file);
  expect(config.ca).toBe(join(dir, 'certs/ca.pem'));
  const none: { scenario: string[]; threshold: string[]; ca?: string } = { scenario: [], threshold: [] };
  expect(withConfig(none, config).ca).toBe(join(dir, 'certs/ca.pem'));
  expect(withConfig({ ...none, ca: '/etc/other.pem' }, config).ca).toBe('/etc/other.pem');
});
