// SPDX-License-Identifier: ISC
// The gateway as an OAuth protected resource, end to end, against peers we
// did not write: a real OpenID Provider (npm oidc-provider,
// t/fixtures/oidc-provider.mjs) as the authorization server, and the
// official SDK clients (v1 @modelcontextprotocol/sdk, and v2
// @modelcontextprotocol/client speaking 2026-07-28) with their OAuth
// client provider doing the whole flow from the gateway's 401, with no
// token given to it in advance: the challenge, the protected resource
// metadata, the provider's metadata, dynamic client registration, the
// code flow with PKCE and a resource indicator, then tools, and the step
// up when an upstream needs a scope the token lacks.  Also: client
// credentials; a key rotation at the provider picked up through an
// unknown kid; a token for another resource refused; the scopes of an
// upstream; sessions bound to the subject; the subject, never the token,
// in the log and mcpctl sessions; a WebSocket and an event stream that end
// when their token expires (the provider's --ttl), a JWT or an opaque one.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import WebSocket from 'ws';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import {
  Client as ModernClient, StreamableHTTPClientTransport as ModernTransport, UnauthorizedError as ModernUnauthorized,
} from '@modelcontextprotocol/client';
import { startGateway, demo, q, post, freePort } from '../lib/gateway.mjs';
import { startOidcProvider, followLogin, clientCredentials, rotate, counts } from '../lib/oidc.mjs';

const REDIRECT = 'http://127.0.0.1:41235/callback';
let op;
let gw;
let base;


// What the SDK asks an application to keep, in memory; the redirect to
// the provider is remembered for the test to follow as a browser would.
// The client is the provider's pre-registered public client "mcp-app"
// (loopback redirect, any port): the SDK's dynamic registration sends the
// scope of the challenge, which this provider's registration endpoint
// takes for one of its own and refuses (it knows resource scopes only
// per resource).
class MemoryProvider {
  constructor() {
    this.saved = { client: { client_id: 'mcp-app' } };
    this.authorizationUrl = undefined;
  }

  get redirectUrl() { return REDIRECT; }

  get clientMetadata() {
    return {
      client_name: 'oauth.test.mjs', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'],
    };
  }

  clientInformation() { return this.saved.client; }

  saveClientInformation(c) { this.saved.client = c; }

  tokens() { return this.saved.tokens; }

  saveTokens(t) { this.saved.tokens = t; }

  redirectToAuthorization(url) { this.authorizationUrl = url; }

  saveCodeVerifier(v) { this.saved.verifier = v; }

  codeVerifier() { return this.saved.verifier; }
}

before(async () => {
  op = await startOidcProvider();
  // The resource URL names the port before the gateway listens on it.
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  gw = await startGateway({
    listen: `127.0.0.1:${port}`,
    servers: [demo('alpha'), demo('beta', 'scopes = [ "mcp:admin" ];')],
    globals: `oauth = { resource = ${q(base)}; scopes = [ "mcp:tools" ];
  scopes_supported = [ "mcp:tools", "mcp:admin" ];
  issuers = ( { issuer = ${q(op.issuer)}; typ = "at+jwt"; } ); };
clients = ( { name = "admins"; oauth = { claims = { groups = "admins"; }; }; } );
endpoints = ( { path = "/mcp/alpha"; tools = [ "alpha__*" ]; } );`,
  });
  await gw.waitFor((st) => st.issuers?.[0]?.keys > 0, 'the provider\'s keys');
});
after(async () => {
  await gw?.stop();
  await op?.stop();
});

test('no token: 401 pointing to the metadata, which names the provider', async () => {
  const r = await post(gw, { jsonrpc: '2.0', id: 1, method: 'initialize', params: {} });
  assert.equal(r.status, 401);
  const h = r.headers.get('www-authenticate');
  assert.equal(h, `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp", scope="mcp:tools"`);
  const m = await (await fetch(`${base}/.well-known/oauth-protected-resource/mcp`)).json();
  assert.deepEqual(m, {
    resource: `${base}/mcp`, authorization_servers: [op.issuer],
    scopes_supported: ['mcp:tools', 'mcp:admin'], bearer_methods_supported: ['header'],
  });
});

test('the SDK v1 client logs in from the 401 and calls a tool', async () => {
  const provider = new MemoryProvider();
  const url = new URL(`${base}/mcp`);
  const first = new Client({ name: 'oauth-test', version: '1' });
  await assert.rejects(first.connect(new StreamableHTTPClientTransport(url, { authProvider: provider })),
    UnauthorizedError);
  // It found the provider from the challenge and sent the user there.
  const auth = provider.authorizationUrl;
  assert.ok(auth, 'redirected to the provider');
  assert.equal(auth.searchParams.get('resource'), `${base}/mcp`);
  assert.equal(auth.searchParams.get('code_challenge_method'), 'S256');
  assert.match(auth.searchParams.get('scope'), /mcp:tools/);
  const back = await followLogin(auth, REDIRECT);
  const transport = new StreamableHTTPClientTransport(url, { authProvider: provider });
  await transport.finishAuth(back.searchParams.get('code'));
  assert.ok(provider.saved.tokens?.access_token);
  const client = new Client({ name: 'oauth-test', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }));
  const { tools } = await client.listTools();
  assert.ok(tools.some((t) => t.name === 'alpha__echo'), JSON.stringify(tools.map((t) => t.name)));
  const res = await client.callTool({ name: 'alpha__echo', arguments: { text: 'hi' } });
  assert.match(JSON.stringify(res.content), /hi/);
  // beta needs mcp:admin, which this token has not: 403 insufficient_scope
  // naming what a new token needs, and the SDK steps up (RFC 6750 §3.1;
  // the specification's scope challenge): back to the provider for it.
  provider.authorizationUrl = undefined;
  await assert.rejects(client.callTool({ name: 'beta__echo', arguments: { text: 'up' } }), UnauthorizedError);
  const up = provider.authorizationUrl;
  assert.ok(up, 'sent back to the provider');
  assert.deepEqual(up.searchParams.get('scope').split(' ').sort(), ['mcp:admin', 'mcp:tools']);
  const back2 = await followLogin(up, REDIRECT);
  await new StreamableHTTPClientTransport(url, { authProvider: provider }).finishAuth(back2.searchParams.get('code'));
  const res2 = await client.callTool({ name: 'beta__echo', arguments: { text: 'stepped up' } });
  assert.match(JSON.stringify(res2.content), /stepped up/);
  // mcpctl sessions shows the subject.
  assert.match(gw.mcpctl('sessions'), /SUBJECT[\s\S]*test-user/);
  await client.close();
  // The token is in no log line; the subject is.
  const log = gw.log();
  assert.ok(!log.includes(provider.saved.tokens.access_token));
  assert.match(log, /request: .* auth=- subject="test-user" transport=http method="tools\/call"/);
  assert.match(log, /tools\/call refused: subject test-user lacks scope mcp:tools mcp:admin/);
});

test('the SDK v2 client, speaking 2026-07-28, does the same', async () => {
  const provider = new MemoryProvider();
  const url = new URL(`${base}/mcp`);
  const opts = { versionNegotiation: { mode: { pin: '2026-07-28' } } };
  const first = new ModernClient({ name: 'oauth-v2', version: '1' }, opts);
  await assert.rejects(first.connect(new ModernTransport(url, { authProvider: provider })), ModernUnauthorized);
  const auth = provider.authorizationUrl;
  assert.ok(auth, 'redirected to the provider');
  assert.equal(auth.searchParams.get('resource'), `${base}/mcp`);
  const back = await followLogin(auth, REDIRECT);
  await new ModernTransport(url, { authProvider: provider }).finishAuth(back.searchParams.get('code'),
    back.searchParams.get('iss') ?? undefined);
  const client = new ModernClient({ name: 'oauth-v2', version: '1' }, opts);
  await client.connect(new ModernTransport(url, { authProvider: provider }));
  const res = await client.callTool({ name: 'alpha__echo', arguments: { text: 'modern' } });
  assert.match(JSON.stringify(res.content), /modern/);
  // A 2026-07-28 request for beta without mcp:admin: 403, and it steps up.
  provider.authorizationUrl = undefined;
  await assert.rejects(client.callTool({ name: 'beta__echo', arguments: { text: 'up' } }), ModernUnauthorized);
  const up = provider.authorizationUrl;
  assert.ok(up, 'sent back to the provider');
  // (v2 adds offline_access of its own.)
  for (const want of ['mcp:admin', 'mcp:tools']) assert.ok(up.searchParams.get('scope').split(' ').includes(want));
  const back2 = await followLogin(up, REDIRECT);
  await new ModernTransport(url, { authProvider: provider }).finishAuth(back2.searchParams.get('code'),
    back2.searchParams.get('iss') ?? undefined);
  const res2 = await client.callTool({ name: 'beta__echo', arguments: { text: 'modern up' } });
  assert.match(JSON.stringify(res2.content), /modern up/);
  await client.close();
});

test('the admin group maps to a client, with mcp:admin beta answers', async () => {
  const provider = new MemoryProvider();
  const url = new URL(`${base}/mcp`);
  const first = new Client({ name: 'oauth-admin', version: '1' });
  await assert.rejects(first.connect(new StreamableHTTPClientTransport(url, { authProvider: provider })),
    UnauthorizedError);
  const auth = new URL(provider.authorizationUrl);
  auth.searchParams.set('login_hint', 'admin');
  auth.searchParams.set('scope', 'mcp:tools mcp:admin');
  const back = await followLogin(auth, REDIRECT);
  await new StreamableHTTPClientTransport(url, { authProvider: provider }).finishAuth(back.searchParams.get('code'));
  const client = new Client({ name: 'oauth-admin', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }));
  const res = await client.callTool({ name: 'beta__echo', arguments: { text: 'yes' } });
  assert.match(JSON.stringify(res.content), /yes/);
  const s = JSON.parse(gw.mcpctl('-j', 'sessions')).sessions.find((x) => x.subject === 'admin');
  assert.equal(s?.named_client, 'admins');
  await client.close();
});

test('client credentials; another resource refused; the session is the subject\'s', async () => {
  const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'cc', version: '1' } } };
  const t = await clientCredentials(op.issuer, { resource: `${base}/mcp`, scope: 'mcp:tools' });
  const r = await post(gw, init, { headers: { authorization: `Bearer ${t.access_token}` } });
  assert.equal(r.status, 200);
  const sid = r.headers.get('mcp-session-id');
  // A token for another resource of the same provider.
  const other = await clientCredentials(op.issuer, { resource: 'http://127.0.0.1:9/mcp', scope: 'mcp:tools' });
  const o = await post(gw, init, { headers: { authorization: `Bearer ${other.access_token}` } });
  assert.equal(o.status, 401);
  assert.match(o.headers.get('www-authenticate'), /error="invalid_token", error_description="aud/);
  // A user's token presenting the client's session: another subject.
  const u = await clientCredentials(op.issuer, { resource: `${base}/mcp`, scope: 'mcp:tools', client: 'mcp-gateway', secret: 'mcp-gateway-secret' });
  const x = await post(gw, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, { session: sid, headers: { authorization: `Bearer ${u.access_token}` } });
  assert.equal(x.status, 404);
  // Without the scope every request needs: 403, step up.
  const weak = await clientCredentials(op.issuer, { resource: `${base}/mcp`, scope: 'mcp:read' });
  const w = await post(gw, init, { headers: { authorization: `Bearer ${weak.access_token}` } });
  assert.equal(w.status, 403);
  assert.match(w.headers.get('www-authenticate'), /error="insufficient_scope"/);
  assert.match(w.headers.get('www-authenticate'), /scope="mcp:tools"/);
});

test('a token is for its endpoint: a virtual endpoint is another resource (RFC 8707)', async () => {
  const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'ep', version: '1' } } };
  const alpha = { ...gw, url: `${base}/mcp/alpha` };
  const m = await (await fetch(`${base}/.well-known/oauth-protected-resource/mcp/alpha`)).json();
  assert.equal(m.resource, `${base}/mcp/alpha`);
  const t = await clientCredentials(op.issuer, { resource: m.resource, scope: 'mcp:tools' });
  assert.equal((await post(alpha, init, { headers: { authorization: `Bearer ${t.access_token}` } })).status, 200);
  const r = await post(gw, init, { headers: { authorization: `Bearer ${t.access_token}` } });
  assert.equal(r.status, 401);
  assert.match(r.headers.get('www-authenticate'), /error="invalid_token", error_description="aud does not hold this endpoint/);
  const main = await clientCredentials(op.issuer, { resource: `${base}/mcp`, scope: 'mcp:tools' });
  assert.equal((await post(alpha, init, { headers: { authorization: `Bearer ${main.access_token}` } })).status, 401);
  // The resource as a whole is every endpoint's.
  const whole = await clientCredentials(op.issuer, { resource: base, scope: 'mcp:tools' });
  assert.equal((await post(alpha, init, { headers: { authorization: `Bearer ${whole.access_token}` } })).status, 200);
});

test('a key rotation: the new kid waits for fresh keys, once', async () => {
  const before = (await counts(op.issuer))['/jwks'];
  const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'rot', version: '1' } } };
  const t0 = await clientCredentials(op.issuer, { resource: `${base}/mcp`, scope: 'mcp:tools' });
  const r0 = await post(gw, init, { headers: { authorization: `Bearer ${t0.access_token}` } });
  assert.equal(r0.status, 200, r0.text);
  await rotate(op.issuer, { retire: true });
  const t = await clientCredentials(op.issuer, { resource: `${base}/mcp`, scope: 'mcp:tools' });
  // A request of 256 KiB, more than the gateway holds unread while the
  // token waits: it reads the rest once the keys are in.
  const ping = { jsonrpc: '2.0', id: 2, method: 'ping', params: { _meta: { pad: 'x'.repeat(256 * 1024) } } };
  const r = await post(gw, ping, { session: r0.headers.get('mcp-session-id'), headers: { authorization: `Bearer ${t.access_token}` } });
  assert.equal(r.status, 200, r.text);
  assert.equal((await counts(op.issuer))['/jwks'], before + 1);
  // A flood of unknown kids costs the provider nothing more.
  const [h, p, s] = t.access_token.split('.');
  const head = JSON.parse(Buffer.from(h, 'base64url'));
  const rs = await Promise.all(Array.from({ length: 30 }, (_, i) => {
    const forged = `${Buffer.from(JSON.stringify({ ...head, kid: `nope-${i}` })).toString('base64url')}.${p}.${s}`;
    return post(gw, init, { headers: { authorization: `Bearer ${forged}` } });
  }));
  for (const x of rs) assert.equal(x.status, 401);
  assert.equal((await counts(op.issuer))['/jwks'], before + 1);
  assert.match(gw.log(), /refused \(kid_unknown\)/);
});

// The payload of a JWT.
const claimsOf = (t) => JSON.parse(Buffer.from(t.split('.')[1], 'base64url'));

test('a WebSocket and a standalone stream end when their token expires', async () => {
  // Tokens of 3 s, 2 s of leeway: what ends must end after 5 s, not before.
  const TTL = 3;
  const LEEWAY = 2;
  const port = await freePort();
  const b = `http://127.0.0.1:${port}`;
  const p = await startOidcProvider(['--ttl', String(TTL), '--opaque', `${b}/ws`]);
  const dir = mkdtempSync(path.join(tmpdir(), 'mcps-expiry-'));
  writeFileSync(path.join(dir, 'secret'), 'mcp-gateway-secret\n');
  let g;
  try {
    g = await startGateway({
      listen: `127.0.0.1:${port}`,
      servers: [demo('alpha')],
      globals: `oauth = { resource = ${q(b)}; leeway = ${LEEWAY}; issuers = ( { issuer = ${q(p.issuer)};
  introspection = { client_id = "mcp-gateway"; client_secret = ${q(`\${file:${path.join(dir, 'secret')}}`)}; }; } ); };`,
    });
    await g.waitFor((st) => st.issuers?.[0]?.keys > 0, 'the provider\'s keys');
    const jwt = (await clientCredentials(p.issuer, { resource: `${b}/mcp`, scope: 'mcp:tools' })).access_token;
    const opaque = (await clientCredentials(p.issuer, { resource: `${b}/ws`, scope: 'mcp:tools' })).access_token;
    assert.ok(!opaque.includes('.'), 'an opaque token');
    // The opaque token's exp is the JWT's or later: it was issued after.
    const end = (claimsOf(jwt).exp + LEEWAY) * 1000;
    const init = (id) => ({ jsonrpc: '2.0', id, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'expiry', version: '1' } } });

    // A WebSocket for each token: it works, then is closed with 1008.
    const sockets = [jwt, opaque].map(async (token) => {
      const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`, 'mcp', { headers: { authorization: `Bearer ${token}` } });
      const closed = new Promise((resolve) => ws.once('close', (code, reason) => resolve({ code, reason: String(reason), at: Date.now() })));
      await once(ws, 'open');
      ws.send(JSON.stringify(init(1)));
      const [m] = await once(ws, 'message');
      assert.ok(JSON.parse(m).result, String(m));
      return closed;
    });

    // The standalone stream of a session: its body ends, cleanly.
    const r = await post(g, init(1), { headers: { authorization: `Bearer ${jwt}` } });
    assert.equal(r.status, 200, r.text);
    const sid = r.headers.get('mcp-session-id');
    const res = await fetch(g.url, { headers: { authorization: `Bearer ${jwt}`, accept: 'text/event-stream', 'mcp-session-id': sid } });
    assert.equal(res.status, 200);
    const stream = (async () => {
      let text = '';
      for await (const chunk of res.body) text += Buffer.from(chunk).toString();
      return { text, at: Date.now() };
    })();

    stream.catch(() => {});
    // Without the expiry they would never end: fail, and clean up.
    for (const c of await within(Promise.all(sockets), 20000, 'the WebSockets to close')) {
      assert.equal(c.code, 1008);
      assert.equal(c.reason, 'token expired');
      assert.ok(c.at >= end - 250, `closed ${end - c.at} ms before the token's end`);
    }
    const s = await within(stream, 5000, 'the stream to end');
    assert.ok(s.at >= end - 250, `ended ${end - s.at} ms before the token's end`);
    const last = lastEventId(s.text);

    // The session stays: a fresh token of the same subject resumes it.
    const fresh = (await clientCredentials(p.issuer, { resource: `${b}/mcp`, scope: 'mcp:tools' })).access_token;
    const again = await fetch(g.url, { headers: { authorization: `Bearer ${fresh}`, accept: 'text/event-stream', 'mcp-session-id': sid, 'last-event-id': last } });
    assert.equal(again.status, 200);
    await again.body.cancel();
    const log = g.log();
    assert.match(log, /the token of subject mcp-cc expired: ending its standalone stream/);
    assert.match(log, /closing its WebSocket \(1008 token expired\)/);
    for (const t of [jwt, opaque, fresh]) assert.ok(!log.includes(t), 'a token in the log');
  } finally {
    await g?.stop();
    await p.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

// A promise, or a rejection after ms.
function within(promise, ms, what) {
  let timer;
  const late = new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms); });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

// The id of a stream's last event (its priming one, if that is all).
function lastEventId(text) {
  const ids = [...text.matchAll(/^id: (.*)$/gm)].map((m) => m[1]);
  assert.ok(ids.length > 0, `no event id in ${text}`);
  return ids[ids.length - 1];
}
