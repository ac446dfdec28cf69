import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

/** Whether `openssl` (Debian's openssl package) is there to make the test certificates. */
function opensslAvailable(): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

/** A self-signed certificate authority: its certificate and key, in `dir`. */
function makeAuthority(dir: string, name: string): { cert: string; key: string } {
  const cert = path.join(dir, `${name}.crt`);
  const key = path.join(dir, `${name}.key`);
  openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '2', '-subj', `/CN=${name}`], dir);
  return { cert, key };
}

export interface TestCertificates {
  /** The authority that signed the server's certificate (what a client must trust). */
  ca: string;
  /** Another authority, which did not (a wrong CA). */
  wrongCa: string;
  /** The server's certificate (for 127.0.0.1, signed by `ca`) and its key. */
  serverCert: string;
  serverKey: string;
}

/** Real certificates made by openssl in `dir`: a CA, a server certificate for 127.0.0.1 it signed, and an unrelated CA. */
export function makeCertificates(dir: string): TestCertificates {
  if (!opensslAvailable()) throw new Error('openssl is missing: apt-get install openssl (scripts/test.sh does it)');
  fs.mkdirSync(dir, { recursive: true });
  const ca = makeAuthority(dir, 'pool-test-ca');
  const wrong = makeAuthority(dir, 'unrelated-ca');
  const serverKey = path.join(dir, 'server.key');
  const csr = path.join(dir, 'server.csr');
  const serverCert = path.join(dir, 'server.crt');
  const ext = path.join(dir, 'server.ext');
  fs.writeFileSync(ext, 'subjectAltName=IP:127.0.0.1\n');
  openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', serverKey, '-out', csr, '-subj', '/CN=127.0.0.1'], dir);
  openssl(['x509', '-req', '-in', csr, '-CA', ca.cert, '-CAkey', ca.key, '-CAcreateserial', '-out', serverCert, '-days', '2', '-extfile', ext], dir);
  return { ca: ca.cert, wrongCa: wrong.cert, serverCert, serverKey };
}
