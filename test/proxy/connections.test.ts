/**
 * The live-safe scenarios through nginx that closes connections keysim may reuse (a 1 s idle
 * timeout without a Keep-Alive hint, one request per connection), serves TLS with a private CA
 * (`--ca`), or forwards to a dead upstream (test/helpers/proxy-suite.ts, test/helpers/nginx-modes.ts).
 */
import { MODES } from '../helpers/nginx-modes.js';
import { describeProxyModes } from '../helpers/proxy-suite.js';

describeProxyModes(MODES.filter((m) => ['idle-timeout', 'one-request', 'tls', 'dead-upstream'].includes(m.name)));
