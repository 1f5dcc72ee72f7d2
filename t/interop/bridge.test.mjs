// SPDX-License-Identifier: ISC
// The stdio bridge, mcpctl connect, as hosts start it: the SDK's
// StdioClientTransport spawning "mcpctl connect URL" gets the reference
// server's sampling, elicitation and roots, calls and progress; the MCP
// Inspector's CLI drives it too.  The token comes from MCPCTL_TOKEN or -T
// file, never argv; a refusal or a gateway that goes away is said on stderr
// with a non-zero exit, so the host shows the server as failed; end of
// input ends the session.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { startGateway, demo, q, nodeModules, bin, sleep } from '../lib/gateway.mjs';

const everything = path.join(nodeModules, '@modelcontextprotocol/server-everything/dist/index.js');
const inspector = path.join(nodeModules, '.bin/mcp-inspector');
const ev = (name, extra = '') =>
  `{ name = ${q(name)}; transport = "stdio"; command = [ ${q(process.execPath)}, ${q(everything)}, "stdio" ]; ${extra} }`;
const TOKEN = 'bridge-test-token-0123456789';
const text = (r) => r.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
let gw, dir, url;

before(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'mcps-bridge-'));
  writeFileSync(path.join(dir, 'token'), `${TOKEN}\n`, { mode: 0o600 });
  gw = await startGateway({
    globals: `auth_tokens = [ ${q(TOKEN)} ];`,
    servers: [demo('demo'), ev('ev'), ev('evs', 'isolation = "per-session";')],
  });
  url = `ws://${gw.status().listen}/ws`;
  await gw.waitFor((s) => s.upstreams.find((u) => u.name === 'ev').tools >= 15, 'conditional tools');
});
after(async () => {
  assert.equal(await gw.stop(), 0);
  rmSync(dir, { recursive: true, force: true });
});

// An SDK client over the bridge, the way a host starts a stdio server.
async function bridged(args, env = {}) {
  const seen = { sampling: 0, elicitation: 0, roots: 0, stderr: '' };
  const transport = new StdioClientTransport({ command: bin.mcpctl, args: ['connect', ...args], env: { ...process.env, ...env }, stderr: 'pipe' });
  transport.stderr?.on('data', (d) => { seen.stderr += d; });
  const client = new Client({ name: 'bridged', version: '1' }, { capabilities: { sampling: {}, elicitation: { form: {} }, roots: {} } });
  client.setRequestHandler(CreateMessageRequestSchema, async () => { seen.sampling++; return { role: 'assistant', content: { type: 'text', text: 'sampled across the bridge' }, model: 'm' }; });
  client.setRequestHandler(ElicitRequestSchema, async () => { seen.elicitation++; return { action: 'decline' }; });
  client.setRequestHandler(ListRootsRequestSchema, async () => { seen.roots++; return { roots: [{ uri: 'file:///srv/bridged', name: 'b' }] }; });
  await client.connect(transport);
  return { client, seen, transport };
}
// Run the bridge by hand; resolves to {code, stdout, stderr}.
function runBridge(args, { env = {}, input = '', keepOpenMs = 0 } = {}) {
  return new Promise((resolve) => {
    const child = spawn(bin.mcpctl, ['connect', ...args], { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    // 'close', not 'exit': the pipes may still hold its last words.
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    // A refused bridge exits without reading: writing to it is EPIPE.
    child.stdin.on('error', () => {});
    child.stdin.write(input);
    if (keepOpenMs >= 0) setTimeout(() => child.stdin.end(), keepOpenMs);
  });
}
const until = async (pred, ms = 5000) => { const t = Date.now() + ms; while (!pred() && Date.now() < t) await sleep(25); return pred(); };

test('the SDK over the bridge: calls, progress, sampling, elicitation and roots', async () => {
  const { client, seen } = await bridged([url], { MCPCTL_TOKEN: TOKEN });
  assert.equal(text(await client.callTool({ name: 'demo__echo', arguments: { text: 'over stdio and ws' } })), 'over stdio and ws');
  const progress = [];
  await client.callTool({ name: 'demo__sleep', arguments: { ms: 300, steps: 3 } }, undefined, { onprogress: (p) => progress.push(p.progress) });
  assert.ok(progress.length >= 2, `progress ${progress}`);
  assert.match(text(await client.callTool({ name: 'ev__trigger-sampling-request', arguments: { prompt: 'q' } })), /sampled across the bridge/);
  assert.match(text(await client.callTool({ name: 'ev__trigger-elicitation-request', arguments: {} })), /decline/i);
  assert.match(text(await client.callTool({ name: 'evs__get-roots-list', arguments: {} })), /srv\/bridged/);
  assert.equal(seen.sampling, 1);
  assert.equal(seen.elicitation, 1);
  assert.ok(seen.roots >= 1);
  assert.equal(seen.stderr, '', 'nothing to say on stderr');
  await client.close();
});

test('the token from a file; end of input ends the session', async () => {
  const before = gw.status().sessions;
  const { client } = await bridged(['-T', path.join(dir, 'token'), url]);
  assert.equal(gw.status().sessions, before + 1);
  assert.equal(text(await client.callTool({ name: 'demo__echo', arguments: { text: 'token from a file' } })), 'token from a file');
  await client.close();
  assert.ok(await until(() => gw.status().sessions === before), 'the session ended with its input');
});

// A script's pipe: its input ends before the session is open, and its
// call is still under way when it has.  What was read is passed on, the
// answers to its requests come, then the session ends (it was dropped,
// and the bridge exited 0 with nothing said).
test('input that ends early: every request passed on and answered', async () => {
  const before = gw.status().sessions;
  const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'piped', version: '1' } } };
  const call = { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'demo__sleep', arguments: { ms: 500 } } };
  const done = await runBridge([url], {
    env: { MCPCTL_TOKEN: TOKEN },
    input: `${JSON.stringify(init)}\n{"jsonrpc":"2.0","method":"notifications/initialized"}\n${JSON.stringify(call)}`,
    keepOpenMs: 0,
  });
  assert.equal(done.code, 0, done.stderr);
  const lines = done.stdout.trim().split('\n').map((l) => JSON.parse(l));
  assert.deepEqual(lines.map((m) => m.id), [1, 2]);
  assert.equal(lines[1].result.content[0].text, 'slept 500 ms');
  assert.equal(done.stderr, '');
  assert.ok(await until(() => gw.status().sessions === before), 'the session ended');
});

// What will not be answered is not waited for: a request the host
// cancelled (the gateway answers none), and a call that needs the host
// (sampling) once its input has ended: the bridge answers the gateway's
// request itself, and the call ends.
test('input that ends early: a cancelled call and a call that needs the host are not waited for', async () => {
  const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: { sampling: {} }, clientInfo: { name: 'piped', version: '1' } } };
  const sleep5 = { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'demo__sleep', arguments: { ms: 60000 } } };
  const cancel = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 2, reason: 'changed my mind' } };
  let done = await runBridge([url], {
    env: { MCPCTL_TOKEN: TOKEN },
    input: `${JSON.stringify(init)}\n{"jsonrpc":"2.0","method":"notifications/initialized"}\n${JSON.stringify(sleep5)}\n${JSON.stringify(cancel)}\n`,
    keepOpenMs: 0,
  });
  assert.equal(done.code, 0, done.stderr);
  assert.equal(done.stderr, '', 'no request was left waiting');
  assert.deepEqual(done.stdout.trim().split('\n').map((l) => JSON.parse(l).id), [1]);

  const sample = { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'ev__trigger-sampling-request', arguments: { prompt: 'q' } } };
  done = await runBridge([url], {
    env: { MCPCTL_TOKEN: TOKEN },
    input: `${JSON.stringify(init)}\n{"jsonrpc":"2.0","method":"notifications/initialized"}\n${JSON.stringify(sample)}\n`,
    keepOpenMs: 0,
  });
  assert.equal(done.code, 0, done.stderr);
  assert.equal(done.stderr, '', 'no request was left waiting');
  const answers = done.stdout.trim().split('\n').map((l) => JSON.parse(l)).filter((m) => m.method === undefined);
  assert.deepEqual(answers.map((m) => m.id), [1, 2]);
  assert.match(JSON.stringify(answers[1]), /ended its input|error/i);
});

// A host that sends SIGTERM (its server did not exit soon enough) gets a
// clean end: a close frame, exit 0, the session gone at the gateway.
test('SIGTERM ends the session cleanly', async () => {
  const before = gw.status().sessions;
  const child = spawn(bin.mcpctl, ['connect', url], { env: { ...process.env, MCPCTL_TOKEN: TOKEN }, stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  const closed = new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
  child.stdin.write('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}\n');
  assert.ok(await until(() => gw.status().sessions === before + 1), 'the session opened');
  child.kill('SIGTERM');
  const r = await closed;
  assert.deepEqual(r, { code: 0, signal: null }, stderr);
  assert.ok(await until(() => gw.status().sessions === before), 'the session ended');
});

test('the MCP Inspector CLI through the bridge', () => {
  const r = spawnSync(inspector, ['--cli', bin.mcpctl, 'connect', url, '--method', 'tools/call', '--tool-name', 'demo__echo',
    '--tool-arg', 'text=from the inspector', '-e', `MCPCTL_TOKEN=${TOKEN}`], { encoding: 'utf8', timeout: 60000 });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /from the inspector/);
});

test('refused: no token, a wrong token, no gateway; only MCP on stdout', async () => {
  const ping = '{"jsonrpc":"2.0","id":1,"method":"ping"}\n';
  let r = await runBridge([url], { input: ping, keepOpenMs: 200 });
  assert.equal(r.code, 1);
  assert.equal(r.stdout, '');
  assert.match(r.stderr, /mcpctl connect: the gateway refused the connection: 401 Unauthorized/);
  r = await runBridge([url], { env: { MCPCTL_TOKEN: 'wrong-token-wrong-token' }, input: ping, keepOpenMs: 200 });
  assert.equal(r.code, 1);
  assert.match(r.stderr, /401/);
  assert.doesNotMatch(r.stderr, /wrong-token/, 'the token is never echoed');
  r = await runBridge(['ws://127.0.0.1:1/ws'], { input: ping, keepOpenMs: 200 });
  assert.equal(r.code, 1);
  assert.match(r.stderr, /cannot connect to 127\.0\.0\.1 port 1.*is mcp-supervisord running\?/);
  r = await runBridge(['wss://127.0.0.1/ws'], { input: ping, keepOpenMs: 200 });
  assert.equal(r.code, 2);
  assert.match(r.stderr, /wss:\/\/ is not supported/);
  // A token file whose line is longer than a token may be: said, not cut.
  writeFileSync(path.join(dir, 'long-token'), `${'t'.repeat(20000)}\n`, { mode: 0o600 });
  r = await runBridge(['-T', path.join(dir, 'long-token'), url], { input: ping, keepOpenMs: 200 });
  assert.equal(r.code, 1);
  assert.match(r.stderr, /long-token: its first line is over 16384 bytes/);
  // With the token: an answer on stdout, a clean exit at end of input.
  r = await runBridge([url], { env: { MCPCTL_TOKEN: TOKEN }, input: ping, keepOpenMs: 500 });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, '{"jsonrpc":"2.0","id":1,"result":{}}\n');
});

test('a gateway that goes away ends the bridge with a reason', async () => {
  const other = await startGateway({ servers: [demo('demo')] });
  const r = runBridge([`ws://${other.status().listen}/ws`], {
    input: '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}\n',
    keepOpenMs: -1,
  });
  await until(() => other.status().sessions === 1);
  assert.equal(await other.stop(), 0);
  const done = await r;
  assert.equal(done.code, 1);
  assert.match(done.stdout, /"protocolVersion":"2025-11-25"/);
  assert.match(done.stderr, /mcpctl connect: the gateway (closed|went away)|lost the gateway/);
});
