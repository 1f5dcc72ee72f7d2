// SPDX-License-Identifier: ISC
// Helpers for tests that need an authorization server: start the OpenID
// Provider of t/fixtures/oidc-provider.mjs, get tokens from it (client
// credentials; authorization code with PKCE, following its login and
// consent redirects with their cookies as a browser would), register
// clients, introspect, rotate its keys; and verify tokens with
// common/jose through t/interop/jose_cases.
import crypto from 'node:crypto';
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { startNodeServer, srcdir, builddir, followLogin } from './gateway.mjs';

export { followLogin };

const run = promisify(execFile);
// A JWT shown in a log or an output: two base64url JSON objects and a
// signature, dot-separated (a random PKCE challenge or state may begin
// with "eyJ" too, one time in 262,144).
export const JWT_SHOWN = /eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\./;

export const joseCases = path.join(builddir, 't/interop/jose_cases');

// Start the provider; its issuer is http://127.0.0.1:PORT.
export async function startOidcProvider(args = []) {
  const srv = await startNodeServer([path.join(srcdir, 't/fixtures/oidc-provider.mjs'), ...args]);
  srv.issuer = `http://127.0.0.1:${srv.port}`;
  return srv;
}

const basic = (id, secret) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

async function form(url, params, headers = {}) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(params),
  });
  const body = await res.json();
  if (!res.ok) throw new Error(`${url}: ${res.status} ${JSON.stringify(body)}`);
  return body;
}

export async function clientCredentials(issuer, { resource, scope, client = 'mcp-cc', secret = 'mcp-cc-secret' }) {
  const p = { grant_type: 'client_credentials' };
  if (resource) p.resource = resource;
  if (scope) p.scope = scope;
  return form(`${issuer}/token`, p, { authorization: basic(client, secret) });
}

export async function introspect(issuer, token, { client = 'mcp-gateway', secret = 'mcp-gateway-secret' } = {}) {
  return form(`${issuer}/token/introspection`, { token }, { authorization: basic(client, secret) });
}

export async function register(issuer, metadata) {
  const res = await fetch(`${issuer}/reg`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(metadata),
  });
  const body = await res.json();
  if (res.status !== 201) throw new Error(`register: ${res.status} ${JSON.stringify(body)}`);
  return body;
}

export async function rotate(issuer, { retire = false } = {}) {
  const res = await fetch(`${issuer}/admin/rotate${retire ? '?retire=1' : ''}`, { method: 'POST' });
  if (!res.ok) throw new Error(`rotate: ${res.status}`);
  return res.json();
}

// How many requests each path of the provider had ({"/jwks": n, ...}).
export async function counts(issuer) {
  const res = await fetch(`${issuer}/admin/counts`);
  if (!res.ok) throw new Error(`counts: ${res.status}`);
  return res.json();
}

export async function jwks(issuer) {
  const res = await fetch(`${issuer}/jwks`);
  if (!res.ok) throw new Error(`jwks: ${res.status}`);
  return res.json();
}

// Follow an authorization URL through the provider's login and consent
// as a browser would (cookies, redirects) until it sends the user agent
// to redirectUri; returns that URL, with the code.
// The authorization code flow with PKCE; returns the token response.
export async function authorizationCode(issuer, {
  clientId = 'mcp-app', redirectUri = 'http://127.0.0.1/callback', resource, scope, loginHint, secret,
}) {
  const verifier = crypto.randomBytes(32).toString('base64url');
  const challenge = crypto.createHash('sha256').update(verifier).digest('base64url');
  const state = crypto.randomBytes(8).toString('hex');
  const u = new URL(`${issuer}/auth`);
  u.search = new URLSearchParams({
    client_id: clientId, response_type: 'code', redirect_uri: redirectUri, scope, state,
    code_challenge: challenge, code_challenge_method: 'S256',
    ...(resource ? { resource } : {}), ...(loginHint ? { login_hint: loginHint } : {}),
  });
  const back = await followLogin(u, redirectUri);
  if (back.searchParams.get('state') !== state) throw new Error(`login: state ${back.searchParams.get('state')}`);
  const code = back.searchParams.get('code');
  if (!code) throw new Error(`login: ${back}`);
  const p = { grant_type: 'authorization_code', code, redirect_uri: redirectUri, code_verifier: verifier };
  if (resource) p.resource = resource;
  const headers = {};
  if (secret) headers.authorization = basic(clientId, secret);
  else p.client_id = clientId;
  return form(`${issuer}/token`, p, headers);
}

// Run jose_cases on a cases object (its format: t/interop/jose_cases.c);
// its exit status and output.
export async function verifyCases(v) {
  const dir = mkdtempSync(path.join(tmpdir(), 'mcps-jose-'));
  try {
    const file = path.join(dir, 'cases.json');
    writeFileSync(file, JSON.stringify(v));
    try {
      const { stdout } = await run(joseCases, [file]);
      return { code: 0, stdout };
    } catch (e) {
      return { code: e.code, stdout: e.stdout ?? '', stderr: e.stderr };
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
