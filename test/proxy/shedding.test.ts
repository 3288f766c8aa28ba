/**
 * The live-safe scenarios through nginx that loses or refuses some verifications: connections
 * closed without an answer before forwarding (444), 504s after the service executed the request,
 * and its own 503/429 pages (test/helpers/proxy-suite.ts, test/helpers/nginx-modes.ts).
 */
import { MODES } from '../helpers/nginx-modes.js';
import { describeProxyModes } from '../helpers/proxy-suite.js';

describeProxyModes(MODES.filter((m) => ['drop-before', 'timeout-after', 'shed'].includes(m.name)));
