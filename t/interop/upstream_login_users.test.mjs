// SPDX-License-Identifier: ISC
// Per-user identities at a remote upstream (issue 23: oauth.identity =
// "per-user"), against peers we did not write: an MCP server of the
// official SDK behind its own requireBearerAuth (t/fixtures/
// oauth-upstream.mjs, whose tool whoami answers the token's sub) and npm
// oidc-provider as the authorization server (t/fixtures/oidc-provider.mjs,
// whose login page logs in the user the URL's login_hint names).  Two
// named clients of the gateway, alice and bob, each call whoami: each is
// asked to log in (a client without URL elicitation gets -32042 with the
// URL), each gets their own sub and never the other's; a second call
// needs no login; mcpctl tokens lists both; revoking bob's asks bob again
// and leaves alice alone.  Clients of the official SDK that declare URL
// elicitation are asked by elicitation/create (their handler plays the
// user), the call waits and goes on with the token, and
// notifications/elicitation/complete follows; a declined elicitation
// fails the call cleanly.  No token is in the log or in mcpctl's answers.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startGateway, startNodeServer, post, q, sleep, srcdir, followLogin, freePort } from '../lib/gateway.mjs';
import { startOidcProvider, counts, authorizationCode, JWT_SHOWN } from '../lib/oidc.mjs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, ElicitationCompleteNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

const fixture = path.join(srcdir, 't/fixtures/oauth-upstream.mjs');
const TOKENS = {
  alice: 'alice-0123456789abcdef0123456789',
  bob: 'bob-0123456789abcdef0123456789ab',
  carol: 'carol-0123456789abcdef012345678',
};
let op;
let up;
let dir;
const stops = [];

before(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'mcps-upusers-'));
  op = await startOidcProvider();
  up = await startNodeServer([fixture, '--issuer', op.issuer, '--scopes', 'mcp:tools']);
  up.url = `http://127.0.0.1:${up.port}/mcp`;
  stops.push(() => up.stop());
});
after(async () => {
  for (const s of stops.reverse()) await s().catch(() => {});
  await op?.stop();
  rmSync(dir, { recursive: true, force: true });
});

// A gateway with two named clients and the per-user upstream "users".
async function gateway(stateDir) {
  const gw = await startGateway({
    globals: `state_dir = ${q(stateDir)};\nclients = (\n` +
      `  { name = "alice"; token = ${q(TOKENS.alice)}; },\n` +
      `  { name = "bob"; token = ${q(TOKENS.bob)}; },\n` +
      `  { name = "carol"; token = ${q(TOKENS.carol)}; }\n);`,
    servers: [`{ name = "users"; transport = "http"; url = ${q(up.url)}; oauth = { client_id = "mcp-app"; identity = "per-user"; }; }`],
  });
  stops.push(() => gw.stop());
  return gw;
}

// A raw session of a named client.
async function session(gw, who, capabilities = {}) {
  const headers = { authorization: `Bearer ${TOKENS[who]}` };
  const r = await post(gw, {
    jsonrpc: '2.0', id: 1, method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities, clientInfo: { name: `raw-${who}`, version: '1' } },
  }, { headers });
  assert.equal(r.status, 200, r.text);
  const sid = r.headers.get('mcp-session-id');
  const n = await post(gw, { jsonrpc: '2.0', method: 'notifications/initialized' }, { session: sid, headers });
  assert.equal(n.status, 202);
  return { sid, headers };
}

let nextId = 10;
async function whoami(gw, s) {
  const id = nextId++;
  const r = await post(gw, { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'users__whoami', arguments: {} } },
    { session: s.sid, headers: s.headers });
  assert.equal(r.status, 200, r.text);
  return Array.isArray(r.json) ? r.json.find((m) => m.id === id) : r.json;
}

// The gateway's page at a login's link: prove to be `as` with their
// bearer token (the form's fields, posted from the page's origin as a
// browser does); the answer, not followed.
async function prove(link, as, origin = new URL(link).origin) {
  const page = await fetch(link);
  const html = await page.text();
  assert.equal(page.status, 200, html);
  assert.match(html, /<form method="post"/);
  assert.match(page.headers.get('content-security-policy'), /frame-ancestors 'none'/);
  assert.equal(page.headers.get('cache-control'), 'no-store');
  // A browser then sends the form's Origin (no-referrer would make it "null").
  assert.equal(page.headers.get('referrer-policy'), 'same-origin');
  return fetch(link, {
    method: 'POST', redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin },
    body: new URLSearchParams({ login: new URL(link).searchParams.get('login'), token: TOKENS[as] }),
  });
}

// The authorization URL a proof sends the browser on to, and the cookie
// that binds the login to that browser.
function provedTo(res, clientId = 'mcp-app') {
  assert.equal(res.status, 303);
  const az = new URL(res.headers.get('location'));
  assert.equal(az.searchParams.get('code_challenge_method'), 'S256');
  if (clientId) {
    assert.equal(az.searchParams.get('client_id'), clientId);
    assert.equal(az.searchParams.get('resource'), up.url);
  }
  const set = res.headers.getSetCookie();
  assert.equal(set.length, 1);
  assert.match(set[0], /; Path=\/oauth\/callback; Max-Age=600; HttpOnly; SameSite=Lax$/);
  return { az, cookie: set[0].split(';')[0] };
}

// Play the user: open the link, prove to be who, log in as who at the
// authorization server, let the redirect reach the gateway's callback in
// the same browser; the authorization URL.
async function browse(link, who, clientId = 'mcp-app') {
  const { az, cookie } = provedTo(await prove(link, who), clientId);
  az.searchParams.set('login_hint', who);
  const back = await followLogin(az.href, az.searchParams.get('redirect_uri'));
  const res = await fetch(back, { headers: { cookie } });
  assert.equal(res.status, 200, await res.text());
  return az;
}

// The sub of a whoami result.
function sub(msg) {
  assert.ok(msg.result, JSON.stringify(msg));
  return JSON.parse(msg.result.content[0].text).sub;
}

// A call until it succeeds (the code exchange is under way).
async function whoamiOk(gw, s) {
  for (let i = 0; i < 100; i++) {
    const msg = await whoami(gw, s);
    if (msg.result) return msg;
    await sleep(100);
  }
  assert.fail(`no result\n${gw.log()}`);
}

// The -32042 error of a client that cannot be asked: the URL in its data.
function needLogin(msg) {
  assert.equal(msg.error?.code, -32042, JSON.stringify(msg));
  const e = msg.error.data.elicitations[0];
  assert.equal(e.mode, 'url');
  assert.ok(e.elicitationId);
  assert.ok(msg.error.message.includes(e.url), msg.error.message);
  return link(e.url);
}

// A login's link is the gateway's own page, never the authorization URL.
function link(url) {
  const u = new URL(url);
  assert.equal(u.pathname, '/oauth/callback');
  assert.match(u.searchParams.get('login'), /^[A-Za-z0-9_-]{43}$/);
  assert.equal(u.searchParams.get('client_id'), null);
  assert.equal(u.searchParams.get('state'), null);
  return url;
}

function noTokens(gw, ...texts) {
  for (const t of [gw.log(), ...texts]) {
    assert.doesNotMatch(t, JWT_SHOWN, 'a JWT was shown');
    assert.doesNotMatch(t, /refresh_token"?\s*[:=]\s*"?[A-Za-z0-9_-]{20,}/, 'a refresh token was shown');
  }
  // A user's authorization URL is theirs: its state would let whoever
  // reads the log bind their account to that user.
  assert.doesNotMatch(gw.log(), /[?&]state=[A-Za-z0-9_-]{16,}/, 'an authorization URL was logged');
}

test('per-user: each logs in as themselves, -32042 without elicitation, tokens, revoke', async () => {
  const stateDir = path.join(dir, 'a');
  mkdirSync(stateDir, { mode: 0o700 });
  const gw = await gateway(stateDir);
  // Ready: nobody's login is the upstream's state.
  assert.equal(gw.upstream('users').state, 'ready');

  const alice = await session(gw, 'alice');
  await browse(needLogin(await whoami(gw, alice)), 'alice');
  assert.equal(sub(await whoamiOk(gw, alice)), 'alice');
  // Her second call needs no login.
  assert.equal(sub(await whoami(gw, alice)), 'alice');

  // Bob is asked for his own login, never given hers.
  const bob = await session(gw, 'bob');
  const bobUrl = needLogin(await whoami(gw, bob));
  await browse(bobUrl, 'bob');
  assert.equal(sub(await whoamiOk(gw, bob)), 'bob');
  assert.equal(sub(await whoami(gw, alice)), 'alice');
  // Another session of alice's is alice's.
  const alice2 = await session(gw, 'alice');
  assert.equal(sub(await whoami(gw, alice2)), 'alice');

  // mcpctl tokens lists both; revoking bob's asks him again, not her.
  const listed = gw.mcpctl('tokens');
  assert.match(listed, /users\s+client:alice\s+valid/);
  assert.match(listed, /users\s+client:bob\s+valid/);
  noTokens(gw, listed, gw.mcpctl('-j', 'tokens'));
  assert.match(gw.mcpctl('tokens', 'revoke', 'users', 'client:bob'), /forgotten/);
  let msg;
  for (let i = 0; i < 50; i++) {
    msg = await whoami(gw, bob);
    if (msg.error) break;
    await sleep(100);
  }
  needLogin(msg);
  assert.equal(sub(await whoami(gw, alice)), 'alice');
  assert.doesNotMatch(gw.mcpctl('tokens'), /client:bob/);
  noTokens(gw);
});

// MCP 2025-11-25, client/elicitation, "Phishing": alice passes her login
// link to bob.  His own token does not prove to be her; her token posted
// from another origin's page is refused; the authorization URL she
// reaches herself, opened in bob's browser (without her cookie), is
// refused when it comes back: bob's login at the server never becomes
// hers.  She then logs in in her own browser.  Five wrong proofs drop a
// login.
test('per-user: a login link passed to someone else logs no one in as its user', async () => {
  const stateDir = path.join(dir, 'e');
  mkdirSync(stateDir, { mode: 0o700 });
  const gw = await gateway(stateDir);
  const alice = await session(gw, 'alice');
  const aliceLink = needLogin(await whoami(gw, alice));

  let r = await prove(aliceLink, 'bob');
  assert.equal(r.status, 403);
  assert.match(await r.text(), /for client:alice/);
  r = await prove(aliceLink, 'alice', 'http://localhost:9');
  assert.equal(r.status, 403);
  assert.match(await r.text(), /only from the gateway&#39;s own page/);

  const { az } = provedTo(await prove(aliceLink, 'alice'));
  az.searchParams.set('login_hint', 'bob');
  const back = await followLogin(az.href, az.searchParams.get('redirect_uri'));
  r = await fetch(back, { headers: { cookie: 'mcps_login=x; other=y' } });
  assert.equal(r.status, 403);
  assert.match(await r.text(), /not started in this browser/);
  // The login is dropped: the code pasted back to alice's browser is no use.
  assert.equal((await fetch(aliceLink)).status, 404);
  assert.doesNotMatch(gw.mcpctl('tokens'), /client:alice/);

  await browse(needLogin(await whoami(gw, alice)), 'alice');
  assert.equal(sub(await whoamiOk(gw, alice)), 'alice');
  const log = gw.log();
  assert.match(log, /login of client:alice: the link was opened by someone who is not them \(another principal's token\): refused/);
  assert.match(log, /login of client:alice: the authorization came back to a browser that did not open the login's link as that user: refused, and the login dropped/);

  const bob = await session(gw, 'bob');
  const bobLink = needLogin(await whoami(gw, bob));
  for (let i = 0; i < 5; i++) assert.equal((await prove(bobLink, 'carol')).status, 403);
  r = await fetch(bobLink);
  assert.equal(r.status, 404);
  assert.match(gw.log(), /login of client:bob: dropped after 5 refused proofs/);
  // His worker was told: his next call gets a new link, which works.
  const bobLink2 = needLogin(await whoami(gw, bob));
  assert.notEqual(bobLink2, bobLink);
  await browse(bobLink2, 'bob');
  assert.equal(sub(await whoamiOk(gw, bob)), 'bob');
  noTokens(gw);
});

// OAuth principals (the gateway's own clients log in at oidc-provider):
// the link sends the browser to log in at that issuer as the gateway's
// login client, and only a token of the same subject proves the user.
// Alice's link opened by bob (logged in at the issuer as bob) is refused;
// opened by alice, she goes on to the upstream's server and her call has
// her token.  A gateway whose issuer has no login client cannot make sure,
// and says so (503) rather than let anyone through.
async function oauthGateway(stateDir, login = 'login = { client_id = "mcp-app"; };') {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const gw = await startGateway({
    listen: `127.0.0.1:${port}`,
    globals: `state_dir = ${q(stateDir)};\noauth = { resource = ${q(base)};\n` +
      `  issuers = ( { issuer = ${q(op.issuer)}; ${login} } ); };`,
    servers: [`{ name = "users"; transport = "http"; url = ${q(up.url)}; oauth = { client_id = "mcp-app"; identity = "per-user"; }; }`],
  });
  stops.push(() => gw.stop());
  await gw.waitFor((st) => st.issuers?.[0]?.keys > 0, 'the provider\'s keys');
  gw.base = base;
  return gw;
}

// A raw session of a user of the issuer's.
async function oauthSession(gw, who) {
  const t = await authorizationCode(op.issuer, { resource: `${gw.base}/mcp`, scope: 'mcp:tools', loginHint: who });
  const headers = { authorization: `Bearer ${t.access_token}` };
  const r = await post(gw, {
    jsonrpc: '2.0', id: 1, method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: `oauth-${who}`, version: '1' } },
  }, { headers });
  assert.equal(r.status, 200, r.text);
  const sid = r.headers.get('mcp-session-id');
  await post(gw, { jsonrpc: '2.0', method: 'notifications/initialized' }, { session: sid, headers });
  return { sid, headers };
}

// Open a link in a new browser logged in at the issuer as who: the
// gateway's final answer to the issuer's redirect (polled while it makes
// sure), and the browser's cookie.
async function oauthProve(gw, link, who) {
  const r = await fetch(link, { redirect: 'manual' });
  if (r.status !== 303) return { res: r };
  const cookie = r.headers.getSetCookie()[0].split(';')[0];
  const az = new URL(r.headers.get('location'));
  assert.equal(az.origin + az.pathname, `${op.issuer}/auth`);
  assert.equal(az.searchParams.get('client_id'), 'mcp-app');
  assert.equal(az.searchParams.get('resource'), gw.base);
  assert.equal(az.searchParams.get('code_challenge_method'), 'S256');
  az.searchParams.set('login_hint', who);
  const back = await followLogin(az.href, az.searchParams.get('redirect_uri'));
  for (let i = 0; i < 100; i++) {
    const res = await fetch(back, { redirect: 'manual', headers: { cookie } });
    if (res.status !== 200 || !res.headers.get('refresh')) return { res, cookie, back };
    await res.text();
    await sleep(50);
  }
  assert.fail('the gateway kept checking');
}

test('per-user, OAuth principals: the link proves the user at the issuer', async () => {
  const stateDir = path.join(dir, 'f');
  mkdirSync(stateDir, { mode: 0o700 });
  const gw = await oauthGateway(stateDir);
  const alice = await oauthSession(gw, 'alice');
  const aliceLink = needLogin(await whoami(gw, alice));

  // Bob, logged in at the issuer as himself: refused, said why.
  let p = await oauthProve(gw, aliceLink, 'bob');
  assert.equal(p.res.status, 403);
  assert.match(await p.res.text(), new RegExp(`logged in at the issuer as oauth:bob@${op.issuer}`));
  // The issuer's answer in another browser (without the cookie).
  const again = await fetch(aliceLink, { redirect: 'manual' });
  assert.equal(again.status, 303);
  const az = new URL(again.headers.get('location'));
  az.searchParams.set('login_hint', 'alice');
  const back = await followLogin(az.href, az.searchParams.get('redirect_uri'));
  assert.equal((await fetch(back, { redirect: 'manual' })).status, 403);
  assert.doesNotMatch(gw.mcpctl('tokens'), /oauth:alice/);

  // Alice herself: on to the upstream's server, then her token.
  p = await oauthProve(gw, aliceLink, 'alice');
  assert.equal(p.res.status, 303, await p.res.text());
  const upAz = new URL(p.res.headers.get('location'));
  // Opened again in her browser (a second click): on again, still proved.
  const reopen = await fetch(aliceLink, { redirect: 'manual', headers: { cookie: p.cookie } });
  assert.equal(reopen.status, 303);
  assert.equal(reopen.headers.get('location'), upAz.href);
  assert.equal(reopen.headers.getSetCookie().length, 0);
  assert.equal(upAz.searchParams.get('resource'), up.url);
  upAz.searchParams.set('login_hint', 'alice');
  const upBack = await followLogin(upAz.href, upAz.searchParams.get('redirect_uri'));
  const done = await fetch(upBack, { headers: { cookie: p.cookie } });
  assert.equal(done.status, 200, await done.text());
  assert.equal(sub(await whoamiOk(gw, alice)), 'alice');
  const log = gw.log();
  assert.match(log, new RegExp(`login of oauth:alice@${op.issuer.replace(/[.]/g, '[.]')}: the link was opened by someone who is not them \\(logged in at the issuer as oauth:bob@`));
  assert.match(log, /the issuer's answer came to another browser/);
  noTokens(gw);
});

test('per-user, OAuth principals: without a login client nobody gets through', async () => {
  const stateDir = path.join(dir, 'g');
  mkdirSync(stateDir, { mode: 0o700 });
  const gw = await oauthGateway(stateDir, '');
  const alice = await oauthSession(gw, 'alice');
  const r = await fetch(needLogin(await whoami(gw, alice)), { redirect: 'manual' });
  assert.equal(r.status, 503);
  assert.match(await r.text(), /must give your issuer a login client/);
  assert.match(gw.log(), /no issuer of it has a login client/);
  assert.match(gw.log(), /has no login client: its users cannot log in to per-user upstreams/);
});

// A client of the SDK that declares URL elicitation; its handler plays
// the user who (answer 'accept') logs in as who, or declines.
async function sdkClient(gw, who, answer = 'accept') {
  const seen = { asked: [], completed: [] };
  const client = new Client({ name: `sdk-${who}`, version: '1' }, { capabilities: { elicitation: { url: {} } } });
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    assert.equal(req.params.mode, 'url');
    assert.match(req.params.message, /upstream users/);
    seen.asked.push(req.params);
    if (answer !== 'accept') return { action: answer };
    await browse(req.params.url, who);
    return { action: 'accept' };
  });
  client.setNotificationHandler(ElicitationCompleteNotificationSchema, (n) => { seen.completed.push(n.params.elicitationId); });
  await client.connect(new StreamableHTTPClientTransport(new URL(gw.url),
    { requestInit: { headers: { authorization: `Bearer ${TOKENS[who]}` } } }));
  stops.push(() => client.close());
  return { client, seen };
}

async function sdkWhoami(c) {
  const r = await c.client.callTool({ name: 'users__whoami', arguments: {} });
  assert.ok(!r.isError, JSON.stringify(r));
  return JSON.parse(r.content[0].text).sub;
}

// Wait for a condition (a notification on its way).
async function until(pred, what) {
  for (let i = 0; i < 100 && !pred(); i++) await sleep(50);
  assert.ok(pred(), what);
}

test('per-user with URL elicitation: asked, the call goes on, complete; revoke asks again', async () => {
  const stateDir = path.join(dir, 'b');
  mkdirSync(stateDir, { mode: 0o700 });
  const gw = await gateway(stateDir);
  const alice = await sdkClient(gw, 'alice');
  const bob = await sdkClient(gw, 'bob');

  assert.equal(await sdkWhoami(alice), 'alice');
  assert.equal(alice.seen.asked.length, 1);
  link(alice.seen.asked[0].url);
  await until(() => alice.seen.completed.length === 1, 'elicitation/complete');
  assert.equal(alice.seen.completed[0], alice.seen.asked[0].elicitationId);
  assert.equal(bob.seen.asked.length, 0);

  // Bob: his own login, his own sub; alice's second call needs none.
  assert.equal(await sdkWhoami(bob), 'bob');
  assert.equal(bob.seen.asked.length, 1);
  assert.notEqual(bob.seen.asked[0].elicitationId, alice.seen.asked[0].elicitationId);
  assert.equal(await sdkWhoami(alice), 'alice');
  assert.equal(alice.seen.asked.length, 1);

  const listed = gw.mcpctl('tokens');
  assert.match(listed, /users\s+client:alice\s+valid/);
  assert.match(listed, /users\s+client:bob\s+valid/);

  // Revoked: bob is asked again at his next call, alice is not.
  gw.mcpctl('tokens', 'revoke', 'users', 'client:bob');
  await sleep(300);
  assert.equal(await sdkWhoami(bob), 'bob');
  assert.equal(bob.seen.asked.length, 2);
  assert.equal(await sdkWhoami(alice), 'alice');
  assert.equal(alice.seen.asked.length, 1);
  noTokens(gw, listed);
});

test('per-user: a declined elicitation fails the call cleanly; asked again next time', async () => {
  const stateDir = path.join(dir, 'c');
  mkdirSync(stateDir, { mode: 0o700 });
  const gw = await gateway(stateDir);
  const carol = await sdkClient(gw, 'carol', 'decline');
  await assert.rejects(carol.client.callTool({ name: 'users__whoami', arguments: {} }),
    /login to upstream users declined/);
  assert.equal(carol.seen.asked.length, 1);
  assert.doesNotMatch(gw.mcpctl('tokens'), /client:carol/);
  await assert.rejects(carol.client.callTool({ name: 'users__whoami', arguments: {} }),
    /declined/);
  assert.equal(carol.seen.asked.length, 2);
});

// Per-user with a client registered dynamically (RFC 7591) that the
// authorization server then forgets: the first user's refresh gets
// invalid_client and the registration is dropped, and registering again
// fails for a while (429); the other user's tokens were issued to the
// same client, so their renewal asks them to log in (it once sent a
// token request without a client_id: the worker crashed).  The next
// login registers again.
test('per-user: a registration the server forgot asks every user again, the worker stays up', async () => {
  const op2 = await startOidcProvider(['--ttl', '6', '--refresh']);
  stops.push(() => op2.stop());
  const up2 = await startNodeServer([fixture, '--issuer', op2.issuer, '--scopes', 'mcp:tools']);
  stops.push(() => up2.stop());
  const stateDir = path.join(dir, 'd');
  mkdirSync(stateDir, { mode: 0o700 });
  const gw = await startGateway({
    globals: `state_dir = ${q(stateDir)};\nclients = (\n` +
      `  { name = "alice"; token = ${q(TOKENS.alice)}; },\n` +
      `  { name = "bob"; token = ${q(TOKENS.bob)}; }\n);`,
    servers: [`{ name = "users"; transport = "http"; url = ${q(`http://127.0.0.1:${up2.port}/mcp`)}; oauth = { identity = "per-user"; }; }`],
  });
  stops.push(() => gw.stop());
  const urlOf = (msg) => {
    assert.equal(msg.error?.code, -32042, JSON.stringify(msg));
    return msg.error.data.elicitations[0].url;
  };
  const alice = await session(gw, 'alice');
  await browse(urlOf(await whoami(gw, alice)), 'alice', null);
  assert.equal(sub(await whoamiOk(gw, alice)), 'alice');
  const bob = await session(gw, 'bob');
  const bobUrl = urlOf(await whoami(gw, bob));
  const first = (await browse(bobUrl, 'bob', null)).searchParams.get('client_id');
  assert.equal(sub(await whoamiOk(gw, bob)), 'bob');
  assert.equal((await counts(op2.issuer))['/reg'], 1);
  const f = await (await fetch(`${op2.issuer}/admin/forget-clients`, { method: 'POST' })).json();
  assert.deepEqual(f.forgotten, [first]);
  await fetch(`${op2.issuer}/admin/busy?n=1000&path=/reg`, { method: 'POST' });
  // The 6 s tokens run out; the first refresh is refused for the client,
  // the other user's renewal then finds no registration.
  for (let i = 0; i < 300 && !/issued to a client no longer registered/.test(gw.log()); i++) await sleep(100);
  assert.match(gw.log(), /invalid_client.*registered again at the next login/);
  assert.match(gw.log(), /the tokens of client:(alice|bob) were issued to a client no longer registered: a login is needed/);
  assert.equal(gw.upstream('users').restarts, 0, gw.log());
  // Both are asked again; the login registers a new client.
  await fetch(`${op2.issuer}/admin/busy?n=0&path=/reg`, { method: 'POST' });
  const alice2 = await session(gw, 'alice');
  let again;
  for (let i = 0; i < 50 && again === undefined; i++) {
    const msg = await whoami(gw, alice2);
    if (msg.error?.code === -32042) again = urlOf(msg);
    else await sleep(200);
  }
  assert.ok(again, gw.log());
  const second = (await browse(again, 'alice', null)).searchParams.get('client_id');
  assert.notEqual(second, first);
  assert.equal(sub(await whoamiOk(gw, alice2)), 'alice');
  urlOf(await whoami(gw, await session(gw, 'bob')));
  assert.equal(gw.upstream('users').restarts, 0, gw.log());
  noTokens(gw);
});
