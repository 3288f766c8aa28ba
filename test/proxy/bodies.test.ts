/**
 * The live-safe scenarios through nginx that changes answers: gzip keysim never asked for, and
 * 200s with an HTML page (test/helpers/proxy-suite.ts, test/helpers/nginx-modes.ts).
 */
import { MODES } from '../helpers/nginx-modes.js';
import { describeProxyModes } from '../helpers/proxy-suite.js';

describeProxyModes(MODES.filter((m) => ['gzip', 'html'].includes(m.name)));
