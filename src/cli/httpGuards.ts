import { createHash, timingSafeEqual } from 'node:crypto';

/** Hosts that can only be this machine; anything else in Host or Origin is a foreign page or a rebound name. */
function isLoopbackHost(hostname: string): boolean {
  const h = hostname.toLowerCase();
  return h === 'localhost' || h === '[::1]' || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/**
 * A browser sends Origin with every cross-site request; a page on any other site (including a
 * DNS-rebound name that now points at 127.0.0.1) carries its own origin here. Clients that are
 * not browsers (Claude Code, Codex, the SDK) send none. So: absent, or a loopback http(s) origin.
 */
export function originAllowed(origin: string | undefined): boolean {
  if (origin === undefined) return true;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  return (url.protocol === 'http:' || url.protocol === 'https:') && isLoopbackHost(url.hostname);
}

/** Host must name loopback too: a rebound name arrives with the attacker's host name in Host. */
export function hostAllowed(host: string | undefined): boolean {
  if (!host) return false;
  let url: URL;
  try {
    url = new URL(`http://${host}`);
  } catch {
    return false;
  }
  return isLoopbackHost(url.hostname);
}

/** Compares in constant time (over digests, so lengths do not leak either). */
export function bearerMatches(authorization: string | undefined, token: string): boolean {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  if (!m) return false;
  const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();
  return timingSafeEqual(digest(m[1] as string), digest(token));
}

/** The well-known documents an OAuth client looks for (RFC 9728, RFC 8414, OpenID discovery), at the root or path-suffixed. */
const OAUTH_DISCOVERY = /\/\.well-known\/(oauth-protected-resource|oauth-authorization-server|openid-configuration)(\/|$)/;

/** Whether a request path asks for OAuth discovery, in any of the places clients try it. */
export function isOAuthDiscovery(requestUrl: string): boolean {
  return OAUTH_DISCOVERY.test(new URL(requestUrl, 'http://localhost').pathname);
}
