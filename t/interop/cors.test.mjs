// SPDX-License-Identifier: ISC
// A page in a browser, played by jsdom (its XMLHttpRequest does CORS as
// the Fetch standard has it: the preflight, the allowed origin, methods
// and headers, and only the exposed response headers readable): a page of
// an origin in allowed_origins initializes, reads its Mcp-Session-Id,
// calls a tool, ends its session, and reads a 401's WWW-Authenticate; a
// page of another origin is refused at the preflight, and so is one of a
// loopback origin the default allows (not for pages: any local server's
// page would drive the tools); nothing reaches the upstream.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { JSDOM } from 'jsdom';
import { startGateway, demo } from '../lib/gateway.mjs';

const TOKEN = 'cors-test-token-0123456789abcdef';
const ORIGINS = 'allowed_origins = [ "http://localhost:5173", "http://127.0.0.1:3000" ];';
let gw, locked, plain;
before(async () => {
  gw = await startGateway({ servers: [demo('d')], globals: ORIGINS });
  locked = await startGateway({ servers: [demo('d')], globals: `${ORIGINS}\nauth_tokens = [ "${TOKEN}" ];` });
  plain = await startGateway({ servers: [demo('d')] });
});
after(async () => {
  assert.equal(await gw.stop(), 0);
  assert.equal(await locked.stop(), 0);
  assert.equal(await plain.stop(), 0);
});

// A page at an origin; xhr(method, url, headers, body) resolves with the
// status, the text and a header reader, or rejects on a network (CORS)
// error, as a page sees them.
function page(origin) {
  const { window } = new JSDOM('<!doctype html><p>page</p>', { url: `${origin}/app.html` });
  const xhr = (method, url, headers = {}, body = null) => new Promise((resolve, reject) => {
    const x = new window.XMLHttpRequest();
    x.open(method, url);
    for (const [k, v] of Object.entries(headers)) x.setRequestHeader(k, v);
    x.onload = () => resolve({ status: x.status, text: x.responseText, header: (n) => x.getResponseHeader(n) });
    x.onerror = () => reject(new Error(`network error (${method} ${url})`));
    x.send(body);
  });
  return { window, xhr };
}

const JSONRPC = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
// jsdom preflights for a header whose name is not safelisted, not for
// Content-Type's value as a browser does: a header the SDK sends anyway
// makes it preflight.
const PREFLIGHTED = { ...JSONRPC, 'MCP-Protocol-Version': '2025-11-25' };
const init = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'page', version: '1' } } });

test('a page of an origin in allowed_origins speaks MCP', async () => {
  const { window, xhr } = page('http://localhost:5173');
  const r = await xhr('POST', gw.url, PREFLIGHTED, init);
  assert.equal(r.status, 200);
  const sid = r.header('Mcp-Session-Id');
  assert.ok(sid, 'the session id is exposed to the page');
  const h = { ...JSONRPC, 'Mcp-Session-Id': sid, 'MCP-Protocol-Version': '2025-11-25' };
  assert.equal((await xhr('POST', gw.url, h, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }))).status, 202);
  const call = await xhr('POST', gw.url, h, JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'd__echo', arguments: { text: 'from a page' } } }));
  assert.equal(call.status, 200);
  assert.match(call.text, /from a page/);
  assert.equal((await xhr('DELETE', gw.url, { 'Mcp-Session-Id': sid })).status, 200);
  window.close();
});

test('a page of an origin in allowed_origins reads a 401 and its challenge', async () => {
  const { window, xhr } = page('http://127.0.0.1:3000');
  const r = await xhr('POST', locked.url, JSONRPC, init);
  assert.equal(r.status, 401);
  assert.match(r.header('WWW-Authenticate'), /^Bearer/);
  const ok = await xhr('POST', locked.url, { ...JSONRPC, Authorization: `Bearer ${TOKEN}` }, init);
  assert.equal(ok.status, 200);
  window.close();
});

test('a page of another origin is refused at the preflight; nothing is sent', async () => {
  const { window, xhr } = page('https://evil.example');
  const before = gw.status().sessions;
  await assert.rejects(xhr('POST', gw.url, PREFLIGHTED, init), /network error/);
  assert.equal(gw.status().sessions, before);
  assert.match(gw.log(), /refused: Origin not allowed/);
  window.close();
});

test('with no allowed_origins, a page of a loopback origin is refused at the preflight', async () => {
  const { window, xhr } = page('http://localhost:5173');
  const before = plain.status().sessions;
  await assert.rejects(xhr('POST', plain.url, PREFLIGHTED, init), /network error/);
  assert.equal(plain.status().sessions, before);
  window.close();
});
