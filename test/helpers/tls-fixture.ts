/**
 * A self-signed certificate for TLS tests (EC P-256, valid until 2126) for the names
 * keysim-test.localhost, localhost and 127.0.0.1. Made with:
 *   openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 36500
 *     -subj "/CN=keysim-test.localhost"
 *     -addext "subjectAltName=DNS:keysim-test.localhost,DNS:localhost,IP:127.0.0.1"
 * It protects nothing: tests only.
 */
export const TEST_TLS_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgQTwhQgjs+W1uxxFn
IUMV9CUZOD60VgUgF6Lrg8EpkmmhRANCAAR6xRTosA0A/Z0H63hs6OKmlhxvKTXX
nAUglIcVyZ+riLHpXFNo5d2P6S0u10Zb+ygZ2KYYwlRGYOnVTEvXidRY
-----END PRIVATE KEY-----
`;

export const TEST_TLS_CERT = `-----BEGIN CERTIFICATE-----
MIIBzDCCAXKgAwIBAgIURpo04EonSUWFXN0NnJeU31xFxUQwCgYIKoZIzj0EAwIw
IDEeMBwGA1UEAwwVa2V5c2ltLXRlc3QubG9jYWxob3N0MCAXDTI2MTEyNTE4MDc0
OVoYDzIxMjYxMTAxMTgwNzQ5WjAgMR4wHAYDVQQDDBVrZXlzaW0tdGVzdC5sb2Nh
bGhvc3QwWTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAAR6xRTosA0A/Z0H63hs6OKm
lhxvKTXXnAUglIcVyZ+riLHpXFNo5d2P6S0u10Zb+ygZ2KYYwlRGYOnVTEvXidRY
o4GHMIGEMB0GA1UdDgQWBBT723ZZqFJb/+PLmWvjT+QC6gLCwjAfBgNVHSMEGDAW
gBT723ZZqFJb/+PLmWvjT+QC6gLCwjAPBgNVHRMBAf8EBTADAQH/MDEGA1UdEQQq
MCiCFWtleXNpbS10ZXN0LmxvY2FsaG9zdIIJbG9jYWxob3N0hwR/AAABMAoGCCqG
SM49BAMCA0gAMEUCIQCH9lZNHK8FV/homZwMeDAEoM9PFusTZkyr7N8bdE858AIg
f9+gZRaFscdBv8A1TzvIkVq9pxyE7ZeJd5IblYRfqoc=
-----END CERTIFICATE-----
`;

export const TEST_TLS_NAME = 'keysim-test.localhost';
