// SPDX-License-Identifier: ISC
// Tool search (discovery = "search") with the official SDK client against
// real upstreams (@modelcontextprotocol/server-filesystem and
// server-everything over stdio):
// - tools/list lists search_tools and call_tool;
// - search_tools finds a real tool from a question in words, with its
//   schema, and call_tool calls it as a direct call would;
// - a client's deny patterns hold in both: a denied tool is never found,
//   takes no place in a limit of 1, and cannot be called;
// - an endpoint with discovery = "search" searches and calls only what it
//   selects, with the SDK v2 client (2025 and 2026-07-28) and the
//   Inspector's CLI too.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { Client as V2Client, StreamableHTTPClientTransport as V2Transport } from '@modelcontextprotocol/client';
import { spawnSync } from 'node:child_process';
import { startGateway, q, nodeModules } from '../lib/gateway.mjs';
import { MODERN } from '../lib/modern.mjs';

const pkg = (p) => path.join(nodeModules, p);
const filesystem = pkg('@modelcontextprotocol/server-filesystem/dist/index.js');
const everything = pkg('@modelcontextprotocol/server-everything/dist/index.js');
const TOKENS = { any: 'any-token-0123456789abcdef', ro: 'ro-token-0123456789abcdef' };
const text = (r) => r.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
let gw, dir;

before(async () => {
  dir = realpathSync(mkdtempSync(path.join(tmpdir(), 'mcps-search-')));
  writeFileSync(path.join(dir, 'notes.txt'), 'remember the milk\n');
  const node = (name, script, args) =>
    `{ name = ${q(name)}; transport = "stdio"; command = [ ${[process.execPath, script, ...args].map(q).join(', ')} ]; }`;
  gw = await startGateway({
    globals: `discovery = "search";
auth_tokens = [ ${q(TOKENS.any)} ];
clients = ( { name = "ro"; token = ${q(TOKENS.ro)}; deny = [ "fs__read_text_file", "fs__write_*" ]; } );
endpoints = ( { path = "/mcp/ev"; tools = [ "ev__*" ]; discovery = "search"; } );`,
    servers: [node('fs', filesystem, [dir]), node('ev', everything, ['stdio'])],
  });
});
after(async () => {
  assert.equal(await gw.stop(), 0);
  rmSync(dir, { recursive: true, force: true });
});

async function connect(token, at = gw.url) {
  const client = new Client({ name: 'searcher', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(at), {
    requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  return client;
}
const search = async (client, query, limit) =>
  (await client.callTool({ name: 'search_tools', arguments: { query, limit } })).structuredContent.tools;

test('search_tools finds a real tool, call_tool calls it', async () => {
  const client = await connect(TOKENS.any);
  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((t) => t.name), ['search_tools', 'call_tool']);
  const found = await search(client, 'show me the text inside a file on disk', 5);
  assert.ok(found.length > 0 && found.length <= 5);
  assert.ok(found.slice(0, 3).some((t) => t.name === 'fs__read_text_file'), JSON.stringify(found.map((t) => t.name)));
  const read = found.find((t) => t.name === 'fs__read_text_file');
  assert.equal(read.inputSchema.type, 'object');
  assert.ok('path' in read.inputSchema.properties);
  for (let i = 1; i < found.length; i++) assert.ok(found[i - 1].score >= found[i].score);
  const r = await client.callTool({ name: 'call_tool', arguments: { name: 'fs__read_text_file', arguments: { path: path.join(dir, 'notes.txt') } } });
  assert.match(text(r), /remember the milk/);
  const echo = (await search(client, 'repeat back my message', 1))[0];
  assert.equal(echo.name, 'ev__echo');
  const e = await client.callTool({ name: 'call_tool', arguments: { name: echo.name, arguments: { message: 'hello' } } });
  assert.match(text(e), /hello/);
  // An unknown tool is refused as a direct call to it is.
  await assert.rejects(client.callTool({ name: 'call_tool', arguments: { name: 'fs__nope' } }),
    (err) => err instanceof McpError && /unknown tool: fs__nope/.test(err.message));
  await client.close();
});

test('a client\'s deny patterns hold in search and call_tool', async () => {
  const ro = await connect(TOKENS.ro);
  const found = await search(ro, 'show me the text inside a file on disk', 50);
  assert.ok(found.length > 0);
  assert.ok(!found.some((t) => t.name === 'fs__read_text_file' || t.name.startsWith('fs__write_')), JSON.stringify(found.map((t) => t.name)));
  const one = await search(ro, 'write text into a file', 1);
  assert.equal(one.length, 1);
  assert.ok(!one[0].name.startsWith('fs__write_'));
  await assert.rejects(ro.callTool({ name: 'call_tool', arguments: { name: 'fs__read_text_file', arguments: { path: path.join(dir, 'notes.txt') } } }),
    (err) => err instanceof McpError && /unknown tool/.test(err.message));
  await ro.close();
});

test('an endpoint searches what it selects', async () => {
  const client = await connect(TOKENS.any, new URL('/mcp/ev', gw.url).href);
  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((t) => t.name), ['search_tools', 'call_tool']);
  const found = await search(client, 'show me the text inside a file on disk', 50);
  assert.ok(found.every((t) => t.name.startsWith('ev__')), JSON.stringify(found.map((t) => t.name)));
  assert.equal((await search(client, 'add two numbers', 1))[0].name, 'ev__get-sum');
  const r = await client.callTool({ name: 'call_tool', arguments: { name: 'ev__get-sum', arguments: { a: 2, b: 3 } } });
  assert.match(text(r), /5/);
  await assert.rejects(client.callTool({ name: 'call_tool', arguments: { name: 'fs__read_text_file', arguments: { path: path.join(dir, 'notes.txt') } } }),
    (err) => err instanceof McpError && /unknown tool/.test(err.message));
  await client.close();
});

test('SDK v2, 2025 and 2026-07-28, at a search endpoint', async () => {
  for (const opts of [{}, { versionNegotiation: { mode: { pin: MODERN } } }]) {
    const client = new V2Client({ name: 'searcher-v2', version: '1' }, { capabilities: {}, ...opts });
    await client.connect(new V2Transport(new URL('/mcp/ev', gw.url), {
      requestInit: { headers: { authorization: `Bearer ${TOKENS.any}` } } }));
    assert.deepEqual((await client.listTools()).tools.map((t) => t.name), ['search_tools', 'call_tool']);
    const r = await client.callTool({ name: 'search_tools', arguments: { query: 'add two numbers', limit: 3 } });
    assert.equal(r.structuredContent.tools[0].name, 'ev__get-sum', JSON.stringify(r));
    const sum = await client.callTool({ name: 'call_tool', arguments: { name: 'ev__get-sum', arguments: { a: 4, b: 5 } } });
    assert.match(text(sum), /9/);
    await client.close();
  }
});

test('the Inspector CLI at a search endpoint', () => {
  const inspector = path.join(nodeModules, '.bin/mcp-inspector');
  const run = (args) => spawnSync(inspector, ['--cli', new URL('/mcp/ev', gw.url).href, '--transport', 'http',
    '--header', `Authorization: Bearer ${TOKENS.any}`, ...args],
    { encoding: 'utf8', timeout: 60000 });
  let r = run(['--method', 'tools/list']);
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout).tools.map((t) => t.name), ['search_tools', 'call_tool']);
  r = run(['--method', 'tools/call', '--tool-name', 'search_tools', '--tool-arg', 'query=repeat back my message']);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(JSON.parse(r.stdout).structuredContent.tools[0].name, 'ev__echo', r.stdout);
});
