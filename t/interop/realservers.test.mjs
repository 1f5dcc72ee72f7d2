// SPDX-License-Identifier: ISC
// Real npm servers as stdio upstreams, and a client that is not the SDK's
// own Client class:
// - @modelcontextprotocol/server-filesystem, shared on a directory of its
//   command line, and per-session where each client's roots become its
//   allowed directories;
// - @modelcontextprotocol/server-memory with its graph in the test's
//   directory;
// - mcp-remote (a stdio-to-HTTP bridge with its own HTTP client) in front
//   of the gateway, driven over stdio.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { startGateway, demo, q, nodeModules, sleep } from '../lib/gateway.mjs';

const pkg = (p) => path.join(nodeModules, p);
const filesystem = pkg('@modelcontextprotocol/server-filesystem/dist/index.js');
const memory = pkg('@modelcontextprotocol/server-memory/dist/index.js');
const remote = pkg('mcp-remote/dist/proxy.js');
const text = (r) => r.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
let gw, dir, shared, mine;

before(async () => {
  dir = realpathSync(mkdtempSync(path.join(tmpdir(), 'mcps-real-')));
  shared = path.join(dir, 'shared');
  mine = path.join(dir, 'mine');
  mkdirSync(shared);
  mkdirSync(mine);
  writeFileSync(path.join(shared, 'hello.txt'), 'hello from the shared directory\n');
  writeFileSync(path.join(mine, 'own.txt'), 'only mine\n');
  const node = (name, script, args, extra = '') =>
    `{ name = ${q(name)}; transport = "stdio"; command = [ ${[process.execPath, script, ...args].map(q).join(', ')} ]; ${extra} }`;
  gw = await startGateway({ servers: [
    node('fs', filesystem, [shared]),
    node('fsr', filesystem, [shared], 'isolation = "per-session";'),
    node('mem', memory, [], `env = { MEMORY_FILE_PATH = ${q(path.join(dir, 'memory.jsonl'))}; };`),
    demo('demo'),
  ] });
});
after(async () => {
  assert.equal(await gw.stop(), 0);
  rmSync(dir, { recursive: true, force: true });
});

async function connect(name, roots) {
  const client = new Client({ name, version: '1' }, { capabilities: roots ? { roots: { listChanged: true } } : {} });
  if (roots) client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: roots.map((r) => ({ uri: pathToFileURL(r).href })) }));
  await client.connect(new StreamableHTTPClientTransport(new URL(gw.url)));
  return client;
}

test('server-filesystem, shared: reads and writes in its directory only', async () => {
  const client = await connect('fs-client');
  const { tools } = await client.listTools();
  for (const t of ['fs__read_text_file', 'fs__write_file', 'fs__list_allowed_directories']) assert.ok(tools.some((x) => x.name === t), t);
  assert.match(text(await client.callTool({ name: 'fs__read_text_file', arguments: { path: path.join(shared, 'hello.txt') } })), /hello from the shared directory/);
  await client.callTool({ name: 'fs__write_file', arguments: { path: path.join(shared, 'new.txt'), content: 'written through the gateway' } });
  assert.equal(readFileSync(path.join(shared, 'new.txt'), 'utf8'), 'written through the gateway');
  const outside = await client.callTool({ name: 'fs__read_text_file', arguments: { path: path.join(mine, 'own.txt') } });
  assert.equal(outside.isError, true, 'outside its directory is refused');
  await client.close();
});

test('server-filesystem, per session: the client\'s roots are its allowed directories', async () => {
  const client = await connect('roots-client', [mine]);
  // The server asks for roots as its instance starts and applies them
  // asynchronously: a call at once may still see its command line's.
  let allowed = '';
  for (let i = 0; i < 50 && !allowed.includes(mine); i++) {
    allowed = text(await client.callTool({ name: 'fsr__list_allowed_directories', arguments: {} }));
    if (!allowed.includes(mine)) await sleep(100);
  }
  assert.ok(allowed.includes(mine), allowed);
  assert.ok(!allowed.includes(shared), 'the roots replace the command line\'s directory');
  assert.match(text(await client.callTool({ name: 'fsr__read_text_file', arguments: { path: path.join(mine, 'own.txt') } })), /only mine/);
  // Another client, without roots, keeps the command line's directory.
  const other = await connect('no-roots');
  const theirs = text(await other.callTool({ name: 'fsr__list_allowed_directories', arguments: {} }));
  assert.doesNotMatch(theirs, /mine/);
  await client.close();
  await other.close();
});

test('server-memory: a graph written and read back', async () => {
  const client = await connect('mem-client');
  await client.callTool({ name: 'mem__create_entities', arguments: { entities: [{ name: 'gateway', entityType: 'program', observations: ['speaks MCP'] }] } });
  const found = await client.callTool({ name: 'mem__search_nodes', arguments: { query: 'gateway' } });
  assert.match(text(found), /speaks MCP/);
  assert.match(readFileSync(path.join(dir, 'memory.jsonl'), 'utf8'), /"name":"gateway"/);
  await client.close();
});

test('mcp-remote in front of the gateway', async () => {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [remote, gw.url, '--transport', 'http-only'],
    env: { ...process.env, MCP_REMOTE_CONFIG_DIR: path.join(dir, 'mcp-remote') },
    stderr: 'pipe',
  });
  let log = '';
  transport.stderr?.on('data', (d) => { log += d; });
  const client = new Client({ name: 'through-mcp-remote', version: '1' });
  await client.connect(transport);
  const { tools } = await client.listTools();
  assert.ok(tools.some((t) => t.name === 'demo__echo') && tools.some((t) => t.name === 'mem__read_graph'), log);
  assert.equal(text(await client.callTool({ name: 'demo__echo', arguments: { text: 'via mcp-remote' } })), 'via mcp-remote');
  const progress = [];
  const r = await client.callTool({ name: 'demo__sleep', arguments: { ms: 300, steps: 3 } }, undefined, { onprogress: (p) => progress.push(p.progress) });
  assert.equal(text(r), 'slept 300 ms');
  assert.match(text(await client.callTool({ name: 'mem__read_graph', arguments: {} })), /gateway/);
  const read = await client.readResource({ uri: 'demo://readme' });
  assert.ok(read.contents.length > 0);
  await client.close();
});
