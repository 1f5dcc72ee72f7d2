// SPDX-License-Identifier: ISC
// The gateway as an OAuth client of a remote upstream (issue 23, the
// gateway-wide identity by client credentials), against peers we did not
// write: an MCP server of the official SDK protected by its own
// requireBearerAuth and mcpAuthMetadataRouter (t/fixtures/oauth-upstream.mjs),
// its authorization server npm oidc-provider (t/fixtures/oidc-provider.mjs).
// The gateway discovers everything from the upstream's 401 (RFC 9728, then
// RFC 8414), gets a token for the upstream's URL (RFC 8707) with the
// pre-registered client and its secret from a file, calls through, renews
// the token before it expires, and gets another after the upstream refuses
// one; neither the token nor the secret is in the log.  Refused, each with
// its log line and no token request made: protected resource metadata for
// another resource, server metadata whose token endpoint is on another
// host, metadata past 64 KiB.  A wrong secret says what the server said,
// failed at once (not restarted in vain); an upstream that needs a user's
// login waits in the state login (/readyz held back only if required),
// and calls to it fail at once saying what to run (the login itself:
// upstream_login.test.mjs).  sse and ws upstreams are clients as http ones
// are (the fixture's --sse: the SDK's SSEServerTransport behind the same
// requireBearerAuth; --ws: a server of npm ws checking the token at the
// upgrade, refusing it with 401 and the same WWW-Authenticate): the GET or
// the upgrade refused, the worker gets a token and connects again, the
// token is renewed before it runs out (none is ever refused), a client the
// server refuses fails at once, and a login over sse goes from the state
// login through mcpctl login to a call with the user's token.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startGateway, startNodeServer, rawSession, post, q, sleep, srcdir, demo } from '../lib/gateway.mjs';
import { startOidcProvider } from '../lib/oidc.mjs';

const fixture = path.join(srcdir, 't/fixtures/oauth-upstream.mjs');
let op;
let dir;
const stops = [];

before(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'mcps-upoauth-'));
  writeFileSync(path.join(dir, 'secret'), 'mcp-cc-secret\n', { mode: 0o600 });
  writeFileSync(path.join(dir, 'wrong'), 'not-the-secret\n', { mode: 0o600 });
  op = await startOidcProvider(['--ttl', '8']);
});
after(async () => {
  for (const s of stops.reverse()) await s().catch(() => {});
  await op?.stop();
  rmSync(dir, { recursive: true, force: true });
});

// The fixture, over http, or with '--sse' or '--ws' in args over those.
async function upstream(args = []) {
  const srv = await startNodeServer([fixture, '--issuer', op.issuer, '--scopes', 'mcp:tools', ...args]);
  stops.push(() => srv.stop());
  if (args.includes('--ws')) srv.url = `ws://127.0.0.1:${srv.port}/ws`;
  else srv.url = `http://127.0.0.1:${srv.port}/${args.includes('--sse') ? 'sse' : 'mcp'}`;
  srv.seen = async () => (await fetch(`http://127.0.0.1:${srv.port}/admin/seen`)).json();
  return srv;
}

const transport = (url) => (url.startsWith('ws') ? 'ws' : url.endsWith('/sse') ? 'sse' : 'http');
const server = (url, oauth) => `{ name = "remote"; transport = "${transport(url)}"; url = ${q(url)}; ${oauth} }`;
const cc = (secretFile = 'secret') => `oauth = { client_id = "mcp-cc"; client_secret = ${q(`\${file:${path.join(dir, secretFile)}}`)}; grant = "client_credentials"; };`;

async function gateway(url, oauth, wait = true, others = []) {
  const gw = await startGateway({ servers: [server(url, oauth), ...others], wait });
  stops.push(() => gw.stop());
  return gw;
}

// Call whoami in a new session: its answer.
async function call(gw) {
  const session = await rawSession(gw);
  const r = await post(gw, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'remote__whoami', arguments: {} } }, { session });
  assert.equal(r.status, 200, r.text);
  return r.json.find ? r.json.find((m) => m.id === 2) : r.json;
}

async function whoami(gw) {
  const msg = await call(gw);
  assert.ok(msg.result, `${JSON.stringify(msg)}\n${gw.log()}`);
  return JSON.parse(msg.result.content[0].text);
}

// Wait for a line in the gateway's log.
async function logHas(gw, re, ms = 20000) {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (re.test(gw.log())) return;
    await sleep(100);
  }
  assert.fail(`no ${re} in the log:\n${gw.log()}`);
}

function noSecrets(gw) {
  const log = gw.log();
  assert.ok(!log.includes('mcp-cc-secret'), 'the client secret is in the log');
  assert.ok(!log.includes('not-the-secret'), 'the client secret is in the log');
  assert.ok(!/eyJ[A-Za-z0-9_-]{10,}\./.test(log), 'a token is in the log');
}

// Over http the first POST is refused, over sse the event stream's GET,
// over ws the upgrade; ws per session, so that each session's upgrade
// carries the token then held.
for (const [what, args, settings] of [
  ['', [], ''],
  ['sse, ', ['--sse'], ''],
  ['ws, ', ['--ws'], 'isolation = "per-session";'],
]) {
  test(`${what}client credentials: discovered from the 401, a call, renewal`, async () => {
    const up = await upstream(args);
    const gw = await gateway(up.url, `${cc()} ${settings}`);
    assert.deepEqual(await whoami(gw), { client_id: 'mcp-cc', sub: 'mcp-cc' });
    await logHas(gw, /oauth: a token from http:\/\/127\.0\.0\.1:\d+ \(client credentials, 8 s, scope mcp:tools\)/);
    // The first request or connect went without a token, every later one with it.
    const seen = await up.seen();
    assert.equal(seen.without, 1, JSON.stringify(seen));
    assert.equal(seen.refused, 0);
    assert.equal(gw.upstream('remote').restarts, 0);
    // Renewed before the 8 s are out (at 5 s): calls keep working past them.
    await sleep(9000);
    assert.deepEqual(await whoami(gw), { client_id: 'mcp-cc', sub: 'mcp-cc' });
    assert.ok(gw.log().match(/oauth: a token from/g).length >= 2, gw.log());
    const later = await up.seen();
    assert.equal(later.refused, 0, JSON.stringify(later));
    assert.equal(later.without, 1, JSON.stringify(later));
    noSecrets(gw);
  });
}

test('the secret from the daemon\'s environment (${env:}, expanded by the supervisor)', async () => {
  process.env.MCPS_TEST_UPOAUTH_SECRET = 'mcp-cc-secret';
  const up = await upstream();
  const gw = await gateway(up.url, 'oauth = { client_id = "mcp-cc"; client_secret = "${env:MCPS_TEST_UPOAUTH_SECRET}"; grant = "client_credentials"; };');
  delete process.env.MCPS_TEST_UPOAUTH_SECRET;
  assert.deepEqual(await whoami(gw), { client_id: 'mcp-cc', sub: 'mcp-cc' });
  noSecrets(gw);
});

// Over sse the stream stays; the POST refused is sent again with the new token.
for (const [what, args] of [['', []], ['sse, ', ['--sse']]]) {
  test(`${what}a token the upstream refuses is replaced, and the call goes through`, async () => {
    // The upstream revokes the token the gateway holds.
    const up = await upstream(args);
    const gw = await gateway(up.url, cc());
    await whoami(gw);
    const r = await fetch(`http://127.0.0.1:${up.port}/admin/revoke`, { method: 'POST' });
    assert.equal(r.status, 200);
    assert.deepEqual(await whoami(gw), { client_id: 'mcp-cc', sub: 'mcp-cc' });
    await logHas(gw, /the upstream refused the token; getting another/);
    assert.ok((await up.seen()).refused >= 1);
    assert.equal(gw.upstream('remote').restarts, 0);
    noSecrets(gw);
  });
}

// The client's secret goes to the configured issuer alone: an upstream
// that names another authorization server gets no token request.
// A provider of its own (tokens for 5 minutes), so that no other test's
// gateway renewing its token is counted.
test('issuer: the configured authorization server, else none', async () => {
  const { counts } = await import('../lib/oidc.mjs');
  const op2 = await startOidcProvider();
  stops.push(() => op2.stop());
  const up = await startNodeServer([fixture, '--issuer', op2.issuer, '--scopes', 'mcp:tools']);
  stops.push(() => up.stop());
  up.url = `http://127.0.0.1:${up.port}/mcp`;
  const secret = `client_secret = ${q(`\${file:${path.join(dir, 'secret')}}`)}`;
  const ok = await gateway(up.url, `oauth = { client_id = "mcp-cc"; ${secret}; issuer = ${q(op2.issuer)}; grant = "client_credentials"; };`);
  assert.deepEqual(await whoami(ok), { client_id: 'mcp-cc', sub: 'mcp-cc' });
  const before = (await counts(op2.issuer))['/token'] ?? 0;
  const other = await gateway(up.url, `oauth = { client_id = "mcp-cc"; ${secret}; issuer = "https://login.example/tenant"; grant = "client_credentials"; };`, false);
  await logHas(other, /resource metadata at \S+ refused: the resource metadata names http:\/\/127\.0\.0\.1:\d+, not the configured issuer/);
  await other.waitFor((st) => /not the configured issuer/.test(st.upstreams[0].last_error ?? ''), 'the upstream\'s error');
  assert.equal((await counts(op2.issuer))['/token'] ?? 0, before, 'a token was asked for');
  noSecrets(other);
});

test('a wrong secret: the server\'s error, no call, failed at once', async () => {
  const up = await upstream();
  const gw = await gateway(up.url, cc('wrong'), false);
  await logHas(gw, /oauth: token: the token endpoint answered invalid_client \(HTTP 401\)/);
  // Starting again cannot fix a secret: failed, not restarted.
  const s = await gw.waitFor((st) => st.upstreams[0].state === 'failed', 'failed');
  assert.match(s.upstreams[0].last_error, /invalid_client/);
  assert.equal(s.upstreams[0].failures, 1);
  noSecrets(gw);
});

test('an upstream that needs a login waits for one; readiness only if required', async () => {
  const up = await upstream();
  const gw = await gateway(up.url, '', false, [demo('alpha')]);
  const s = await gw.waitFor((st) => st.upstreams.find((u) => u.name === 'remote').state === 'login', 'login');
  const remote = s.upstreams.find((u) => u.name === 'remote');
  assert.match(remote.last_error, /login needed: run mcpctl login remote/);
  assert.equal(remote.login_needed, 'mcpctl login remote');
  assert.equal((await up.seen()).with, 0);
  await gw.waitFor((st) => st.upstreams.find((u) => u.name === 'alpha').state === 'ready', 'alpha ready');
  assert.equal((await fetch(`${gw.base}/readyz`)).status, 200);
  // It waits: not restarted in vain.
  await sleep(1500);
  assert.equal(gw.upstream('remote').restarts, 0);
  const req = await gateway(up.url, 'required = true;', false, [demo('alpha')]);
  await req.waitFor((st) => st.upstreams.find((u) => u.name === 'remote').state === 'login', 'login');
  const r = await fetch(`${req.base}/readyz`);
  assert.equal(r.status, 503);
  assert.match(await r.text(), /required upstream remote needs a login \(mcpctl login remote\)/);
});

test('a call refused for want of a login fails, and the next at once', async () => {
  const up = await upstream(['--tools-only']);
  const gw = await gateway(up.url, '');
  const session = await rawSession(gw);
  const r = await post(gw, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'remote__whoami', arguments: {} } }, { session });
  const msg = Array.isArray(r.json) ? r.json.find((m) => m.id === 2) : r.json;
  assert.match(msg.error.message, /needs a login: mcpctl login remote/);
  await gw.waitFor((st) => st.upstreams[0].state === 'login', 'login');
  const seen = await up.seen();
  const r2 = await post(gw, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'remote__whoami', arguments: {} } }, { session });
  const msg2 = Array.isArray(r2.json) ? r2.json.find((m) => m.id === 3) : r2.json;
  assert.match(msg2.error.message, /needs a login: mcpctl login remote/);
  assert.deepEqual(await up.seen(), seen, 'the second call reached the upstream');
});

// A server of the test's own: protected resource and server metadata, as a
// hostile upstream would serve them; counts token requests.
async function hostile(handler) {
  const tokens = { count: 0 };
  const srv = http.createServer((req, res) => {
    if (req.url.endsWith('/token')) tokens.count += 1;
    handler(req, res, srv);
  });
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  stops.push(() => new Promise((r) => srv.close(r)));
  srv.base = `http://127.0.0.1:${srv.address().port}`;
  srv.tokens = tokens;
  return srv;
}
const json = (res, o) => { res.writeHead(200, { 'content-type': 'application/json' }); res.end(JSON.stringify(o)); };

test('refused: metadata for another resource', async () => {
  const up = await upstream(['--resource', 'http://127.0.0.1:1/elsewhere']);
  const gw = await gateway(up.url, cc(), false);
  await logHas(gw, /resource metadata at http:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-protected-resource\/mcp refused: the resource metadata is for http:\/\/127\.0\.0\.1:1\/elsewhere, not this upstream/);
  assert.equal((await up.seen()).with, 0);
});

test('refused: a token endpoint on another host', async () => {
  let upUrl;
  const evil = await hostile((req, res, srv) => {
    if (req.url === '/prm') json(res, { resource: upUrl, authorization_servers: [srv.base] });
    else if (req.url === '/.well-known/oauth-authorization-server') {
      json(res, { issuer: srv.base, token_endpoint: `http://localhost:${srv.address().port}/token`, authorization_endpoint: `${srv.base}/auth` });
    } else { res.writeHead(404); res.end(); }
  });
  const up = await upstream(['--resource-metadata', `${evil.base}/prm`]);
  upUrl = up.url;
  const gw = await gateway(up.url, cc(), false);
  await logHas(gw, /server metadata at http:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-authorization-server refused: token_endpoint http:\/\/localhost:\d+\/token is not on the issuer's host/);
  await sleep(300);
  assert.equal(evil.tokens.count, 0);
  noSecrets(gw);
});

test('refused: metadata past 64 KiB', async () => {
  const evil = await hostile((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ pad: 'x'.repeat(70000) }));
  });
  const up = await upstream(['--resource-metadata', `${evil.base}/prm`]);
  const gw = await gateway(up.url, cc(), false);
  await logHas(gw, /resource metadata at http:\/\/127\.0\.0\.1:\d+\/prm: over 65536 bytes/);
  assert.equal(evil.tokens.count, 0);
});

test('ws, a wrong secret: the server\'s error, failed at once', async () => {
  const up = await upstream(['--ws']);
  const gw = await gateway(up.url, cc('wrong'), false);
  await logHas(gw, /oauth: token: the token endpoint answered invalid_client \(HTTP 401\)/);
  const s = await gw.waitFor((st) => st.upstreams[0].state === 'failed', 'failed');
  assert.match(s.upstreams[0].last_error, /the WebSocket upgrade: HTTP 401 from ws:\/\/127\.0\.0\.1:\d+\/ws: .*invalid_client/);
  assert.equal(s.upstreams[0].failures, 1);
  assert.equal((await up.seen()).with, 0);
  noSecrets(gw);
});

test('sse, a login: the state login, mcpctl login, ready, a call', async () => {
  const up = await upstream(['--sse']);
  const gw = await gateway(up.url, 'oauth = { client_id = "mcp-app"; };', false);
  const s = await gw.waitFor((st) => st.upstreams[0].state === 'login', 'login');
  assert.equal(s.upstreams[0].login_needed, 'mcpctl login remote');
  assert.match(s.upstreams[0].last_error, /login needed: run mcpctl login remote/);
  // It waits: not restarted in vain; calls fail at once saying why.
  await sleep(1000);
  assert.equal(gw.upstream('remote').restarts, 0);
  const refused = await call(gw);
  assert.match(refused.error?.message ?? '', /needs a login: mcpctl login remote/, JSON.stringify(refused));
  const r = await gw.login('remote');
  assert.equal(r.code, 0, `${r.stdout}${r.stderr}\n${gw.log()}`);
  const url = new URL(r.stdout.split('\n')[0]);
  assert.equal(url.searchParams.get('resource'), up.url);
  assert.equal(url.searchParams.get('code_challenge_method'), 'S256');
  await gw.waitFor((st) => st.upstreams[0].state === 'ready', 'ready');
  assert.deepEqual(await whoami(gw), { client_id: 'mcp-app', sub: 'test-user' });
  assert.equal((await up.seen()).refused, 0);
  noSecrets(gw);
});
