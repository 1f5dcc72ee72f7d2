// SPDX-License-Identifier: ISC
// The OAuth issuers' worker (mcp-idp) against a real OpenID Provider (npm
// oidc-provider, t/fixtures/oidc-provider.mjs).  With the real daemon and
// an oauth group naming the provider, through mcpctl: the keys arrive; a
// key rotation at the provider is picked up when keys are asked for
// (refresh-keys, the path an unknown kid takes); a flood of such requests
// costs the provider no more fetches of its JWKS (counted at the
// provider); the provider going down leaves the gateway with the keys it
// has (check: WARNING), and an issuer never reached has none (check:
// CRITICAL).  Introspection (RFC 7662) of the provider's opaque tokens
// with mcp-idp started as the daemon starts it (CONFIG frame on fd 3),
// with client_secret_basic and client_secret_post: neither the token nor
// the secret in what it logs or answers.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import https from 'node:https';
import crypto from 'node:crypto';
import { mkdtempSync, writeFileSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { startGateway, demo, q, sleep, builddir, sanitizerEnv, bin, post } from '../lib/gateway.mjs';
import {
  startOidcProvider, rotate, counts, clientCredentials, register, authorizationCode,
} from '../lib/oidc.mjs';

const OPAQUE = 'http://127.0.0.1:18933/mcp';
const idpBin = path.join(builddir, 'worker/mcp-idp');
let op;
let gw;
let dir;
const workers = new Set();	// mcp-idp started here, killed if a test fails

const oauth = (issuers) => `oauth = { resource = "http://127.0.0.1:18931"; issuers = ( ${issuers.join(', ')} ); };`;
const issuer = (url, extra = '') => `{ issuer = ${q(url)}; ${extra} }`;
const confFile = () => path.join(gw.dir, 'mcp-supervisord.conf');

// mcpctl check: its exit status and output (3 is an answer).
function check() {
  try {
    return { code: 0, out: execFileSync(bin.mcpctl, ['-s', gw.ctl, 'check'], { encoding: 'utf8' }) };
  } catch (e) {
    return { code: e.status, out: e.stdout };
  }
}

before(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'mcps-idp-'));
  op = await startOidcProvider(['--opaque', OPAQUE]);
  gw = await startGateway({ servers: [demo('alpha')], globals: oauth([issuer(op.issuer)]) });
});
after(async () => {
  for (const c of workers) c.kill('SIGKILL');
  await gw?.stop();
  await op?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const iss = (s, url = op.issuer) => s.issuers.find((d) => d.issuer === url);

test('the keys arrive, found by discovery', async () => {
  const s = await gw.waitFor((st) => iss(st)?.keys === 4, 'the provider\'s 4 keys');
  const d = iss(s);
  assert.equal(d.state, 'ready');
  assert.equal(d.reachable, true);
  assert.equal(d.last_error, null);
  assert.equal(d.key_sets, 1);
  assert.equal((await counts(op.issuer))['/jwks'], 1);
  // RFC 8414 first: the issuer has no path.
  assert.equal((await counts(op.issuer))['/.well-known/oauth-authorization-server'], 1);
  assert.match(gw.mcpctl('status'), new RegExp(`${op.issuer.replace(/[.]/g, '\\.')} +ready +up +4 `));
  assert.equal(check().code, 0);
});

test('a key rotation is picked up when keys are asked for', async () => {
  const r = await rotate(op.issuer);
  assert.equal(r.previous.length, 4);
  assert.match(gw.mcpctl('refresh-keys'), /keys asked for/);
  // The new keys and the previous ones, still published.
  const s = await gw.waitFor((st) => iss(st).keys === 8, 'the rotated set');
  assert.equal(iss(s).key_sets, 2);
  assert.equal(iss(s).refreshes, 1);
  assert.equal((await counts(op.issuer))['/jwks'], 2);
});

test('a flood of requests for keys costs the provider nothing more', async () => {
  const before = (await counts(op.issuer))['/jwks'];
  for (let i = 0; i < 40; i++) {
    assert.match(gw.mcpctl('refresh-keys', op.issuer), /not asked/);
  }
  await sleep(500);
  const d = iss(gw.status());
  assert.equal(d.refreshes, 1);
  assert.ok(d.refreshes_limited >= 40, JSON.stringify(d));
  assert.equal((await counts(op.issuer))['/jwks'], before);
  assert.equal(d.keys, 8);
});

test('the provider down: the keys are kept, check warns', async () => {
  const port = op.port;
  await op.stop();
  // Its worker starts again (killed here) and finds the provider down.
  const pid = iss(gw.status()).pid;
  process.kill(pid, 'SIGKILL');
  const s = await gw.waitFor((st) => iss(st).reachable === false && iss(st).pid !== pid,
    'the provider seen down');
  const d = iss(s);
  assert.equal(d.keys, 8);
  assert.match(d.last_error, new RegExp(`127\\.0\\.0\\.1:${port}.*(connect|Connection)`, 'i'));
  const c = check();
  assert.equal(c.code, 0, c.out);
  assert.match(c.out, new RegExp(`^WARNING: issuer ${op.issuer.replace(/[.]/g, '\\.')} is unreachable .*8 keys`, 'm'));
  assert.match(gw.log(), /the keys we have are kept/);
});

test('an issuer never reached has no keys: check is critical', async () => {
  const dead = op.issuer;
  const text = readFileSync(confFile(), 'utf8').replace(/oauth = .*;\n/,
    `${oauth([issuer(dead), issuer('http://127.0.0.1:9/realms/none')])}\n`);
  writeFileSync(confFile(), text);
  assert.match(gw.mcpctl('reload'), /added issuer http:\/\/127\.0\.0\.1:9\/realms\/none/);
  await gw.waitFor((st) => iss(st, 'http://127.0.0.1:9/realms/none')?.reachable === false, 'the new issuer tried');
  const c = check();
  assert.equal(c.code, 3, c.out);
  assert.match(c.out, /^CRITICAL: issuer http:\/\/127\.0\.0\.1:9\/realms\/none has no keys: metadata at /m);
  assert.match(c.out, /^WARNING: issuer /m);
  // The removed issuer's worker goes, the other stays.
  writeFileSync(confFile(), text.replace(/oauth = .*;\n/, `${oauth([issuer(dead)])}\n`));
  assert.match(gw.mcpctl('reload'), /removed issuer http:\/\/127\.0\.0\.1:9\/realms\/none/);
  assert.equal(gw.status().issuers.length, 1);
});

// mcp-idp as the daemon starts it: its channel on fd 3, a CONFIG frame.
function startIdp(cfg) {
  const child = spawn(idpBin, ['-dv', cfg.issuer.issuer], {
    stdio: ['ignore', 'ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...sanitizerEnv(dir) },
  });
  workers.add(child);
  child.once('exit', () => workers.delete(child));
  const chan = child.stdio[3];
  let stderr = '';
  child.stderr.on('data', (b) => { stderr += b; });
  let buf = Buffer.alloc(0);
  const frames = [];
  const waiting = [];
  chan.on('data', (b) => {
    buf = Buffer.concat([buf, b]);
    while (buf.length >= 16 && buf.length >= 16 + buf.readUInt32BE(0)) {
      const len = buf.readUInt32BE(0);
      const f = { type: buf.readUInt16BE(4), tag: buf.readUInt32BE(12), body: JSON.parse(buf.subarray(16, 16 + len)) };
      buf = buf.subarray(16 + len);
      frames.push(f);
      for (const w of waiting.splice(0)) w();
    }
  });
  const send = (type, tag, obj) => {
    const body = Buffer.from(JSON.stringify(obj));
    const h = Buffer.alloc(16);
    h.writeUInt32BE(body.length, 0);
    h.writeUInt16BE(type, 4);
    h.writeUInt32BE(tag, 12);
    chan.write(Buffer.concat([h, body]));
  };
  const next = async (pred, ms = 10000) => {
    const until = Date.now() + ms;
    for (;;) {
      const i = frames.findIndex(pred);
      if (i >= 0) return frames.splice(i, 1)[0];
      if (Date.now() > until) throw new Error(`no such frame; stderr:\n${stderr}`);
      await new Promise((r) => { waiting.push(r); setTimeout(r, 100); });
    }
  };
  send(2, 0, cfg);
  return {
    send,
    next,
    stderr: () => stderr,
    async stop() {
      const done = new Promise((r) => child.once('exit', r));
      send(15, 0, {});
      return done;
    },
  };
}

test('introspection of opaque tokens: client_secret_basic and _post', async () => {
  const op2 = await startOidcProvider(['--opaque', OPAQUE]);
  try {
    const { access_token: token } = await clientCredentials(op2.issuer, { resource: OPAQUE, scope: 'mcp:read' });
    assert.ok(!token.includes('.'), 'an opaque token');
    // client_secret_basic, the secret read from a file by the worker.
    writeFileSync(path.join(dir, 'secret'), 'mcp-gateway-secret\n');
    let w = startIdp({ issuer: { issuer: op2.issuer, introspection: {
      client_id: 'mcp-gateway', client_secret: `\${file:${path.join(dir, 'secret')}}`, auth: 'client_secret_basic',
    } } });
    assert.equal((await w.next((f) => f.type === 24)).body.jwks.keys.length, 4);
    w.send(27, 7, { token });
    let a = await w.next((f) => f.type === 28);
    assert.equal(a.tag, 7);
    assert.equal(a.body.active, true);
    assert.equal(a.body.client_id, 'mcp-cc');
    assert.equal(a.body.scope, 'mcp:read');
    w.send(27, 8, { token: 'not-a-token-we-issued' });
    a = await w.next((f) => f.type === 28);
    assert.deepEqual([a.tag, a.body.active], [8, false]);
    assert.equal(await w.stop(), 0);
    assert.ok(!w.stderr().includes(token) && !w.stderr().includes('mcp-gateway-secret'), w.stderr());

    // client_secret_post, for a client registered so.
    const c = await register(op2.issuer, {
      token_endpoint_auth_method: 'client_secret_post', grant_types: ['client_credentials'],
      response_types: [], redirect_uris: [],
    });
    w = startIdp({ issuer: { issuer: op2.issuer, introspection: {
      client_id: c.client_id, client_secret: c.client_secret, auth: 'client_secret_post',
    } } });
    await w.next((f) => f.type === 24);
    w.send(27, 9, { token });
    a = await w.next((f) => f.type === 28);
    assert.deepEqual([a.tag, a.body.active], [9, true]);
    await w.stop();

    // A wrong secret: an error that names neither it nor the token.
    w = startIdp({ issuer: { issuer: op2.issuer, introspection: {
      client_id: 'mcp-gateway', client_secret: 'wrong-secret-3f9a', auth: 'client_secret_basic',
    } } });
    await w.next((f) => f.type === 24);
    w.send(27, 10, { token });
    a = await w.next((f) => f.type === 28);
    assert.equal(a.tag, 10);
    assert.match(a.body.error, /HTTP 401/);
    await w.stop();
    for (const s of [JSON.stringify(a.body), w.stderr()]) {
      assert.ok(!s.includes('wrong-secret-3f9a') && !s.includes(token), s);
    }
  } finally {
    await op2.stop();
  }
});

test('a refresh asked for while the provider is down answers with the error', async () => {
  // The keys' fetch failing is said (IDP_STATUS ok false), never a KEYS.
  const w = startIdp({ issuer: { issuer: 'http://127.0.0.1:9' } });
  const s = await w.next((f) => f.type === 25);
  assert.equal(s.body.ok, false);
  assert.match(s.body.error, /^metadata at http:\/\/127\.0\.0\.1:9\/\.well-known\/oauth-authorization-server: /);
  w.send(26, 0, {});
  const again = await w.next((f) => f.type === 25);
  assert.equal(again.body.ok, false);
  assert.equal(again.body.limited, undefined);
  // Asked again within 30 s: not fetched, said so.
  w.send(26, 0, {});
  assert.equal((await w.next((f) => f.type === 25)).body.limited, true);
  await w.stop();
});

// A server of our own over https (a certificate made here for
// 127.0.0.1): what real providers' deployments do that the fixture does
// not -- TLS, Keycloak's and Entra's path-style issuers, Cache-Control,
// redirects, a wrong issuer, an oversized set, a jwks_uri off loopback.
async function startHttps() {
  const key = path.join(dir, 'tls.key');
  const cert = path.join(dir, 'tls.crt');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes',
    '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'],
  { stdio: 'ignore' });
  const jwk = { ...crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' }),
    kid: 'k1', alg: 'ES256', use: 'sig' };
  const seen = [];
  let base;
  const meta = (t, extra = {}) => JSON.stringify({ issuer: `${base}/${t}`, jwks_uri: `${base}/${t}/keys`, ...extra });
  const routes = {
    '/t1/.well-known/openid-configuration': () => [200, {}, meta('t1')],
    '/t1/keys': () => [200, { 'cache-control': 'public, max-age=10' }, JSON.stringify({ keys: [jwk] })],
    '/t2/.well-known/openid-configuration': () => [200, {}, meta('t2', { issuer: `${base}/t2/` })],
    '/t3/.well-known/openid-configuration': () => [302, { location: `${base}/t1/.well-known/openid-configuration` }, ''],
    '/t4/.well-known/openid-configuration': () => [200, {}, meta('t4')],
    '/t4/keys': () => [200, {}, JSON.stringify({ keys: [jwk], pad: 'x'.repeat(300 * 1024) })],
    '/t5/.well-known/openid-configuration': () => [200, {}, meta('t5', { jwks_uri: 'http://keys.example.com/t5' })],
  };
  const srv = https.createServer({ key: readFileSync(key), cert: readFileSync(cert) }, (req, res) => {
    seen.push(req.url);
    const [status, headers, body] = (routes[req.url] ?? (() => [404, {}, 'no']))();
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(body);
  });
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  base = `https://127.0.0.1:${srv.address().port}`;
  return { base, cert, seen, stop: () => new Promise((r) => srv.close(r)) };
}

test('https: certificates verified, path issuers, Cache-Control, what is refused', async () => {
  const h = await startHttps();
  try {
    const status = async (issuer, extra = {}) => {
      const w = startIdp({ issuer: { issuer, ...extra } });
      const f = await w.next((x) => x.type === 24 || x.type === 25);
      await w.stop();
      return { f, log: w.stderr() };
    };
    // The certificate is not one the system trusts: refused.
    let r = await status(`${h.base}/t1`);
    assert.equal(r.f.type, 25);
    assert.match(r.f.body.error, /certificate/i);
    assert.equal(h.seen.length, 0);
    // With it as ca_file: RFC 8414's form first, then OpenID's two.
    r = await status(`${h.base}/t1`, { ca_file: h.cert });
    assert.equal(r.f.type, 24, JSON.stringify(r.f.body));
    assert.deepEqual(r.f.body.jwks.keys.map((k) => k.kid), ['k1']);
    assert.deepEqual(h.seen, ['/.well-known/oauth-authorization-server/t1', '/.well-known/openid-configuration/t1',
      '/t1/.well-known/openid-configuration', '/t1/keys']);
    // max-age=10 is held to the 5-minute floor.
    assert.match(r.log, /keys: 1, next in 300 s/);
    // The metadata names another issuer (a trailing '/').
    r = await status(`${h.base}/t2`, { ca_file: h.cert });
    assert.equal(r.f.body.ok, false);
    assert.match(r.f.body.error, new RegExp(`names issuer ${h.base.replace(/[.]/g, '\\.')}/t2/, not the configured one`));
    // A redirect is not followed.
    r = await status(`${h.base}/t3`, { ca_file: h.cert });
    assert.match(r.f.body.error, /: HTTP 404$/);
    assert.ok(!h.seen.slice(-1)[0].startsWith('/t1'), h.seen.join(' '));
    // A key set past 256 KiB.
    r = await status(`${h.base}/t4`, { ca_file: h.cert });
    assert.match(r.f.body.error, /^keys at .*\/t4\/keys: over 262144 bytes$/);
    // A jwks_uri over http off loopback.
    r = await status(`${h.base}/t5`, { ca_file: h.cert });
    assert.match(r.f.body.error, /jwks_uri: http:\/\/ but not to a loopback address/);
  } finally {
    await h.stop();
  }
});

test('an opaque token through the gateway: introspected once, then cached', async () => {
  const resource = 'http://127.0.0.1:18934';
  const op3 = await startOidcProvider(['--opaque', `${resource}/mcp`, '--introspection-delay', '300']);
  writeFileSync(path.join(dir, 'secret3'), 'mcp-gateway-secret\n');
  const g = await startGateway({
    servers: [demo('alpha')],
    globals: `oauth = { resource = ${q(resource)}; issuers = ( ${issuer(op3.issuer, `introspection = {
      client_id = "mcp-gateway"; client_secret = ${q(`\${file:${path.join(dir, 'secret3')}}`)}; };`)} ); };`,
  });
  try {
    await g.waitFor((st) => st.issuers[0].keys > 0, 'the keys');
    // A user's token (client credentials' introspection names no sub).
    const { access_token: token } = await authorizationCode(op3.issuer, {
      resource: `${resource}/mcp`, scope: 'mcp:read', loginHint: 'alice',
    });
    assert.ok(!token.includes('.'), 'an opaque token');
    const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'opaque', version: '1' } } };
    const r = await post(g, init, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(r.status, 200, `${r.text}\n${g.log().split('\n').filter((l) => /oauth|issuer|idp|introspect|refused|token/i.test(l)).join('\n')}`);
    const again = await post(g, init, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(again.status, 200);
    const d = g.status().issuers[0];
    assert.equal(d.introspections, 1);
    assert.equal(d.introspection_errors, 0);
    assert.equal((await counts(op3.issuer))['/token/introspection'], 1);
    assert.match(g.mcpctl('sessions'), /alice/);
    // A burst of 80 new tokens at once, past the 64 introspections in
    // flight (each answered 300 ms later): the rest wait their turn, none
    // is refused.
    const tokens = [];
    for (let i = 0; i < 80; i++) {
      tokens.push((await authorizationCode(op3.issuer, {
        resource: `${resource}/mcp`, scope: 'mcp:read', loginHint: `user${i}`,
      })).access_token);
    }
    const burst = await Promise.all(tokens.map((t) => post(g, init, { headers: { authorization: `Bearer ${t}` } })));
    assert.deepEqual(burst.map((x) => x.status), tokens.map(() => 200));
    assert.equal(g.status().issuers[0].introspection_errors, 0);
    // One the provider never issued: inactive, refused.
    const bad = await post(g, init, { headers: { authorization: 'Bearer not-a-token-of-this-provider' } });
    assert.equal(bad.status, 401);
    assert.equal((await counts(op3.issuer))['/token/introspection'], 82);
    // One new token in 20 requests at once: one introspection for all.
    const { access_token: busy } = await authorizationCode(op3.issuer, {
      resource: `${resource}/mcp`, scope: 'mcp:read', loginHint: 'busy',
    });
    const same = await Promise.all(Array.from({ length: 20 }, () => post(g, init, { headers: { authorization: `Bearer ${busy}` } })));
    assert.deepEqual(same.map((x) => x.status), same.map(() => 200));
    assert.equal((await counts(op3.issuer))['/token/introspection'], 83);
    assert.ok(!g.log().includes(token) && !g.log().includes('mcp-gateway-secret'));
  } finally {
    await g.stop();
    await op3.stop();
  }
});

// An issuer whose metadata names no key set (opaque tokens only): with
// introspection it is usable, not "no keys" (it failed discovery, and
// nothing of it was introspected); mcpctl check is clean.
test('an issuer of opaque tokens only: introspected, no key set needed', async () => {
  const resource = 'http://127.0.0.1:18935';
  const op4 = await startOidcProvider(['--opaque', `${resource}/mcp`, '--hide-jwks']);
  const op5 = await startOidcProvider();
  writeFileSync(path.join(dir, 'secret4'), 'mcp-gateway-secret\n');
  // Listed after an issuer of JWTs that introspects too: opaque tokens
  // go to the keyless one (they were all sent to the first, which found
  // them inactive).
  const intro = `introspection = { client_id = "mcp-gateway"; client_secret = ${q(`\${file:${path.join(dir, 'secret4')}}`)}; };`;
  const g = await startGateway({
    servers: [demo('alpha')],
    globals: `oauth = { resource = ${q(resource)}; issuers = ( ${issuer(op5.issuer, intro)}, ${issuer(op4.issuer, intro)} ); };`,
  });
  try {
    await g.waitFor((st) => st.issuers[1].keyless === true && st.issuers[0].keys > 0, 'keyless, and the other\'s keys');
    assert.equal(g.status().issuers[1].keys, 0);
    assert.doesNotMatch(g.mcpctl('check'), /no keys/);
    const { access_token: token } = await authorizationCode(op4.issuer, {
      resource: `${resource}/mcp`, scope: 'mcp:read', loginHint: 'alice',
    });
    const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'opaque', version: '1' } } };
    const r = await post(g, init, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(r.status, 200, r.text);
    assert.equal(g.status().issuers[1].introspections, 1);
    assert.equal(g.status().issuers[0].introspections, 0);
    assert.match(g.log(), /names no jwks_uri: opaque tokens only, introspected/);
    // A JWT naming it cannot be verified: refused at once, said why.
    const b64 = (o) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const jwt = `${b64({ alg: 'RS256', kid: 'x' })}.${b64({ iss: op4.issuer, sub: 'alice' })}.c2ln`;
    const refused = await post(g, init, { headers: { authorization: `Bearer ${jwt}` } });
    assert.equal(refused.status, 401);
    assert.match(refused.headers.get('www-authenticate'), /the issuer has no key set/);
  } finally {
    await g.stop();
    await op4.stop();
    await op5.stop();
  }
});

test('no sanitizer reports from the workers started here', () => {
  const reports = readdirSync(dir).filter((f) => /^(asan|ubsan)\./.test(f))
    .map((f) => `${f}:\n${readFileSync(path.join(dir, f), 'utf8')}`);
  assert.deepEqual(reports, []);
});
