/**
 * `--ca FILE`: the PEM certificates (one or more) of the CA(s) that signed an https target's
 * certificate, trusted by every client of the run — the load, the set-up and checks, the pre-flight
 * check, the clock-skew probes, and `keysim cleanup` — besides the system's own.
 */
import { readFileSync } from 'node:fs';
import { rootCertificates } from 'node:tls';
import { UsageError } from './exit-codes.js';

const PEM_CERT = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/**
 * The file's certificates, with the system's trusted roots added (a `ca` given to node:tls
 * replaces them, and a target behind a public certificate must keep working); undefined when no
 * file is given. A file that cannot be read or holds no certificate is a usage error.
 */
export function readCaFile(path: string | undefined): string | undefined {
  if (path === undefined) return undefined;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new UsageError(
      `--ca ${path}: cannot read it (${error instanceof Error ? error.message : String(error)}). Give the PEM file of the CA that signed the target's certificate.`,
    );
  }
  const certificates = text.match(PEM_CERT);
  if (certificates === null) {
    throw new UsageError(
      `--ca ${path} holds no PEM certificate (-----BEGIN CERTIFICATE----- …): give the CA's certificate in PEM form (openssl x509 -in ca.der -inform der -out ca.pem converts a DER one).`,
    );
  }
  return [...certificates, ...rootCertificates].join('\n');
}
