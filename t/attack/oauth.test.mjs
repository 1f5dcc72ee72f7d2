// SPDX-License-Identifier: ISC
// Attacks on the gateway's OAuth resource server, against the real daemon
// and a real OpenID Provider (npm oidc-provider): tokens forged with npm
// jose (alg none; HS256 keyed with the provider's public key; another key
// under the provider's kid; a payload changed under a good signature),
// a token of an issuer the gateway does not trust, the provider's own ID
// token presented as an access token, a token in the query string, and
// malformed, doubled and oversized Authorization headers.  Each is a
// clear 401 (or 400/431 for the head) with a log line naming the reason
// and never the token; and the gateway goes on serving a good token.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { SignJWT, generateKeyPair, decodeProtectedHeader } from 'jose';
import { startGateway, demo, q, post } from '../lib/gateway.mjs';
import { startOidcProvider, clientCredentials, authorizationCode, jwks } from '../lib/oidc.mjs';

let op;
let rogue;
let gw;
let base;
let good;
const init = {
  jsonrpc: '2.0', id: 1, method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'attack', version: '1' } },
};
const b64 = (o) => Buffer.from(JSON.stringify(o)).toString('base64url');

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

const bearer = (t) => ({ authorization: `Bearer ${t}` });

// A refusal: 401, the challenge with invalid_token and a reason.
async function refused(token, why) {
  const r = await post(gw, init, { headers: bearer(token) });
  assert.equal(r.status, 401, r.text);
  const h = r.headers.get('www-authenticate');
  assert.match(h, /^Bearer resource_metadata="[^"]+", scope="mcp:tools", error="invalid_token", error_description="[^"]+"$/);
  if (why) assert.match(h, why);
  return h;
}

before(async () => {
  op = await startOidcProvider();
  rogue = await startOidcProvider();
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  gw = await startGateway({
    listen: `127.0.0.1:${port}`,
    servers: [demo('alpha')],
    globals: `oauth = { resource = ${q(base)}; scopes = [ "mcp:tools" ];
  issuers = ( { issuer = ${q(op.issuer)}; } ); };`,
  });
  await gw.waitFor((st) => st.issuers?.[0]?.keys > 0, 'the provider\'s keys');
  good = (await clientCredentials(op.issuer, { resource: `${base}/mcp`, scope: 'mcp:tools' })).access_token;
});
after(async () => {
  await gw?.stop();
  await op?.stop();
  await rogue?.stop();
});

test('a good token works', async () => {
  assert.equal((await post(gw, init, { headers: bearer(good) })).status, 200);
});

test('alg none, and HS256 keyed with the provider\'s public key', async () => {
  const [, payload] = good.split('.');
  await refused(`${b64({ alg: 'none', typ: 'at+jwt' })}.${payload}.`, /alg none/);
  const kid = decodeProtectedHeader(good).kid;
  const pub = (await jwks(op.issuer)).keys.find((k) => k.kid === kid);
  for (const secret of [JSON.stringify(pub), pub.n ?? pub.x]) {
    const forged = await new SignJWT(JSON.parse(Buffer.from(payload, 'base64url')))
      .setProtectedHeader({ alg: 'HS256', typ: 'at+jwt', kid })
      .sign(new TextEncoder().encode(secret));
    await refused(forged, /shared secret/);
  }
});

test('another key under the provider\'s kid; a changed payload', async () => {
  const [h, payload, sig] = good.split('.');
  const header = decodeProtectedHeader(good);
  const claims = JSON.parse(Buffer.from(payload, 'base64url'));
  const { privateKey } = await generateKeyPair(header.alg);
  const forged = await new SignJWT({ ...claims, sub: 'admin' }).setProtectedHeader(header).sign(privateKey);
  await refused(forged, /signature/);
  await refused(`${h}.${b64({ ...claims, sub: 'admin' })}.${sig}`, /signature/);
});

test('a token of an issuer the gateway does not trust', async () => {
  const t = (await clientCredentials(rogue.issuer, { resource: `${base}/mcp`, scope: 'mcp:tools' })).access_token;
  await refused(t, /issuer/);
});

test('the provider\'s ID token is no access token', async () => {
  const r = await authorizationCode(op.issuer, { resource: `${base}/mcp`, scope: 'openid mcp:tools' });
  assert.ok(r.id_token);
  await refused(r.id_token, /aud|typ/);
  // The access token of the same flow is fine.
  assert.equal((await post(gw, init, { headers: bearer(r.access_token) })).status, 200);
});

test('malformed, doubled, misplaced and oversized', async () => {
  await refused('not.a.jwt', /JWT|JSON/);
  await refused('a'.repeat(8000), null);
  // Not a bearer token at all, or only in the query string: no error.
  let r = await post(gw, init, { headers: { authorization: `Basic ${Buffer.from('u:p').toString('base64')}` } });
  assert.equal(r.status, 401);
  assert.doesNotMatch(r.headers.get('www-authenticate'), /error=/);
  const res = await fetch(`${base}/mcp?access_token=${good}`, {
    method: 'POST', body: JSON.stringify(init),
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
  });
  assert.equal(res.status, 401);
  // Two Authorization headers: refused before any token is read.
  const two = await rawRequest(`Authorization: Bearer ${good}\r\nAuthorization: Bearer ${good}\r\n`);
  assert.match(two, /^HTTP\/1\.1 400 /);
  // A head past the bound.
  const big = await rawRequest(`Authorization: Bearer ${'A'.repeat(20000)}\r\n`);
  assert.match(big, /^HTTP\/1\.1 431 /);
  r = await post(gw, init, { headers: bearer(good) });
  assert.equal(r.status, 200);
});

test('each refusal is logged with its reason, never the token', () => {
  const log = gw.log();
  for (const reason of ['alg_none', 'alg_hmac', 'signature', 'unknown_issuer', 'malformed']) {
    assert.match(log, new RegExp(`refused \\(${reason}\\)`), reason);
  }
  assert.ok(!log.includes(good.split('.')[2]), 'a signature in the log');
});

// One request written by hand, for heads fetch will not send; its answer.
function rawRequest(headers) {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify(init);
    const s = net.connect(Number(new URL(base).port), '127.0.0.1', () => {
      s.end(`POST /mcp HTTP/1.1\r\nHost: ${new URL(base).host}\r\nContent-Type: application/json\r\n` +
        `Accept: application/json, text/event-stream\r\n${headers}Content-Length: ${body.length}\r\n\r\n${body}`);
    });
    let text = '';
    s.on('data', (d) => { text += d; });
    s.on('end', () => resolve(text));
    s.on('error', reject);
  });
}
