// SPDX-License-Identifier: ISC
// A fleet: three mcp-supervisord instances behind Debian's HAProxy, with
// the shipped etc/haproxy/mcp-supervisord.cfg (a private copy with this
// test's ports, otherwise the same text).  SDK clients through HAProxy
// spread over all three, call tools and answer sampling; a stream is
// dropped and resumed; one instance is drained while sessions go on with
// no call failing, and comes back; promtool checks every instance's scrape
// under load; one is killed, and only its sessions are affected, and a
// 2026-07-28 call it was running is not run again elsewhere.  /metrics is
// not served through HAProxy.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync, mkdtempSync, rmSync, openSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { WebSocketClientTransport } from '@modelcontextprotocol/sdk/client/websocket.js';
import { CreateMessageRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { startGateway, demo, sleep, srcdir, parseSse, track, which, freePort } from '../lib/gateway.mjs';
import { post } from '../lib/modern.mjs';

const haproxyBin = which('haproxy');
const promtool = which('promtool');
if (!haproxyBin || !promtool) {
  console.log(`# SKIP: haproxy or promtool missing (Debian packages haproxy, prometheus)`);
  process.exit(process.env.MCPS_REQUIRE_ALL ? 1 : 77);
}

const NAMES = ['gw1', 'gw2', 'gw3'];
const SESSIONS = 24;
const gws = {};		// instance name -> Gateway
const ports = {};	// instance name -> port
let front;		// http://127.0.0.1:PORT, HAProxy's frontend
let haproxy;
let tmp;


// The servers of every instance: a shared upstream for calls, and a
// per-session one for sampling (a shared upstream cannot tell which of
// several clients calling at once a sampling request is for).
const servers = [demo('demo'), demo('sampler', 'isolation = "per-session";')];

async function startInstance(name, port) {
  const gw = await startGateway({
    servers,
    listen: `127.0.0.1:${port}`,
    globals: `instance = "${name}";\nallowed_hosts = [ "mcp.example.com", "127.0.0.1" ];\n` +
      `trusted_proxies = [ "127.0.0.1" ];\naccess_log = "${path.join(tmp, `${name}.access.log`)}";\n`,
  });
  gws[name] = gw;
  return gw;
}

// The shipped HAProxy configuration with this test's ports.
function haproxyConfig(frontPort) {
  let cfg = readFileSync(path.join(srcdir, 'etc/haproxy/mcp-supervisord.cfg'), 'utf8');
  const swap = (from, to) => {
    assert.ok(cfg.includes(from), `the shipped configuration has ${from}`);
    cfg = cfg.split(from).join(to);
  };
  swap('bind 127.0.0.1:8930', `bind 127.0.0.1:${frontPort}`);
  NAMES.forEach((n, i) => swap(`server ${n} 127.0.0.1:${8931 + i}`, `server ${n} 127.0.0.1:${ports[n]}`));
  return cfg;
}

// A session through HAProxy: an SDK client that answers sampling.
async function connect(label) {
  const seen = { sampling: 0 };
  const client = new Client({ name: label, version: '1.0.0' }, { capabilities: { sampling: {} } });
  client.setRequestHandler(CreateMessageRequestSchema, async () => {
    seen.sampling++;
    return { role: 'assistant', content: { type: 'text', text: `sampled by ${label}` }, model: 'test', stopReason: 'endTurn' };
  });
  const transport = new StreamableHTTPClientTransport(new URL(`${front}/mcp`));
  await client.connect(transport);
  return { client, transport, seen, instance: transport.sessionId.split('.')[0], label };
}

const text = (r) => r.content.map((c) => c.text).join('');

// A call and a sampling round trip on a session; throws on any failure.
async function work(s, i) {
  const r = await s.client.callTool({ name: 'demo__echo', arguments: { text: `${s.label}-${i}` } });
  assert.equal(text(r), `${s.label}-${i}`);
  const m = await s.client.callTool({ name: 'sampler__sample', arguments: { prompt: 'hi' } });
  assert.match(JSON.stringify(m), new RegExp(`sampled by ${s.label}`));
}

async function closeSession(s) {
  try { await s.transport.terminateSession(); } catch { /* gone */ }
  await s.client.close();
}

// Wait until pred() holds, polling; fails with what was last seen.
async function until(pred, what, ms = 20000) {
  const end = Date.now() + ms;
  let last;
  while (Date.now() < end) {
    try {
      last = await pred();
      if (last) return last;
    } catch (e) {
      last = e.message;
    }
    await sleep(100);
  }
  throw new Error(`timed out waiting for ${what} (last: ${last})`);
}

// New sessions through HAProxy until every named instance has had one
// (HAProxy has seen it up); they are closed again.
async function reachable(names) {
  await until(async () => {
    const s = await connect('probe');
    await closeSession(s);
    reachable.seen.add(s.instance);
    return names.every((n) => reachable.seen.has(n));
  }, `instances ${names.join(', ')} reachable through HAProxy`, 30000);
  reachable.seen.clear();
}
reachable.seen = new Set();

before(async () => {
  tmp = mkdtempSync(path.join(tmpdir(), 'mcps-fleet-'));
  for (const n of NAMES) ports[n] = await freePort();
  await Promise.all(NAMES.map((n) => startInstance(n, ports[n])));
  const frontPort = await freePort();
  front = `http://127.0.0.1:${frontPort}`;
  const cfg = path.join(tmp, 'haproxy.cfg');
  writeFileSync(cfg, haproxyConfig(frontPort));
  execFileSync(haproxyBin, ['-c', '-q', '-f', cfg]);
  const log = openSync(path.join(tmp, 'haproxy.log'), 'a');
  haproxy = track(spawn(haproxyBin, ['-db', '-f', cfg], { detached: true, stdio: ['ignore', log, log] }));
  await reachable(NAMES);
});

after(async () => {
  if (haproxy && haproxy.exitCode === null) {
    const done = new Promise((r) => haproxy.once('exit', r));
    try { process.kill(-haproxy.pid, 'SIGTERM'); } catch { /* gone */ }
    await done;
  }
  for (const n of Object.keys(gws)) {
    const gw = gws[n];
    if (gw.killed) continue;
    const code = await gw.stop();
    assert.equal(code, 0, `${n} exits cleanly`);
  }
  if (!process.env.KEEP_TMP) rmSync(tmp, { recursive: true, force: true });
});

let sessions = [];

test('sessions spread over all three instances, with calls and sampling through HAProxy', async () => {
  for (let i = 0; i < SESSIONS; i++) sessions.push(await connect(`c${i}`));
  const per = {};
  for (const s of sessions) per[s.instance] = (per[s.instance] ?? 0) + 1;
  assert.deepEqual(Object.keys(per).sort(), NAMES, `every instance has sessions: ${JSON.stringify(per)}`);
  for (let round = 0; round < 2; round++) await Promise.all(sessions.map((s) => work(s, round)));
  for (const s of sessions) assert.equal(s.seen.sampling, 2, `${s.label} answered its sampling requests`);
  // The shared demo upstream, with no strategy settings, asks the calling
  // client: one caller at a time, as a shared stdio upstream's origin
  // needs, one on each instance.
  for (const n of NAMES) {
    const s = sessions.find((x) => x.instance === n);
    const m = await s.client.callTool({ name: 'demo__sample', arguments: { prompt: 'hi' } });
    assert.match(JSON.stringify(m), new RegExp(`sampled by ${s.label}`), `${n}: ${JSON.stringify(m)}`);
    assert.equal(s.seen.sampling, 3);
  }
  // Each instance saw its own sessions' calls, from the clients' address
  // HAProxy passed on (PROXY protocol), in its access log.
  for (const n of NAMES) {
    const log = readFileSync(path.join(tmp, `${n}.access.log`), 'utf8');
    const mine = sessions.filter((s) => s.instance === n);
    assert.equal(log.match(/method="tools\/call" name="demo__echo".*outcome=ok/g).length, 2 * mine.length, `${n}'s calls`);
    assert.ok(!/peer=(?!127\.0\.0\.1 )/.test(log), 'the peer is the client (loopback here), never garbage');
  }
});

test('/metrics is not served through HAProxy: Prometheus scrapes each instance', async () => {
  const res = await fetch(`${front}/metrics`);
  assert.equal(res.status, 403);
  assert.doesNotMatch(await res.text(), /mcp_supervisor_/);
  const direct = await fetch(`${gws.gw1.base}/metrics`);
  assert.equal(direct.status, 200);
});

test('legacy SSE and WebSocket sessions through HAProxy', async () => {
  const legacy = new Client({ name: 'legacy', version: '1' });
  const lt = new SSEClientTransport(new URL(`${front}/sse`));
  await legacy.connect(lt);
  // POST /messages?sessionId= goes to the instance that holds the stream.
  for (let i = 0; i < 3; i++) assert.equal(text(await legacy.callTool({ name: 'demo__echo', arguments: { text: `l${i}` } })), `l${i}`);
  await legacy.close();
  const ws = new Client({ name: 'ws', version: '1' });
  await ws.connect(new WebSocketClientTransport(new URL(`${front.replace('http', 'ws')}/ws`)));
  assert.equal(text(await ws.callTool({ name: 'demo__echo', arguments: { text: 'over ws' } })), 'over ws');
  await ws.close();
});

// Read a streaming response's events until pred says stop.
async function readEvents(res, pred) {
  const reader = res.body.getReader();
  const dec = new TextDecoder();
  let buf = '';
  const events = [];
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += dec.decode(value, { stream: true });
    let i;
    while ((i = buf.indexOf('\n\n')) >= 0) {
      events.push(...parseSse(buf.slice(0, i + 2)));
      buf = buf.slice(i + 2);
      if (pred(events)) {
        await reader.cancel();
        return events;
      }
    }
  }
  return events;
}

// 2026-07-28 clients (SDK v2, pinned) have no session: their requests go
// to any instance, but a call that needs the client's input is parked at
// one, and its retry's requestState names it.  HAProxy reads the name
// from the body; a retry sent elsewhere would be refused by name.
test('2026-07-28 clients through HAProxy: every retry with a requestState reaches the instance holding its call', async () => {
  const clients = [];
  for (let c = 0; c < 3; c++) {
    const client = new ModernClient({ name: `modern${c}`, version: '1' },
      { capabilities: { sampling: {} }, versionNegotiation: { mode: { pin: '2026-07-28' } } });
    client.seen = 0;
    client.setRequestHandler('sampling/createMessage', async () => {
      client.seen++;
      return { role: 'assistant', content: { type: 'text', text: `sampled by modern${c}` }, model: 'm', stopReason: 'endTurn' };
    });
    await client.connect(new ModernTransport(new URL(`${front}/mcp`)));
    assert.equal(client.getNegotiatedProtocolVersion(), '2026-07-28');
    clients.push(client);
  }
  const before = Object.fromEntries(NAMES.map((n) => [n, readFileSync(path.join(tmp, `${n}.access.log`), 'utf8').length]));
  // One call at a time: these clients have no token, so they are one
  // principal, and two of its calls in flight through a stdio upstream
  // would make its sampling request ambiguous (refused: era tests).
  // HAProxy balances each request, so the calls still spread.
  for (let i = 0; i < 4; i++) {
    for (const [c, client] of clients.entries()) {
      const r = await client.callTool({ name: 'sampler__sample', arguments: { prompt: 'hi' } });
      assert.match(JSON.stringify(r), new RegExp(`sampled by modern${c}`));
    }
  }
  for (const client of clients) assert.equal(client.seen, 4, 'each call asked its client once');
  // The parked calls were spread: more than one instance parked some.
  const parkedAt = NAMES.filter((n) => /method="tools\/call" name="sampler__sample"/.test(
    readFileSync(path.join(tmp, `${n}.access.log`), 'utf8').slice(before[n])));
  assert.ok(parkedAt.length > 1, `the calls went to several instances: ${parkedAt}`);
  for (const n of NAMES) {
    assert.equal(gws[n].status().parked, 0, `${n} holds no parked call`);
    assert.doesNotMatch(gws[n].log(), /another gateway instance|token of gateway instance/);
  }
  for (const client of clients) await client.close();
});

test('a stream dropped and resumed through HAProxy', async () => {
  const s = sessions[0];
  const sid = s.transport.sessionId;
  const headers = {
    'content-type': 'application/json', accept: 'application/json, text/event-stream',
    'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25',
  };
  const res = await fetch(`${front}/mcp`, {
    method: 'POST', headers,
    body: JSON.stringify({ jsonrpc: '2.0', id: 'long', method: 'tools/call', params: { name: 'demo__sleep', arguments: { ms: 1500, steps: 5 }, _meta: { progressToken: 'p' } } }),
  });
  assert.equal(res.status, 200);
  const first = await readEvents(res, (ev) => ev.length >= 3);
  const last = first[first.length - 1].id;
  assert.ok(last, 'events have ids');
  const got = first.slice(1).map((e) => JSON.parse(e.data).params.progress);
  // The client is gone; reconnect through HAProxy with Last-Event-ID.
  const again = await fetch(`${front}/mcp`, { headers: { ...headers, accept: 'text/event-stream', 'last-event-id': last } });
  assert.equal(again.status, 200, 'the resumption reached the owner');
  const rest = parseSse(await again.text()).filter((e) => e.data !== '').map((e) => JSON.parse(e.data));
  for (const m of rest) if (m.method === 'notifications/progress') got.push(m.params.progress);
  assert.deepEqual(got, [1, 2, 3, 4, 5], 'every progress step exactly once');
  const final = rest[rest.length - 1];
  assert.equal(final.id, 'long');
  assert.ok(final.result, 'and the response');
});

test('one instance drained: no call fails, new sessions go elsewhere, it stops, it comes back', async () => {
  const drained = 'gw2';
  let failures = 0;
  let calls = 0;
  let stop = false;
  const loops = sessions.map(async (s, k) => {
    for (let i = 0; !stop; i++) {
      try {
        await work(s, `d${i}`);
        calls++;
      } catch (e) {
        failures++;
        console.log(`# ${s.label} on ${s.instance}: ${e.message}`);
      }
      await sleep(20 + k);
    }
  });
  await sleep(300);
  const out = gws[drained].mcpctl('drain', '120');
  assert.match(out, /draining: no new sessions/);
  // New sessions while the drain takes effect at HAProxy: none fails, and
  // none lands on the drained instance.
  const fresh = [];
  for (let i = 0; i < 9; i++) {
    fresh.push(await connect(`n${i}`));
    await sleep(150);
  }
  assert.ok(fresh.every((s) => s.instance !== drained), `new sessions avoid ${drained}: ${fresh.map((s) => s.instance)}`);
  for (const s of fresh) await work(s, 'fresh');
  const before = calls;
  await until(() => calls > before + 2 * sessions.length, 'calls going on during the drain');
  stop = true;
  await Promise.all(loops);
  assert.equal(failures, 0, `no call failed (${calls} made)`);
  // The drained instance's clients end their sessions; then it stops.
  const leaving = sessions.filter((s) => s.instance === drained);
  assert.ok(leaving.length > 0);
  for (const s of leaving) await closeSession(s);
  sessions = sessions.filter((s) => s.instance !== drained).concat(fresh);
  const gw = gws[drained];
  const code = await until(() => gw.exited ? `exit ${gw.exitCode}` : false, `${drained} to stop`, 30000);
  assert.equal(code, 'exit 0');
  assert.match(gw.log(), /drain: no session left, stopping/);
  await gw.stop();
  // A rolling restart: the instance comes back on its port, and HAProxy
  // sends it new sessions again.
  await startInstance(drained, ports[drained]);
  await reachable([drained]);
});

// After the drain, the drained instance came back with no session: new
// sessions are made until every instance has some, so that every scrape
// is taken under load.
test('promtool passes every instance\'s scrape, taken under load', async () => {
  for (let i = 0; i < 12 && !NAMES.every((n) => sessions.some((s) => s.instance === n)); i++) {
    sessions.push(await connect(`p${i}`));
  }
  const per = {};
  for (const s of sessions) per[s.instance] = (per[s.instance] ?? 0) + 1;
  assert.deepEqual(Object.keys(per).sort(), NAMES, `every instance has sessions: ${JSON.stringify(per)}`);
  let stop = false;
  const rounds = new Map();
  const load = sessions.map(async (s, i) => {
    for (let r = 0; !stop; r++) {
      await work(s, `p${i}-${r}`);
      rounds.set(s, r + 1);
    }
  });
  // Every session has made a call and a sampling round trip, and goes on.
  await until(() => sessions.every((s) => rounds.get(s) > 0), 'a round on every session');
  for (const n of NAMES) {
    const gw = gws[n];
    assert.ok(!gw.exited, `${n} runs`);
    const res = await fetch(`${gw.base}/metrics`);
    assert.equal(res.status, 200);
    const body = await res.text();
    execFileSync(promtool, ['check', 'metrics'], { input: body });
    assert.match(body, new RegExp(`mcp_supervisor_build_info\\{version="[^"]+",gateway_instance="${n}"\\} 1`));
    assert.match(body, /mcp_supervisor_server_requests_total\{upstream="sampler",kind="sampling",outcome="client"\} [1-9]/);
    assert.match(body, /mcp_supervisor_requests_total\{upstream="demo",method="tools\/call",outcome="ok"\} [1-9]/);
  }
  stop = true;
  await Promise.all(load);
});

// Which instance took a call: the one whose calls in flight went up.
async function landedAt(before) {
  return until(() => NAMES.find((n) => gws[n].status().calls_in_flight > before[n]), 'the call in flight at an instance');
}

test('one instance killed: only its sessions are affected, new sessions succeed, a call it ran is not run again', async () => {
  // 2026-07-28 calls have no session: HAProxy sends them to any instance,
  // and once one has gone to an instance it must not send it again
  // elsewhere when that instance dies (the call may have run).  Slow
  // calls are made, and the instance the first went to is killed while
  // it runs it (every instance has sessions since the last test).
  const logs = () => Object.fromEntries(NAMES.map((n) => [n, readFileSync(path.join(tmp, `${n}.access.log`), 'utf8')]));
  const logged = logs();
  const modern = [];
  for (let i = 0; i < 3; i++) {
    const before = Object.fromEntries(NAMES.map((n) => [n, gws[n].status().calls_in_flight]));
    const answer = post(`${front}/mcp`, 'tools/call', { name: 'demo__sleep', arguments: { ms: 4000 } }, { id: `slow${i}` })
      .then((r) => (r.status === 200 && r.body?.result ? 'ok' : `status ${r.status}`), (e) => `failed: ${e.message}`);
    modern.push({ answer, at: await landedAt(before) });
  }
  const victim = modern[0].at;
  const theirs = sessions.filter((s) => s.instance === victim);
  const others = sessions.filter((s) => s.instance !== victim);
  assert.ok(theirs.length > 0 && others.length > 0);
  process.kill(-gws[victim].pid, 'SIGKILL');
  gws[victim].killed = true;
  await until(() => gws[victim].exited, `${victim} to be gone`);
  for (const c of modern) c.outcome = await c.answer;
  for (const c of modern) {
    if (c.at === victim) assert.notEqual(c.outcome, 'ok', `the call at ${victim} failed, and was not run again elsewhere`);
    else assert.equal(c.outcome, 'ok', `a call at ${c.at}`);
  }
  const now = logs();
  const ran = NAMES.filter((n) => n !== victim).reduce((k, n) =>
    k + (now[n].slice(logged[n].length).match(/method="tools\/call" name="demo__sleep"/g) ?? []).length, 0);
  assert.equal(ran, modern.filter((c) => c.at !== victim).length, 'the living ran their own calls only');
  // Everyone else is untouched.
  await Promise.all(others.map((s) => work(s, 'after-kill')));
  // Its clients are told their session is gone (404 from another
  // instance), and start anew elsewhere.
  for (const s of theirs) {
    const err = await s.client.callTool({ name: 'demo__echo', arguments: { text: 'x' } }).then(() => null, (e) => e);
    assert.ok(err, `${s.label}'s session is gone`);
    assert.match(String(err.message), /404|Session not found|fetch failed|terminated|closed/i, `${s.label}: ${err.message}`);
    await s.client.close().catch(() => {});
    const again = await connect(`${s.label}-again`);
    assert.notEqual(again.instance, victim);
    await work(again, 'again');
    others.push(again);
  }
  for (let i = 0; i < 6; i++) {
    const s = await connect(`k${i}`);
    assert.notEqual(s.instance, victim, 'new sessions go to the living');
    await work(s, 'k');
    others.push(s);
  }
  sessions = others;
  for (const s of sessions) await closeSession(s);
});

