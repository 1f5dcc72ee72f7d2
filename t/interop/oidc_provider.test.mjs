// SPDX-License-Identifier: ISC
// The OpenID Provider fixture (t/fixtures/oidc-provider.mjs, npm
// oidc-provider) does what the gateway's OAuth tests will need, and the
// tokens it issues verify with common/jose (t/interop/jose_cases) against
// the JWKS it publishes: client credentials and authorization code with
// PKCE (its automatic login), dynamic registration, JWT access tokens for
// a resource indicator with typ at+jwt and every algorithm it signs with,
// opaque tokens for another resource and their introspection, and key
// rotation (a new token's kid is unknown to the old set; the previous key
// stays published until retired).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  startOidcProvider, clientCredentials, authorizationCode, register, introspect, rotate, jwks, verifyCases,
} from '../lib/oidc.mjs';

const RESOURCE = 'http://127.0.0.1:18931/mcp';
const OPAQUE = 'http://127.0.0.1:18932/mcp';
let op;

before(async () => {
  op = await startOidcProvider(['--opaque', OPAQUE]);
});
after(async () => {
  await op?.stop();
});

// Verify tokens with common/jose: cases [{name, token, expect, ...}].
async function verify(issuer, set, cases, extra = {}) {
  const r = await verifyCases({
    issuer, audience: RESOURCE, now: Math.floor(Date.now() / 1000), leeway: 30, typ: 'at+jwt',
    algs: 'RS256 PS256 ES256 EdDSA', jwks: set, cases, ...extra,
  });
  assert.equal(r.code, 0, r.stdout + (r.stderr ?? ''));
  assert.match(r.stdout, new RegExp(`^${cases.length} passed, 0 failed$`, 'm'));
  return r.stdout;
}

const header = (t) => JSON.parse(Buffer.from(t.split('.')[0], 'base64url'));
const payload = (t) => JSON.parse(Buffer.from(t.split('.')[1], 'base64url'));

test('discovery names what the tests use', async () => {
  for (const p of ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server']) {
    const res = await fetch(`${op.issuer}${p}`);
    assert.equal(res.status, 200);
    const m = await res.json();
    assert.equal(m.issuer, op.issuer);
    assert.equal(m.jwks_uri, `${op.issuer}/jwks`);
    assert.ok(m.registration_endpoint);
    assert.ok(m.introspection_endpoint);
    assert.deepEqual(m.code_challenge_methods_supported, ['S256']);
    assert.ok(m.grant_types_supported.includes('client_credentials'));
  }
  const set = await jwks(op.issuer);
  assert.ok(set.keys.every((k) => k.d === undefined), 'the JWKS holds public keys only');
});

test('client credentials: a JWT access token for the resource verifies', async () => {
  const t = await clientCredentials(op.issuer, { resource: RESOURCE, scope: 'mcp:read mcp:tools' });
  assert.equal(header(t.access_token).typ, 'at+jwt');
  assert.equal(header(t.access_token).alg, 'RS256');
  assert.equal(payload(t.access_token).aud, RESOURCE);
  const set = await jwks(op.issuer);
  await verify(op.issuer, set, [
    { name: 'cc', token: t.access_token, expect: 'ok', sub: 'mcp-cc', client_id: 'mcp-cc', scopes: ['mcp:read', 'mcp:tools'] },
    { name: 'cc for another audience', token: t.access_token, expect: 'audience', audience: OPAQUE },
    { name: 'cc from another issuer', token: t.access_token, expect: 'issuer', issuer: `${op.issuer}/` },
    { name: 'cc expired', token: t.access_token, expect: 'expired', now: Math.floor(Date.now() / 1000) + 400 },
    { name: 'cc with RS256 not allowed', token: t.access_token, expect: 'alg_denied', algs: 'ES256' },
  ]);
});

test('authorization code with PKCE and the automatic login', async () => {
  const t = await authorizationCode(op.issuer, { resource: RESOURCE, scope: 'mcp:tools' });
  const a = await authorizationCode(op.issuer, { resource: RESOURCE, scope: 'mcp:tools mcp:admin', loginHint: 'admin' });
  assert.deepEqual(payload(a.access_token).groups, ['admins']);
  assert.deepEqual(payload(t.access_token).groups, ['users']);
  await verify(op.issuer, await jwks(op.issuer), [
    { name: 'test-user', token: t.access_token, expect: 'ok', sub: 'test-user', client_id: 'mcp-app', scopes: ['mcp:tools'] },
    { name: 'admin', token: a.access_token, expect: 'ok', sub: 'admin', scopes: ['mcp:tools', 'mcp:admin'] },
  ]);
});

test('dynamic client registration, then the code flow as that client', async () => {
  const c = await register(op.issuer, {
    redirect_uris: ['http://127.0.0.1:41234/callback'], token_endpoint_auth_method: 'none',
    grant_types: ['authorization_code'], response_types: ['code'], client_name: 'an MCP client',
  });
  assert.ok(c.client_id);
  const t = await authorizationCode(op.issuer, {
    clientId: c.client_id, redirectUri: 'http://127.0.0.1:41234/callback', resource: RESOURCE, scope: 'mcp:read',
  });
  await verify(op.issuer, await jwks(op.issuer), [
    { name: 'registered', token: t.access_token, expect: 'ok', sub: 'test-user', client_id: c.client_id },
  ]);
});

test('opaque tokens for another resource, and their introspection', async () => {
  const t = await clientCredentials(op.issuer, { resource: OPAQUE, scope: 'mcp:read' });
  assert.equal(t.access_token.split('.').length, 1, 'an opaque token');
  const i = await introspect(op.issuer, t.access_token);
  assert.equal(i.active, true);
  assert.equal(i.client_id, 'mcp-cc');
  assert.equal(i.scope, 'mcp:read');
  assert.equal(i.aud, OPAQUE);
  assert.equal((await introspect(op.issuer, 'not-a-token')).active, false);
  await verify(op.issuer, await jwks(op.issuer), [
    { name: 'opaque is no JWT', token: t.access_token, expect: 'malformed' },
  ]);
});

test('key rotation: new kid unknown to the old set, old key kept until retired', async () => {
  const set1 = await jwks(op.issuer);
  const t1 = (await clientCredentials(op.issuer, { resource: RESOURCE, scope: 'mcp:read' })).access_token;
  const r = await rotate(op.issuer);
  assert.ok(!r.kids.includes(header(t1).kid));
  const set2 = await jwks(op.issuer);
  const t2 = (await clientCredentials(op.issuer, { resource: RESOURCE, scope: 'mcp:read' })).access_token;
  assert.notEqual(header(t2).kid, header(t1).kid);
  assert.ok(r.kids.includes(header(t2).kid));
  await verify(op.issuer, set1, [
    { name: 'old token, old set', token: t1, expect: 'ok' },
    { name: 'new token, old set', token: t2, expect: 'kid_unknown' },
    { name: 'old token, new set', token: t1, expect: 'ok', jwks: set2 },
    { name: 'new token, new set', token: t2, expect: 'ok', jwks: set2 },
  ]);
  await rotate(op.issuer, { retire: true });
  const set3 = await jwks(op.issuer);
  const t3 = (await clientCredentials(op.issuer, { resource: RESOURCE, scope: 'mcp:read' })).access_token;
  await verify(op.issuer, set3, [
    { name: 'retired key', token: t1, expect: 'kid_unknown' },
    { name: 'previous generation retired', token: t2, expect: 'kid_unknown' },
    { name: 'third generation', token: t3, expect: 'ok' },
  ]);
});

test('every algorithm the provider signs access tokens with', async () => {
  for (const alg of ['PS256', 'ES256', 'EdDSA']) {
    const p = await startOidcProvider(['--alg', alg]);
    try {
      const t = (await clientCredentials(p.issuer, { resource: RESOURCE, scope: 'mcp:read' })).access_token;
      assert.equal(header(t).alg, alg);
      await verify(p.issuer, await jwks(p.issuer), [
        { name: alg, token: t, expect: 'ok', sub: 'mcp-cc' },
        { name: `${alg} not allowed`, token: t, expect: 'alg_denied', algs: 'RS256' },
      ]);
    } finally {
      await p.stop();
    }
  }
});
