// SPDX-License-Identifier: ISC
// The gateway as an OAuth client of sse and ws upstreams (issue 23), as it
// is of http ones, against peers we did not write: the official SDK's
// SSEServerTransport (GET /sse, POST /messages) behind its own
// requireBearerAuth and mcpAuthMetadataRouter, and a WebSocket server of
// npm ws that checks the bearer token at the upgrade and refuses it with
// 401 and the same WWW-Authenticate (t/fixtures/oauth-upstream.mjs --sse,
// --ws); tokens from npm oidc-provider (t/fixtures/oidc-provider.mjs),
// verified with npm jose.  The GET or the upgrade refused with 401 starts
// discovery; with client credentials the worker gets a token and connects
// again, calls pass, and the token is renewed before it runs out (no
// token is ever refused); a client the server refuses fails at once; an
// sse upstream that needs a login waits in the state login until mcpctl
// login, then is ready with the user's token.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startGateway, startNodeServer, rawSession, post, q, sleep, srcdir } from '../lib/gateway.mjs';
import { startOidcProvider } from '../lib/oidc.mjs';

const fixture = path.join(srcdir, 't/fixtures/oauth-upstream.mjs');
let op;
let dir;
const stops = [];

before(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'mcps-upoauth-sw-'));
  writeFileSync(path.join(dir, 'secret'), 'mcp-cc-secret\n', { mode: 0o600 });
  writeFileSync(path.join(dir, 'wrong'), 'not-the-secret\n', { mode: 0o600 });
  op = await startOidcProvider(['--ttl', '8']);
});
after(async () => {
  for (const s of stops.reverse()) await s().catch(() => {});
  await op?.stop();
  rmSync(dir, { recursive: true, force: true });
});

// The fixture with transport (sse or ws); its url is what the gateway uses.
async function upstream(transport) {
  const srv = await startNodeServer([fixture, '--issuer', op.issuer, '--scopes', 'mcp:tools', `--${transport}`]);
  stops.push(() => srv.stop());
  srv.url = transport === 'ws' ? `ws://127.0.0.1:${srv.port}/ws` : `http://127.0.0.1:${srv.port}/sse`;
  srv.seen = async () => (await fetch(`http://127.0.0.1:${srv.port}/admin/seen`)).json();
  return srv;
}

const cc = (secretFile = 'secret') => `oauth = { client_id = "mcp-cc"; client_secret = ${q(`\${file:${path.join(dir, secretFile)}}`)}; grant = "client_credentials"; };`;

async function gateway(transport, url, settings, wait = true) {
  const gw = await startGateway({
    servers: [`{ name = "remote"; transport = "${transport}"; url = ${q(url)}; ${settings} }`],
    wait,
  });
  stops.push(() => gw.stop());
  return gw;
}

async function call(gw) {
  const session = await rawSession(gw);
  const r = await post(gw, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'remote__whoami', arguments: {} } }, { session });
  assert.equal(r.status, 200, r.text);
  return Array.isArray(r.json) ? r.json.find((m) => m.id === 2) : r.json;
}

async function whoami(gw) {
  const msg = await call(gw);
  assert.ok(msg.result, `${JSON.stringify(msg)}\n${gw.log()}`);
  return JSON.parse(msg.result.content[0].text);
}

async function logHas(gw, re, ms = 20000) {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (re.test(gw.log())) return;
    await sleep(100);
  }
  assert.fail(`no ${re} in the log:\n${gw.log()}`);
}

async function state(gw, want, ms = 20000) {
  return gw.waitFor((s) => s.upstreams[0]?.state === want, `remote ${want}`, ms);
}

function noSecrets(gw) {
  const log = gw.log();
  assert.ok(!log.includes('mcp-cc-secret'), 'the client secret is in the log');
  assert.ok(!/eyJ[A-Za-z0-9_-]{10,}\./.test(log), 'a token is in the log');
}

test('sse, client credentials: the GET refused, a token, connected again; renewed', async () => {
  const up = await upstream('sse');
  const gw = await gateway('sse', up.url, cc());
  assert.deepEqual(await whoami(gw), { client_id: 'mcp-cc', sub: 'mcp-cc' });
  await logHas(gw, /oauth: a token from http:\/\/127\.0\.0\.1:\d+ \(client credentials, 8 s, scope mcp:tools\)/);
  // Only the first GET went without a token; none was refused.
  const seen = await up.seen();
  assert.equal(seen.without, 1, JSON.stringify(seen));
  assert.equal(seen.refused, 0);
  assert.equal(gw.upstream('remote').restarts, 0);
  // Every POST carries the token: renewed before the 8 s run out.
  await sleep(9000);
  assert.deepEqual(await whoami(gw), { client_id: 'mcp-cc', sub: 'mcp-cc' });
  assert.ok(gw.log().match(/oauth: a token from/g).length >= 2, gw.log());
  assert.equal((await up.seen()).refused, 0);
  noSecrets(gw);
});

test('ws, client credentials: the upgrade refused, a token, connected again; renewed', async () => {
  const up = await upstream('ws');
  // Each session its own WebSocket: each upgrade carries the token held.
  const gw = await gateway('ws', up.url, `${cc()} isolation = "per-session";`);
  assert.deepEqual(await whoami(gw), { client_id: 'mcp-cc', sub: 'mcp-cc' });
  await logHas(gw, /oauth: a token from http:\/\/127\.0\.0\.1:\d+ \(client credentials, 8 s, scope mcp:tools\)/);
  const seen = await up.seen();
  assert.equal(seen.without, 1, JSON.stringify(seen));
  assert.equal(seen.refused, 0);
  // A session after the first token ran out upgrades with the renewed one.
  await sleep(9000);
  assert.deepEqual(await whoami(gw), { client_id: 'mcp-cc', sub: 'mcp-cc' });
  assert.ok(gw.log().match(/oauth: a token from/g).length >= 2, gw.log());
  const later = await up.seen();
  assert.equal(later.refused, 0, JSON.stringify(later));
  assert.equal(later.without, 1, JSON.stringify(later));
  noSecrets(gw);
});

test('ws, a wrong secret: the server\'s error, failed at once', async () => {
  const up = await upstream('ws');
  const gw = await gateway('ws', up.url, cc('wrong'), false);
  await logHas(gw, /oauth: token: the token endpoint answered invalid_client \(HTTP 401\)/);
  const s = await state(gw, 'failed');
  assert.match(s.upstreams[0].last_error, /the WebSocket upgrade: HTTP 401 from ws:\/\/127\.0\.0\.1:\d+\/ws: .*invalid_client/);
  assert.equal(s.upstreams[0].failures, 1);
  assert.equal((await up.seen()).with, 0);
  noSecrets(gw);
});

test('sse, a login: the state login, mcpctl login, ready, a call', async () => {
  const up = await upstream('sse');
  const gw = await gateway('sse', up.url, 'oauth = { client_id = "mcp-app"; };', false);
  const s = await state(gw, 'login');
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
  await state(gw, 'ready');
  assert.deepEqual(await whoami(gw), { client_id: 'mcp-app', sub: 'test-user' });
  assert.equal((await up.seen()).refused, 0);
  noSecrets(gw);
});
