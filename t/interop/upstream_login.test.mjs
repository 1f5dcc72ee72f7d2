// SPDX-License-Identifier: ISC
// The gateway logs in to a remote upstream as a user (issue 23: mcpctl
// login, authorization code with PKCE), against peers we did not write: an
// MCP server of the official SDK behind its own requireBearerAuth
// (t/fixtures/oauth-upstream.mjs) and npm oidc-provider as the
// authorization server (t/fixtures/oidc-provider.mjs), whose login and
// consent the test goes through as a browser would.  With no token the
// upstream waits in the state login and calls fail at once saying what to
// run; mcpctl login prints the URL, the browser comes back to the
// gateway's /oauth/callback (or the address is pasted into mcpctl), and
// the upstream is ready with the user's token; the access token is
// refreshed with the refresh token (rotated) as it runs out; the tokens
// survive a restart of the daemon (sealed under state_dir/oauth);
// mcpctl tokens lists them without a token; revoked, the upstream needs a
// login again.  No token is in the log or in mcpctl's answers.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startGateway, startNodeServer, rawSession, post, q, sleep, srcdir } from '../lib/gateway.mjs';
import { startOidcProvider, counts, JWT_SHOWN } from '../lib/oidc.mjs';

const fixture = path.join(srcdir, 't/fixtures/oauth-upstream.mjs');
let op;
let up;
let dir;
const stops = [];

before(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'mcps-uplogin-'));
  op = await startOidcProvider(['--ttl', '6', '--refresh']);
  up = await startNodeServer([fixture, '--issuer', op.issuer, '--scopes', 'mcp:tools']);
  up.url = `http://127.0.0.1:${up.port}/mcp`;
  stops.push(() => up.stop());
});
after(async () => {
  for (const s of stops.reverse()) await s().catch(() => {});
  await op?.stop();
  rmSync(dir, { recursive: true, force: true });
});

// A gateway whose upstream "remote" logs in as the provider's public
// client mcp-app (pre-registered: oidc-provider's registration refuses
// the resource's scopes), its tokens kept under stateDir.
async function gateway(stateDir) {
  const gw = await startGateway({
    globals: stateDir ? `state_dir = ${q(stateDir)};` : '',
    servers: [`{ name = "remote"; transport = "http"; url = ${q(up.url)}; oauth = { client_id = "mcp-app"; }; }`],
    wait: false,
  });
  stops.push(() => gw.stop());
  return gw;
}

async function call(gw) {
  const session = await rawSession(gw);
  const r = await post(gw, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'remote__whoami', arguments: {} } }, { session });
  assert.equal(r.status, 200, r.text);
  return r.json.find ? r.json.find((m) => m.id === 2) : r.json;
}

async function state(gw, want, ms = 20000) {
  return gw.waitFor((s) => s.upstreams.find((u) => u.name === 'remote')?.state === want, `remote ${want}`, ms);
}

// Neither a token nor a code is in the log or in what mcpctl said.
function noTokens(gw, ...texts) {
  for (const t of [gw.log(), ...texts]) {
    assert.doesNotMatch(t, JWT_SHOWN, 'a JWT was shown');
    assert.doesNotMatch(t, /refresh_token"?\s*[:=]\s*"?[A-Za-z0-9_-]{20,}/, 'a refresh token was shown');
  }
  // The authorization URL goes to mcpctl alone, never to the log.
  assert.doesNotMatch(gw.log(), /[?&]state=[A-Za-z0-9_-]{16,}/, 'an authorization URL was logged');
}

test('login, call, refresh, restart, tokens, revoke', async () => {
  const stateDir = path.join(dir, 'a');
  rmSync(stateDir, { recursive: true, force: true });
  await import('node:fs').then((fs) => fs.mkdirSync(stateDir, { mode: 0o700 }));
  let gw = await gateway(stateDir);
  const s = await state(gw, 'login');
  const remote = s.upstreams.find((u) => u.name === 'remote');
  assert.equal(remote.login_needed, 'mcpctl login remote');
  // Its only upstream waits for a login: status exits 3 (not ready).
  let text;
  try { text = gw.mcpctl('status'); } catch (e) { assert.equal(e.status, 3); text = e.stdout; }
  assert.match(text, /upstream remote needs a login: run mcpctl login remote/);

  // Calls fail at once, saying what to run.
  let msg = await call(gw);
  assert.ok(msg.error, JSON.stringify(msg));
  assert.match(msg.error.message, /needs a login: mcpctl login remote/);

  const r = await gw.login('remote');
  assert.equal(r.code, 0, `${r.stdout}${r.stderr}\n${gw.log()}`);
  const url = new URL(r.stdout.split('\n')[0]);
  assert.equal(url.searchParams.get('code_challenge_method'), 'S256');
  assert.equal(url.searchParams.get('client_id'), 'mcp-app');
  assert.equal(url.searchParams.get('resource'), up.url);
  assert.match(url.searchParams.get('redirect_uri'), /^http:\/\/127\.0\.0\.1:\d+\/oauth\/callback$/);
  assert.match(r.stdout, /logged in to upstream remote/);
  await state(gw, 'ready');
  msg = await call(gw);
  assert.ok(msg.result, JSON.stringify(msg));
  const who = JSON.parse(msg.result.content[0].text);
  assert.equal(who.client_id, 'mcp-app');
  assert.equal(who.sub, 'test-user');
  const before = await counts(op.issuer);

  // The 6 s token runs out: refreshed with the refresh token.
  await sleep(9000);
  msg = await call(gw);
  assert.ok(msg.result, `${JSON.stringify(msg)}\n${gw.log()}`);
  const after1 = await counts(op.issuer);
  // mcp-app is public: a token request now can only be a refresh.
  assert.ok((after1['/token'] ?? 0) > (before['/token'] ?? 0),
    `no refresh: ${JSON.stringify(before)} -> ${JSON.stringify(after1)}\n${gw.log()}`);

  // A provider shedding load (429) refuses a refresh: the refresh token
  // is kept for the next try, not dropped for a login.
  await fetch(`${op.issuer}/admin/busy?n=1`, { method: 'POST' });
  await sleep(7000);
  // Calls in the 5 s after the refused refresh fail without asking again.
  let again;
  for (let i = 0; i < 15 && !(again = await call(gw)).result; i++) await sleep(1000);
  assert.ok(again.result, `${JSON.stringify(again)}\n${gw.log()}`);
  assert.match(gw.log(), /upstream remote: oauth: token at \S+: HTTP 429/);
  assert.doesNotMatch(gw.log(), /the refresh was refused/);

  // mcpctl tokens: what is held, never the token.
  const listed = gw.mcpctl('tokens');
  assert.match(listed, /remote\s+gateway\s+valid/);
  const json = gw.mcpctl('-j', 'tokens');
  noTokens(gw, listed, json, r.stdout, r.stderr);
  assert.ok(readdirSync(path.join(stateDir, 'oauth')).includes('key'));

  // A new daemon on the same state directory needs no login.
  await gw.stop();
  gw = await gateway(stateDir);
  await state(gw, 'ready');
  msg = await call(gw);
  assert.ok(msg.result, JSON.stringify(msg));

  // Revoked: a login is needed again; pasting the address works too.
  const rv = gw.mcpctl('tokens', 'revoke', 'remote');
  assert.match(rv, /forgotten/);
  await state(gw, 'login');
  msg = await call(gw);
  assert.match(msg.error?.message ?? '', /needs a login/);
  const r2 = await gw.login('remote', { paste: true });
  assert.equal(r2.code, 0, `${r2.stdout}${r2.stderr}\n${gw.log()}`);
  await state(gw, 'ready');
  msg = await call(gw);
  assert.ok(msg.result, JSON.stringify(msg));
  noTokens(gw, r2.stdout, r2.stderr);
});

test('a redirect that does not belong to the login is refused; the login goes on', async () => {
  const gw = await gateway();
  await state(gw, 'login');
  // A tampered state, then a replayed one: 400, nothing exchanged.
  const r = await gw.login('remote', {
    browse: async (authUrl, redirectUri) => {
      const bad = new URL(redirectUri);
      bad.search = 'code=forged&state=not-the-state';
      const res = await fetch(bad);
      assert.equal(res.status, 400);
      const { followLogin } = await import('../lib/gateway.mjs');
      return followLogin(authUrl, redirectUri);
    },
  });
  assert.equal(r.code, 0, `${r.stdout}${r.stderr}\n${gw.log()}`);
  assert.match(gw.log(), /oauth callback: no login waits for its state/);
  await state(gw, 'ready');
  // No state directory: held in memory, and said so.
  assert.match(gw.mcpctl('tokens'), /memory only/);
});

// Attacks on the login, each refused with a clear error and a log line,
// the upstream left waiting for a proper one: a response whose state is
// not the login's; a redirect URI changed in the authorization URL (the
// server sends the code elsewhere; the gateway exchanges it with its own
// redirect URI, which the server refuses); a code issued to another login
// (its PKCE verifier is not this one's).
test('tampered state, redirect URI and code are refused', async () => {
  const gw = await gateway();
  await state(gw, 'login');
  const follow = async (authUrl, redirectUri) => {
    const { followLogin } = await import('../lib/gateway.mjs');
    return followLogin(authUrl, redirectUri);
  };

  // A pasted response with another state.
  let r = await gw.login('remote', {
    paste: true,
    browse: async (u, back) => {
      const b = await follow(u, back);
      b.searchParams.set('state', 'x'.repeat(43));
      return b;
    },
  });
  assert.equal(r.code, 1, r.stdout + r.stderr);
  assert.match(r.stderr, /state/);

  // The redirect URI swapped for another the client has registered.
  r = await gw.login('remote', {
    paste: true,
    browse: async (u) => {
      const t = new URL(u);
      t.searchParams.set('redirect_uri', 'http://127.0.0.1:9/callback');
      return follow(t, 'http://127.0.0.1:9/callback');
    },
  });
  assert.equal(r.code, 1, r.stdout + r.stderr);
  assert.match(r.stderr, /invalid_grant/);

  // A code from a login that was then replaced.
  let stolen;
  await gw.login('remote', {
    browse: async (u, back) => {
      stolen = (await follow(u, back)).searchParams.get('code');
      throw new Error('abandoned');
    },
  }).catch(() => {});
  r = await gw.login('remote', {
    paste: true,
    browse: async (u, back) => {
      const b = await follow(u, back);
      b.searchParams.set('code', stolen);
      return b;
    },
  });
  assert.equal(r.code, 1, r.stdout + r.stderr);
  assert.match(r.stderr, /invalid_grant/);
  assert.equal(gw.upstream('remote').state, 'login');
  assert.match(gw.log(), /login failed/);

  // And a proper login still works.
  r = await gw.login('remote');
  assert.equal(r.code, 0, `${r.stdout}${r.stderr}\n${gw.log()}`);
  await state(gw, 'ready');
});

// The MCP authorization specification: a server whose metadata does not
// list S256 in code_challenge_methods_supported gets no login (PKCE
// could not be relied on).
test('an authorization server that does not list S256: no login', async () => {
  const op2 = await startOidcProvider(['--hide-pkce']);
  stops.push(() => op2.stop());
  const up2 = await startNodeServer([fixture, '--issuer', op2.issuer, '--scopes', 'mcp:tools']);
  stops.push(() => up2.stop());
  const gw = await startGateway({
    servers: [`{ name = "remote"; transport = "http"; url = ${q(`http://127.0.0.1:${up2.port}/mcp`)}; oauth = { client_id = "mcp-app"; }; }`],
    wait: false,
  });
  stops.push(() => gw.stop());
  await state(gw, 'login');
  await assert.rejects(gw.login('remote'), /does not list S256 in code_challenge_methods_supported/);
  assert.equal(gw.upstream('remote').state, 'login');
  assert.equal((await counts(op2.issuer))['/auth'] ?? 0, 0, 'the authorization endpoint was visited');
});

// mcpctl tokens revoke while a refresh is at the token endpoint: the
// tokens it brings are revoked and forgotten too, not stored again.  A
// provider of its own, so that no other gateway's refresh is counted.
test('a revocation during a refresh drops what the refresh brings', async () => {
  const op3 = await startOidcProvider(['--ttl', '6', '--refresh']);
  stops.push(() => op3.stop());
  const up3 = await startNodeServer([fixture, '--issuer', op3.issuer, '--scopes', 'mcp:tools']);
  stops.push(() => up3.stop());
  const stateDir = path.join(dir, 'r');
  rmSync(stateDir, { recursive: true, force: true });
  await import('node:fs').then((fs) => fs.mkdirSync(stateDir, { mode: 0o700 }));
  const gw = await startGateway({
    globals: `state_dir = ${q(stateDir)};`,
    servers: [`{ name = "remote"; transport = "http"; url = ${q(`http://127.0.0.1:${up3.port}/mcp`)}; oauth = { client_id = "mcp-app"; }; }`],
    wait: false,
  });
  stops.push(() => gw.stop());
  await state(gw, 'login');
  const r = await gw.login('remote');
  assert.equal(r.code, 0, `${r.stdout}${r.stderr}\n${gw.log()}`);
  await state(gw, 'ready');
  const before = await counts(op3.issuer);
  await fetch(`${op3.issuer}/admin/slow?ms=3000`, { method: 'POST' });
  // The 6 s token is renewed a little before it runs out.
  for (let i = 0; i < 200 && ((await counts(op3.issuer))['/token'] ?? 0) === (before['/token'] ?? 0); i++) await sleep(50);
  assert.ok(((await counts(op3.issuer))['/token'] ?? 0) > (before['/token'] ?? 0), 'no refresh');
  assert.match(gw.mcpctl('tokens', 'revoke', 'remote'), /forgotten/);
  for (let i = 0; i < 100 && ((await counts(op3.issuer))['/token/revocation'] ?? 0) === (before['/token/revocation'] ?? 0); i++) await sleep(50);
  assert.ok(((await counts(op3.issuer))['/token/revocation'] ?? 0) > (before['/token/revocation'] ?? 0), `not revoked\n${gw.log()}`);
  await state(gw, 'login');
  assert.doesNotMatch(gw.mcpctl('tokens'), /remote\s+gateway\s+valid/);

  // The same during a login's code exchange: the login fails, what it
  // brought is revoked, nothing is stored.
  const mid = await counts(op3.issuer);
  await fetch(`${op3.issuer}/admin/slow?ms=3000`, { method: 'POST' });
  const login = gw.login('remote');
  for (let i = 0; i < 200 && ((await counts(op3.issuer))['/token'] ?? 0) === (mid['/token'] ?? 0); i++) await sleep(50);
  assert.ok(((await counts(op3.issuer))['/token'] ?? 0) > (mid['/token'] ?? 0), 'no exchange');
  assert.match(gw.mcpctl('tokens', 'revoke', 'remote'), /forgotten/);
  // mcpctl login fails (a promise kept with its exit code, or refused).
  const lr = await login.catch((e) => ({ code: 1, stderr: e.message }));
  assert.equal(lr.code, 1);
  assert.match(lr.stderr, /revoked \(mcpctl tokens revoke\) during the exchange/);
  for (let i = 0; i < 100 && ((await counts(op3.issuer))['/token/revocation'] ?? 0) === (mid['/token/revocation'] ?? 0); i++) await sleep(50);
  assert.ok(((await counts(op3.issuer))['/token/revocation'] ?? 0) > (mid['/token/revocation'] ?? 0), `not revoked\n${gw.log()}`);
  await sleep(500);
  assert.equal(gw.upstream('remote').state, 'login');
  assert.doesNotMatch(gw.mcpctl('tokens'), /remote\s+gateway\s+valid/);
});

// A client registered dynamically (RFC 7591) that the authorization
// server no longer takes (purged, or its secret expired): the refresh gets
// invalid_client, and the next login registers again instead of sending
// the browser with a client_id the server refuses, for ever.
test('a registration the server forgot is made again at the next login', async () => {
  const op4 = await startOidcProvider(['--ttl', '6', '--refresh']);
  stops.push(() => op4.stop());
  const up4 = await startNodeServer([fixture, '--issuer', op4.issuer, '--scopes', 'mcp:tools']);
  stops.push(() => up4.stop());
  const gw = await startGateway({
    servers: [`{ name = "remote"; transport = "http"; url = ${q(`http://127.0.0.1:${up4.port}/mcp`)}; }`],
    wait: false,
  });
  stops.push(() => gw.stop());
  await state(gw, 'login');
  const r = await gw.login('remote');
  assert.equal(r.code, 0, `${r.stdout}${r.stderr}\n${gw.log()}`);
  const first = new URL(r.stdout.split('\n')[0]).searchParams.get('client_id');
  assert.notEqual(first, 'mcp-app');
  assert.equal((await counts(op4.issuer))['/reg'], 1);
  await state(gw, 'ready');
  let msg = await call(gw);
  assert.ok(msg.result, JSON.stringify(msg));

  const f = await (await fetch(`${op4.issuer}/admin/forget-clients`, { method: 'POST' })).json();
  assert.deepEqual(f.forgotten, [first]);
  // The 6 s token runs out; its refresh is refused for the client.
  await state(gw, 'login', 30000);
  assert.match(gw.log(), /invalid_client.*registered again at the next login/);
  const r2 = await gw.login('remote');
  assert.equal(r2.code, 0, `${r2.stdout}${r2.stderr}\n${gw.log()}`);
  const second = new URL(r2.stdout.split('\n')[0]).searchParams.get('client_id');
  assert.notEqual(second, first);
  assert.equal((await counts(op4.issuer))['/reg'], 2);
  await state(gw, 'ready');
  msg = await call(gw);
  assert.ok(msg.result, JSON.stringify(msg));
  assert.equal(JSON.parse(msg.result.content[0].text).client_id, second);
});
