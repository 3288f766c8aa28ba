/**
 * The live-safe scenarios through nginx that loses or refuses some verifications: connections
 * closed without an answer before forwarding (444), 504s after the service executed the request,
 * and its own 503/429 pages (test/helpers/proxy-suite.ts, test/helpers/nginx-modes.ts).
 */
import { MODES } from '../helpers/nginx-modes.js';
import { describeProxyMode } from '../helpers/proxy-suite.js';

for (const mode of MODES.filter((m) => ['drop-before', 'timeout-after', 'shed'].includes(m.name))) describeProxyMode(mode);
