// SPDX-License-Identifier: ISC
// Virtual endpoints (endpoints = ( ... )) against clients we did not write:
// the SDK v1 client over Streamable HTTP, legacy SSE and WebSocket at an
// endpoint's paths, the SDK v2 client (2025 and 2026-07-28), the SDK's
// stdio client spawning "mcpctl connect --endpoint", and the Inspector's
// CLI.  Each sees the endpoint's selection and only it; a call outside is
// an unknown tool; list_changed reaches the endpoint whose list changed and
// not the other; a reload that changes an endpoint keeps its sessions and
// tells them, and one that removes it ends them.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { WebSocketClientTransport } from '@modelcontextprotocol/sdk/client/websocket.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { Client as V2Client, StreamableHTTPClientTransport as V2Transport } from '@modelcontextprotocol/client';
import { startGateway, demo, bin, nodeModules, sleep } from '../lib/gateway.mjs';
import { MODERN } from '../lib/modern.mjs';

const inspector = path.join(nodeModules, '.bin/mcp-inspector');
const RESEARCH = '{ path = "/mcp/research"; tools = [ "*__echo", "b__add", "!b__echo", "c__*" ]; }';
const TEAM = '{ path = "/team/a"; tools = [ "a__*" ]; }';
const text = (r) => r.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
const names = (tools) => tools.map((t) => t.name).sort().join(' ');

let gw;

before(async () => {
  gw = await startGateway({
    globals: `endpoints = (\n  ${RESEARCH},\n  ${TEAM}\n);`,
    servers: [demo('a'), demo('b')],
  });
});
after(async () => {
  assert.equal(await gw.stop(), 0);
});

// An SDK v1 client on a transport; counts tools/list_changed.
async function v1(transport) {
  const seen = { changed: 0 };
  const client = new Client({ name: 'endpoints', version: '1' }, { capabilities: {} });
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => { seen.changed++; });
  await client.connect(transport);
  return { client, seen };
}

// What research offers, seen and used by a client.
async function checkResearch(client) {
  assert.equal(names((await client.listTools()).tools), 'a__echo b__add');
  assert.equal(text(await client.callTool({ name: 'a__echo', arguments: { text: 'hi' } })), 'hi');
  const r = await client.callTool({ name: 'b__echo', arguments: { text: 'no' } }).catch((e) => e);
  const msg = r instanceof Error ? r.message : text(r);
  assert.match(msg, /unknown tool: b__echo/);
}

test('SDK v1 over Streamable HTTP, legacy SSE and WebSocket at an endpoint', async () => {
  for (const t of [
    new StreamableHTTPClientTransport(new URL(`${gw.base}/mcp/research`)),
    new SSEClientTransport(new URL(`${gw.base}/mcp/research/sse`)),
    new WebSocketClientTransport(new URL(`ws://${gw.status().listen}/mcp/research/ws`)),
  ]) {
    const { client } = await v1(t);
    await checkResearch(client);
    await client.close();
  }
  // A pattern that matches nothing is a warning, once the catalog is in.
  assert.match(gw.log(), /endpoint \/mcp\/research: tools pattern "c__\*" matches nothing in the catalog/);
  // /mcp is untouched.
  const { client } = await v1(new StreamableHTTPClientTransport(new URL(gw.url)));
  assert.ok((await client.listTools()).tools.length > 10);
  await client.close();
});

test('SDK v2, 2025 and 2026-07-28, at an endpoint', async () => {
  for (const opts of [{}, { versionNegotiation: { mode: { pin: MODERN } } }]) {
    const client = new V2Client({ name: 'endpoints-v2', version: '1' }, { capabilities: {}, ...opts });
    await client.connect(new V2Transport(new URL(`${gw.base}/mcp/research`)));
    await checkResearch(client);
    await client.close();
  }
});

test('mcpctl connect --endpoint under the SDK stdio client', async () => {
  const transport = new StdioClientTransport({
    command: bin.mcpctl, args: ['connect', '--endpoint', '/mcp/research', `ws://${gw.status().listen}/ws`],
    stderr: 'pipe',
  });
  const { client } = await v1(transport);
  await checkResearch(client);
  await client.close();
  const bad = spawnSync(bin.mcpctl, ['connect', '--endpoint', 'no-slash'], { encoding: 'utf8', input: '' });
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /--endpoint no-slash: expected a path/);
});

test('the Inspector CLI at an endpoint', () => {
  const r = spawnSync(inspector, ['--cli', `${gw.base}/mcp/research`, '--transport', 'http', '--method', 'tools/list'],
    { encoding: 'utf8', timeout: 60000 });
  assert.equal(r.status, 0, r.stderr);
  const tools = JSON.parse(r.stdout).tools;
  assert.equal(names(tools), 'a__echo b__add');
});

test('list_changed per endpoint; a reload keeps, tells, removes', async () => {
  const re = await v1(new StreamableHTTPClientTransport(new URL(`${gw.base}/mcp/research`)));
  const team = await v1(new StreamableHTTPClientTransport(new URL(`${gw.base}/team/a`)));
  await re.client.listTools();
  await team.client.listTools();
  // a's extra tool appears: /team/a selects it, research does not.
  assert.equal(text(await team.client.callTool({ name: 'a__toggle_tool', arguments: {} })).length > 0, true);
  const until = Date.now() + 10000;
  while (team.seen.changed === 0 && Date.now() < until) await sleep(50);
  assert.equal(team.seen.changed, 1);
  assert.ok((await team.client.listTools()).tools.some((t) => t.name === 'a__extra'));
  await sleep(300);
  assert.equal(re.seen.changed, 0);
  // research gains a__extra by a reload; /team/a is removed.
  const file = path.join(gw.dir, 'mcp-supervisord.conf');
  writeFileSync(file, readFileSync(file, 'utf8')
    .replace('"c__*" ]', '"c__*", "a__extra" ]').replace(`,\n  ${TEAM}`, ''));
  gw.mcpctl('reload');
  const until2 = Date.now() + 10000;
  while (re.seen.changed === 0 && Date.now() < until2) await sleep(50);
  assert.equal(re.seen.changed, 1);
  assert.equal(names((await re.client.listTools()).tools), 'a__echo a__extra b__add');
  await assert.rejects(team.client.listTools());
  const st = gw.status();
  assert.deepEqual(st.endpoints.map((e) => e.path), ['/mcp/research']);
  // Earlier tests' Streamable HTTP sessions stay until they time out.
  const sessions = JSON.parse(gw.mcpctl('-j', 'sessions')).sessions;
  assert.equal(st.endpoints[0].sessions, sessions.filter((s) => s.endpoint === '/mcp/research').length);
  assert.equal(sessions.filter((s) => s.endpoint === '/team/a').length, 0);
  assert.match(gw.mcpctl('sessions'), /\/mcp\/research/);
  assert.match(gw.log(), /endpoint \/team\/a: removed, 1 sessions ended/);
  await re.client.close();
});
