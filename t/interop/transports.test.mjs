// SPDX-License-Identifier: ISC
// Every upstream transport, fronted by the gateway: the reference server
// over Streamable HTTP, over legacy SSE and behind a WebSocket server of the
// `ws` package, mcp-demo-server behind that WebSocket server, the SDK's own
// Streamable HTTP transport with JSON answers, and servers that misbehave
// on purpose: a WebSocket server with a wrong accept value, a legacy SSE
// server that names another origin, and a Streamable HTTP server that fails
// in many ways.
import { test, after, before, describe } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import http from 'node:http';
import { createHash, randomUUID } from 'node:crypto';
import { writeFileSync, mkdtempSync, rmSync, readdirSync, readlinkSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema, CreateMessageRequestSchema, ElicitRequestSchema, ListToolsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { startGateway, startNodeServer, q, nodeModules, srcdir, bin, sleep } from '../lib/gateway.mjs';

const everything = path.join(nodeModules, '@modelcontextprotocol/server-everything/dist/index.js');
const fixture = (f) => path.join(srcdir, 't/fixtures', f);
const text = (r) => r.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');

// Established TCP connections of a process (its sockets) to a port.
function upstreamConnections(pid, port) {
  const inodes = new Set();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1]);
    } catch { /* closed meanwhile */ }
  }
  let n = 0;
  for (const line of readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f.length > 9 && parseInt(f[2].split(':')[1], 16) === port && f[3] === '01' && inodes.has(f[9])) n++;
  }
  return n;
}

async function connect(gw) {
  const seen = { sampling: 0, elicitation: 0 };
  const client = new Client({ name: 'transports', version: '1' }, { capabilities: { sampling: {}, elicitation: { form: {} } } });
  client.setRequestHandler(CreateMessageRequestSchema, async () => {
    seen.sampling++;
    return { role: 'assistant', content: { type: 'text', text: 'client sampled' }, model: 'm' };
  });
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    seen.elicitation++;
    const content = {};
    for (const [k, v] of Object.entries(req.params.requestedSchema?.properties ?? {})) {
      if (v.type === 'string') content[k] = v.enum ? v.enum[0] : (v.format === 'email' ? 'a@b.example' : v.format === 'date' ? '2026-01-01' : v.format === 'uri' ? 'https://example.com' : 'x');
      else if (v.type === 'integer' || v.type === 'number') content[k] = v.minimum ?? 1;
      else if (v.type === 'boolean') content[k] = true;
      else if (v.type === 'array') content[k] = v.items?.enum ? [v.items.enum[0]] : (v.items?.anyOf ? [v.items.anyOf[0].const] : []);
    }
    return { action: 'accept', content };
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(gw.url)));
  return { client, seen };
}

describe('the reference server over Streamable HTTP, legacy SSE and WebSocket', () => {
  let gw, http, sse, ws;
  before(async () => {
    http = await startNodeServer([everything, 'streamableHttp']);
    sse = await startNodeServer([everything, 'sse']);
    ws = await startNodeServer([fixture('ws-upstream.mjs'), '--', process.execPath, everything, 'stdio']);
    gw = await startGateway({ servers: [
      `{ name = "h"; transport = "http"; url = "http://127.0.0.1:${http.port}/mcp"; }`,
      `{ name = "s"; transport = "sse"; url = "http://127.0.0.1:${sse.port}/sse"; }`,
      `{ name = "w"; transport = "ws"; url = "ws://127.0.0.1:${ws.port}/mcp"; }`,
    ] });
    await gw.waitFor((s) => s.upstreams.every((u) => u.tools >= 15), 'conditional tools');
  });
  after(async () => {
    const code = await gw?.stop();
    for (const srv of [http, sse, ws]) await srv?.stop();
    if (gw) assert.equal(code, 0);
  });

  for (const p of ['h', 's', 'w']) {
    test(`${p}: tools, calls, sampling and elicitation`, async () => {
      const { client, seen } = await connect(gw);
      const { tools } = await client.listTools();
      assert.ok(tools.some((t) => t.name === `${p}__trigger-sampling-request`));
      assert.equal(text(await client.callTool({ name: `${p}__echo`, arguments: { message: 'hi' } })), 'Echo: hi');
      assert.match(text(await client.callTool({ name: `${p}__trigger-sampling-request`, arguments: { prompt: 'q' } })), /client sampled/);
      assert.match(text(await client.callTool({ name: `${p}__trigger-elicitation-request`, arguments: {} })), /accept/i);
      assert.equal(seen.sampling, 1);
      assert.equal(seen.elicitation, 1);
      const progress = [];
      await client.callTool({ name: `${p}__trigger-long-running-operation`, arguments: { duration: 1, steps: 2 } },
        undefined, { onprogress: (x) => progress.push(x.progress) });
      assert.equal(progress.length, 2);
      await client.close();
    });
  }
});

describe('a WebSocket upstream', () => {
  let gw, ws, bad, wrong;
  const upgraded = new Set();
  before(async () => {
    ws = await startNodeServer([fixture('ws-upstream.mjs'), '--', bin.demo, '--test-tools', '--name', 'ws']);
    bad = await startNodeServer([fixture('ws-upstream.mjs'), '--no-subprotocol', '--', bin.demo, '--test-tools', '--name', 'ws']);
    // A server that answers the upgrade with the accept value of another
    // GUID (the mistake the worker and its old fixture once shared).
    wrong = http.createServer((req, res) => { res.writeHead(426); res.end(); });
    wrong.on('upgrade', (req, socket) => {
      upgraded.add(socket);
      const accept = createHash('sha1').update(`${req.headers['sec-websocket-key']}258EAFA5-E914-47DA-95CA-C5AB0DC11B65`).digest('base64');
      socket.end('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
        `Sec-WebSocket-Accept: ${accept}\r\nSec-WebSocket-Protocol: mcp\r\n\r\n`);
    });
    const wrongPort = await new Promise((r) => wrong.listen(0, '127.0.0.1', () => r(wrong.address().port)));
    gw = await startGateway({ servers: [
      `{ name = "w"; transport = "ws"; url = "ws://127.0.0.1:${ws.port}/mcp"; ping_interval = 1; }`,
      `{ name = "nosub"; transport = "ws"; url = "ws://127.0.0.1:${bad.port}/mcp"; max_failures = 1; }`,
      `{ name = "wrong"; transport = "ws"; url = "ws://127.0.0.1:${wrongPort}/mcp"; max_failures = 1; }`,
    ], wait: false });
    await gw.waitFor((s) => s.upstreams.find((u) => u.name === 'w').state === 'ready', 'ws ready');
  });
  after(async () => {
    const code = await gw?.stop();
    for (const srv of [ws, bad]) await srv?.stop();
    // Not waited for: an upgraded socket may never count as closed.
    for (const s of upgraded) s.destroy();
    wrong?.close();
    if (gw) assert.equal(code, 0);
  });

  test('calls, sampling and large messages over ws://', async () => {
    const { client, seen } = await connect(gw);
    assert.equal(text(await client.callTool({ name: 'w__echo', arguments: { text: 'over ws' } })), 'over ws');
    assert.equal(text(await client.callTool({ name: 'w__sample', arguments: { prompt: 'p' } })), 'sampled: client sampled');
    assert.equal(seen.sampling, 1);
    assert.equal(text(await client.callTool({ name: 'w__big', arguments: { bytes: 1000000 } })).length, 1000000);
    await sleep(2500);	// pings every second keep it up
    assert.equal(gw.upstream('w').restarts, 0);
    await client.close();
  });

  test('a server that does not accept the mcp subprotocol is refused', async () => {
    const u = await gw.waitFor((s) => s.upstreams.find((x) => x.name === 'nosub').state === 'failed', 'nosub failed');
    assert.match(u.upstreams.find((x) => x.name === 'nosub').last_error, /did not accept the "mcp" subprotocol/);
  });

  test('a server whose Sec-WebSocket-Accept is wrong is refused', async () => {
    const u = await gw.waitFor((s) => s.upstreams.find((x) => x.name === 'wrong').state === 'failed', 'wrong failed');
    assert.match(u.upstreams.find((x) => x.name === 'wrong').last_error, /bad Sec-WebSocket-Accept/);
  });
});

describe('a legacy SSE upstream whose endpoint is on another origin', () => {
  let gw, stream, other, posts = 0;
  const listen = (srv) => new Promise((r) => srv.listen(0, '127.0.0.1', () => r(srv.address().port)));
  // Written by hand on purpose: no library server names another origin.
  before(async () => {
    other = http.createServer((req, res) => { posts++; res.writeHead(202); res.end(); });
    const otherPort = await listen(other);
    stream = http.createServer((req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      res.write(`event: endpoint\ndata: http://127.0.0.1:${otherPort}/messages\n\n`);
    });
    const port = await listen(stream);
    gw = await startGateway({ servers: [
      `{ name = "x"; transport = "sse"; url = "http://127.0.0.1:${port}/sse"; max_failures = 1; }`,
    ], wait: false });
  });
  after(async () => {
    assert.equal(await gw.stop(), 0);
    for (const srv of [stream, other]) { srv.closeAllConnections(); await new Promise((r) => srv.close(r)); }
  });

  test('is refused at once (not after init_timeout), and nothing is posted there', async () => {
    const s = await gw.waitFor((st) => st.upstreams.find((u) => u.name === 'x').state === 'failed', 'x failed', 10000);
    assert.match(s.upstreams.find((u) => u.name === 'x').last_error,
      /^upstream x: endpoint event refused \(not on the upstream's scheme, host and port\): http:\/\/127\.0\.0\.1:\d+\/messages$/);
    assert.equal(posts, 0);
  });
});

describe('a Streamable HTTP upstream served by the SDK with JSON answers', () => {
  // The SDK's own StreamableHTTPServerTransport (enableJsonResponse), one
  // per session, for what http-faults.mjs does by hand when it behaves:
  // JSON answers, and 404 for a session the server has ended.  Ended
  // sessions stay in the map so that the 404 is the SDK's.
  let gw, srv;
  const sessions = new Map();
  const tool = (name) => ({ name, description: name, inputSchema: { type: 'object', properties: { text: { type: 'string' } } } });

  // A new session: a transport and a server with echo and expire.
  async function session() {
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      enableJsonResponse: true,
      onsessioninitialized: (id) => sessions.set(id, transport),
    });
    const server = new Server({ name: 'sdk-json', version: '1' }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [tool('echo'), tool('expire')] }));
    server.setRequestHandler(CallToolRequestSchema, async (r) => {
      if (r.params.name === 'expire') transport.expire = true;
      return { content: [{ type: 'text', text: r.params.name === 'expire' ? 'expired' : r.params.arguments.text }] };
    });
    await server.connect(transport);
    return transport;
  }

  before(async () => {
    srv = http.createServer(async (req, res) => {
      const sid = req.headers['mcp-session-id'];
      const transport = sid === undefined ? await session() : sessions.get(sid);
      if (transport === undefined) {
        res.writeHead(404).end();
        return;
      }
      // Once expire's answer is out, the session is over.
      res.on('finish', () => { if (transport.expire) transport.close(); });
      await transport.handleRequest(req, res);
    });
    const port = await new Promise((r) => srv.listen(0, '127.0.0.1', () => r(srv.address().port)));
    gw = await startGateway({ servers: [
      `{ name = "j"; transport = "http"; url = "http://127.0.0.1:${port}/mcp"; restart_delay = 1; }`,
    ] });
  });
  after(async () => {
    const code = await gw?.stop();
    srv?.closeAllConnections();
    if (srv) await new Promise((r) => srv.close(r));
    if (gw) assert.equal(code, 0);
  });

  test('lists and calls; a session the server ends is started afresh', async () => {
    const { client } = await connect(gw);
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), ['j__echo', 'j__expire']);
    assert.equal(text(await client.callTool({ name: 'j__echo', arguments: { text: 'as JSON' } })), 'as JSON');
    const restarts = gw.upstream('j').restarts;
    assert.equal(text(await client.callTool({ name: 'j__expire', arguments: {} })), 'expired');
    await assert.rejects(client.callTool({ name: 'j__echo', arguments: { text: 'x' } }), /ended our session \(HTTP 404\)|restarting/);
    await gw.waitFor((s) => s.upstreams[0].state === 'ready' && s.upstreams[0].restarts > restarts, 'a new session', 10000);
    assert.equal(text(await client.callTool({ name: 'j__echo', arguments: { text: 'again' } })), 'again');
    assert.equal(sessions.size, 2);
    await client.close();
  });
});

describe('the reference server over Streamable HTTP with 70 long calls at once', () => {
  let gw, srv;
  before(async () => {
    srv = await startNodeServer([everything, 'streamableHttp']);
    // Pinged soon and often: a ping that curl queued behind the calls'
    // connections would go unanswered, and the upstream taken for hung.
    gw = await startGateway({ servers: [
      `{ name = "h"; transport = "http"; url = "http://127.0.0.1:${srv.port}/mcp"; ping_interval = 1; ping_timeout = 2; }`,
    ] });
  });
  after(async () => { assert.equal(await gw.stop(), 0); await srv.stop(); });

  test('each holds a connection for 4 s (event-stream answers over HTTP/1.1): the pings still get through', async () => {
    const { client } = await connect(gw);
    const calls = [];
    for (let i = 0; i < 70; i++) {
      calls.push(client.callTool({ name: 'h__trigger-long-running-operation', arguments: { duration: 4, steps: 1 } },
        undefined, { timeout: 30000 }));
    }
    const results = await Promise.allSettled(calls);
    const failed = results.filter((r) => r.status === 'rejected').map((r) => String(r.reason?.message));
    assert.deepEqual(failed, [], failed.slice(0, 3).join('\n'));
    assert.match(text(results[69].value), /Long running operation completed/);
    assert.equal(gw.upstream('h').restarts, 0);
    await client.close();
  });
});

describe('the reference server over Streamable HTTP with 20 long calls cancelled', () => {
  let gw, srv;
  before(async () => {
    srv = await startNodeServer([everything, 'streamableHttp']);
    gw = await startGateway({ servers: [`{ name = "h"; transport = "http"; url = "http://127.0.0.1:${srv.port}/mcp"; }`] });
  });
  after(async () => { assert.equal(await gw.stop(), 0); await srv.stop(); });

  test('calls cancelled by the client close their streams: no connection is left behind', async () => {
    const { client } = await connect(gw);
    const calls = [];
    const acs = [];
    for (let i = 0; i < 20; i++) {
      acs.push(new AbortController());
      calls.push(client.callTool({ name: 'h__trigger-long-running-operation', arguments: { duration: 30, steps: 1 } },
        undefined, { signal: acs[i].signal }).catch(() => 'cancelled'));
    }
    await sleep(1000);
    const { pid } = gw.upstream('h');
    const held = upstreamConnections(pid, srv.port);
    assert.ok(held >= 20, `each call holds a connection (${held})`);
    // One at a time, so that the cancellations' own POSTs share one
    // connection of the pool.
    for (const ac of acs) {
      ac.abort('changed my mind');
      await sleep(50);
    }
    assert.ok((await Promise.all(calls)).every((r) => r === 'cancelled'));
    let n;
    for (let i = 0; i < 40 && (n = upstreamConnections(pid, srv.port)) > 4; i++) await sleep(100);
    assert.ok(n <= 4, `${n} connections still open`);
    assert.equal(text(await client.callTool({ name: 'h__echo', arguments: { message: 'still' } })), 'Echo: still');
    await client.close();
  });
});

describe('a per-session Streamable HTTP upstream whose DELETEs hang', () => {
  let gw, srv;
  before(async () => {
    srv = await startNodeServer([fixture('http-faults.mjs')]);
    gw = await startGateway({ servers: [
      `{ name = "p"; transport = "http"; url = "http://127.0.0.1:${srv.port}/mcp"; isolation = "per-session"; }`,
    ] });
  });
  after(async () => { await gw?.stop(); await srv?.stop(); });

  test('a session ended at the upstream does not hold up the others; the worker waits for its DELETEs at exit', async () => {
    const b = await connect(gw);
    assert.equal(text(await b.client.callTool({ name: 'p__hold_deletes', arguments: {} })), 'holding');
    const ta = new StreamableHTTPClientTransport(new URL(gw.url));
    const a = new Client({ name: 'transports', version: '1' });
    await a.connect(ta);
    assert.equal(text(await a.callTool({ name: 'p__ok', arguments: {} })), 'fine');
    await ta.terminateSession();
    await a.close();
    // The upstream holds A's instance's DELETE until B's next call
    // reaches it: only a worker that kept going meanwhile gets its 200.
    assert.equal(text(await b.client.callTool({ name: 'p__held_deletes', arguments: {} })), 'answered 1');
    for (let i = 0; i < 100 && !/ended a session \(HTTP 200\)/.test(gw.log()); i++) await sleep(20);
    assert.match(gw.log(), /upstream p: ended a session \(HTTP 200\)/);
    await b.client.close();
    // At exit, the catalog's session and B's are ended too, and the
    // worker waits for them.
    assert.equal(await gw.stop(), 0);
    assert.equal(srv.log().match(/^DELETE \d+$/gm)?.length, 3, srv.log());
  });
});

describe('a Streamable HTTP upstream that misbehaves', () => {
  let gw, srv, dir;
  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'mcps-secret-'));
    writeFileSync(path.join(dir, 'token'), 's3cret\n');
    srv = await startNodeServer([fixture('http-faults.mjs')]);
    process.env.MCPS_TEST_HEADER = 'from-env';
    gw = await startGateway({ servers: [
      `{ name = "f"; transport = "http"; url = "http://127.0.0.1:${srv.port}/mcp"; request_timeout = 2; restart_delay = 1; ` +
        `headers = { Authorization = ${q(`Bearer \${file:${path.join(dir, 'token')}}`)}; X-Test = "\${env:MCPS_TEST_HEADER}"; }; }`,
    ] });
  });
  after(async () => { assert.equal(await gw.stop(), 0); await srv.stop(); rmSync(dir, { recursive: true, force: true }); });

  test('JSON and event-stream answers; headers with secrets from a file and the environment', async () => {
    const { client } = await connect(gw);
    assert.equal(text(await client.callTool({ name: 'f__ok', arguments: {} })), 'fine');
    const progress = [];
    assert.equal(text(await client.callTool({ name: 'f__sse_ok', arguments: {} }, undefined, { onprogress: (p) => progress.push(p) })), 'streamed');
    assert.equal(progress.length, 1);
    assert.deepEqual(JSON.parse(text(await client.callTool({ name: 'f__headers', arguments: {} }))),
      { authorization: 'Bearer s3cret', 'x-test': 'from-env', initialized: '2025-11-25' });
    assert.doesNotMatch(gw.log(), /s3cret/, 'secrets stay out of the log');
    await client.close();
  });

  test('HTTP 500, a stream closed early, garbage SSE, a hang, polling, JSON for another id', async () => {
    const { client } = await connect(gw);
    await assert.rejects(client.callTool({ name: 'f__fail500', arguments: {} }), /answered HTTP 500/);
    await assert.rejects(client.callTool({ name: 'f__close_stream', arguments: {} }), /ended before the response/);
    assert.equal(text(await client.callTool({ name: 'f__garbage_sse', arguments: {} })), 'after garbage');
    assert.match(gw.log(), /upstream sent an invalid message/);
    await assert.rejects(client.callTool({ name: 'f__hang', arguments: {} }), (e) => e.code === -32001);
    // A server that makes its client poll: resumed as long as it makes
    // progress (7 times, past the 5 in a row a silent stream gets).
    assert.equal(text(await client.callTool({ name: 'f__poll', arguments: {} })), 'polled 7 times');
    // JSON for another id: the call fails at once, not at request_timeout.
    await assert.rejects(client.callTool({ name: 'f__wrong_id', arguments: {} }),
      (e) => e.code === -32000 && /answered a request with JSON that is not its response/.test(e.message));
    assert.equal(gw.upstream('f').restarts, 0, 'none of that costs a restart');
    await client.close();
  });

  test('an upstream that ends our session: a fresh initialize', async () => {
    const { client } = await connect(gw);
    const before = gw.upstream('f').restarts;
    assert.equal(text(await client.callTool({ name: 'f__expire', arguments: {} })), 'expired');
    await assert.rejects(client.callTool({ name: 'f__ok', arguments: {} }), /ended our session \(HTTP 404\)|restarting/);
    await gw.waitFor((s) => s.upstreams[0].state === 'ready' && s.upstreams[0].restarts > before, 'a new session', 10000);
    assert.equal(text(await client.callTool({ name: 'f__ok', arguments: {} })), 'fine');
    await client.close();
  });

  test('an upstream that goes away: calls fail fast, and it comes back', async () => {
    const { client } = await connect(gw);
    await assert.rejects(client.callTool({ name: 'f__die', arguments: {} }), /-32000/);
    await gw.waitFor((s) => s.upstreams[0].state !== 'ready', 'upstream down');
    await assert.rejects(client.callTool({ name: 'f__ok', arguments: {} }), /upstream f is (restarting|starting)/);
    const port = srv.port;
    await srv.stop();
    srv = await startNodeServer([fixture('http-faults.mjs')], { env: { PORT: String(port) } });
    await gw.waitFor((s) => s.upstreams[0].state === 'ready', 'reconnected', 30000);
    assert.equal(text(await client.callTool({ name: 'f__ok', arguments: {} })), 'fine');
    await client.close();
  });
});
