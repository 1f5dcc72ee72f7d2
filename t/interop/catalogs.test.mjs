// SPDX-License-Identifier: ISC
// What each client is shown, through the official SDK client:
// - a per-session upstream is listed as the session's own instance lists
//   it (the reference server offers its sampling, elicitation and roots
//   tools only to clients that can serve them), and a list change in one
//   session's instance reaches that session only;
// - a shared upstream is told only what the gateway can always honour;
// - tool names outside the specification's set are mapped, none vanish;
// - long lists come in pages whose cursors survive list changes.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { startGateway, demo, q, nodeModules, srcdir, sleep, post, rawSession } from '../lib/gateway.mjs';

const everything = path.join(nodeModules, '@modelcontextprotocol/server-everything/dist/index.js');
const fixture = path.join(srcdir, 't/fixtures/catalog-server.mjs');
const ev = (name, extra = '') =>
  `{ name = ${q(name)}; transport = "stdio"; command = [ ${q(process.execPath)}, ${q(everything)}, "stdio" ]; ${extra} }`;
const cat = (name, args, extra = '') =>
  `{ name = ${q(name)}; transport = "stdio"; command = [ ${q(process.execPath)}, ${q(fixture)}, ${args.map(q).join(', ')} ]; ${extra} }`;
const text = (r) => r.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
let gw;

before(async () => {
  gw = await startGateway({
    servers: [
      ev('evps', 'isolation = "per-session";'),
      ev('evd'),
      demo('own', 'isolation = "per-session";'),
      cat('bad', ['--bad-names']),
      cat('many', ['--tools', '1241'], 'prefix = "m_";'),
    ],
  });
});
after(async () => { assert.equal(await gw.stop(), 0); });

// An SDK client with the given capabilities, answering what it declares.
async function connect(name, capabilities = {}) {
  const seen = { sampling: 0, toolsChanged: 0 };
  const client = new Client({ name, version: '1' }, { capabilities });
  if (capabilities.sampling) {
    client.setRequestHandler(CreateMessageRequestSchema, async () => {
      seen.sampling++;
      return { role: 'assistant', content: { type: 'text', text: `sampled by ${name}` }, model: 'm' };
    });
  }
  if (capabilities.elicitation) client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'decline' }));
  if (capabilities.roots) client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [] }));
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => { seen.toolsChanged++; });
  await client.connect(new StreamableHTTPClientTransport(new URL(gw.url)));
  return { client, seen };
}

// Every tool, following nextCursor; also the pages' sizes.
async function allTools(client) {
  const tools = [];
  const pages = [];
  let cursor;
  do {
    const r = await client.listTools(cursor === undefined ? {} : { cursor });
    tools.push(...r.tools);
    pages.push(r.tools.length);
    cursor = r.nextCursor;
  } while (cursor !== undefined);
  return { tools, pages };
}

test('a per-session upstream is listed as the session\'s own instance lists it', async () => {
  const plain = await connect('plain');
  const able = await connect('able', { sampling: {}, elicitation: { form: {} }, roots: { listChanged: true } });
  const names = async (c) => new Set((await allTools(c)).tools.map((t) => t.name));
  const p = await names(plain.client);
  const a = await names(able.client);
  assert.ok(p.has('evps__echo') && a.has('evps__echo'));
  for (const t of ['evps__trigger-sampling-request', 'evps__trigger-elicitation-request', 'evps__get-roots-list']) {
    assert.ok(!p.has(t), `${t} is not shown to a client that cannot serve it`);
    assert.ok(a.has(t), `${t} is shown to one that can`);
  }
  // What is listed can be called; what is not listed is unknown.
  assert.match(text(await able.client.callTool({ name: 'evps__trigger-sampling-request', arguments: { prompt: 'q' } })), /sampled by able/);
  assert.equal(able.seen.sampling, 1);
  await assert.rejects(plain.client.callTool({ name: 'evps__trigger-sampling-request', arguments: { prompt: 'q' } }), /unknown tool/);
  // A shared upstream with the default strategies (client, then decline)
  // is told of sampling and elicitation, never of roots: its tools are
  // listed to every client, reach the client that can answer, and are
  // declined for the one that cannot.
  for (const t of ['evd__trigger-sampling-request', 'evd__trigger-elicitation-request']) {
    assert.ok(p.has(t) && a.has(t), `${t}: a shared upstream is told the gateway offers it`);
  }
  assert.ok(!p.has('evd__get-roots-list') && !a.has('evd__get-roots-list'), 'roots belong to one client');
  assert.match(text(await able.client.callTool({ name: 'evd__trigger-sampling-request', arguments: { prompt: 'q' } })), /sampled by able/);
  assert.equal(able.seen.sampling, 2);
  const declined = await plain.client.callTool({ name: 'evd__trigger-sampling-request', arguments: { prompt: 'q' } });
  assert.match(JSON.stringify(declined), /User rejected sampling request|declin/i);
  await plain.client.close();
  await able.client.close();
});

test('a list change in one session\'s instance reaches that session only', async () => {
  const one = await connect('one');
  const two = await connect('two');
  const before1 = (await allTools(one.client)).tools.map((t) => t.name);
  assert.ok(!before1.includes('own__extra'));
  await allTools(two.client);
  await one.client.callTool({ name: 'own__toggle_tool', arguments: {} });
  for (let i = 0; i < 100 && one.seen.toolsChanged === 0; i++) await sleep(50);
  assert.ok(one.seen.toolsChanged >= 1, 'the session whose instance changed is told');
  assert.ok((await allTools(one.client)).tools.some((t) => t.name === 'own__extra'));
  assert.equal(text(await one.client.callTool({ name: 'own__extra', arguments: {} })), 'extra');
  await sleep(200);
  assert.equal(two.seen.toolsChanged, 0, 'the other session is not');
  assert.ok(!(await allTools(two.client)).tools.some((t) => t.name === 'own__extra'));
  await assert.rejects(two.client.callTool({ name: 'own__extra', arguments: {} }), /unknown tool/);
  await one.client.close();
  await two.client.close();
});

test('tool names outside the specification\'s set are mapped, none vanish', async () => {
  const { client } = await connect('names');
  const { tools } = await allTools(client);
  const bad = tools.filter((t) => t.name.startsWith('bad__'));
  assert.equal(bad.length, 11, 'three tools, seven odd names and toggle');
  for (const t of tools) assert.match(t.name, /^[A-Za-z0-9_.-]{1,64}$/, t.name);
  assert.ok(bad.some((t) => t.name === 'bad__ok.name-1'), 'a valid name is kept');
  // Each mapped name calls the tool by its own name.
  for (const original of ['has space', 'tab\there', 'emoji\u{1F600}', 'a/b', '', 'x'.repeat(200)]) {
    const t = bad.find((x) => x.description === `tool ${JSON.stringify(original)}`);
    assert.ok(t, `a tool for ${JSON.stringify(original)}`);
    assert.notEqual(t.name, `bad__${original}`);
    assert.equal(text(await client.callTool({ name: t.name, arguments: {} })), `called ${JSON.stringify(original)}`);
  }
  const renamed = gw.status().renamed;
  assert.equal(renamed.filter((r) => r.upstream === 'bad').length, 6, 'mcpctl status shows the six mapped (200 characters is too long)');
  assert.ok(renamed.some((r) => r.name === 'has space' && /^bad__has_space_[0-9a-f]{8}$/.test(r.exposed)));
  assert.match(gw.log(), /tools of upstream bad named "a\/b" is not a valid name: exposed as bad__a_b_[0-9a-f]{8}/);
  assert.match(gw.mcpctl('status'), /renamed \(not a valid name/);
  await client.close();
});

test('long lists come in pages; a cursor survives a list change', async () => {
  const { client } = await connect('pages');
  const { tools, pages } = await allTools(client);
  const many = tools.filter((t) => t.name.startsWith('m_'));
  assert.equal(many.length, 1242);
  assert.ok(pages.length >= 3 && pages.every((n) => n <= 500), `pages of at most 500: ${pages}`);
  assert.equal(new Set(tools.map((t) => t.name)).size, tools.length, 'no item twice');
  // Take a page, change the list, and go on from the old cursor.
  const first = await client.listTools();
  assert.ok(first.nextCursor);
  await client.callTool({ name: 'm_toggle', arguments: {} });
  await sleep(300);
  const second = await client.listTools({ cursor: first.nextCursor });
  assert.equal(second.tools[0].name, tools[500].name, 'the next page starts after the last one served');
  await client.callTool({ name: 'm_toggle', arguments: {} });
  await assert.rejects(client.listTools({ cursor: 'not-a-cursor!' }), /invalid cursor/);
  await client.close();
});

test('a cursor from raw HTTP is opaque and pages are JSON', async () => {
  const session = await rawSession(gw);
  const r = await post(gw, { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }, { session });
  assert.equal(r.json.result.tools.length, 500);
  assert.match(r.json.result.nextCursor, /^[A-Za-z0-9_-]+$/);
  const bad = await post(gw, { jsonrpc: '2.0', id: 3, method: 'tools/list', params: { cursor: 7 } }, { session });
  assert.equal(bad.json.error.code, -32602);
});

// A catalog longer than max_message, in pages each within it: the upstream
// is ready with what fits, and says what it left out (the worker sent it
// whole, the supervisor took the frame for a broken worker's and killed
// it, again and again).
test('a catalog over max_message is listed in part, not a crash loop', async () => {
  const gw2 = await startGateway({
    servers: [cat('big', ['--tools', '1000', '--page', '100'], 'max_message = "16k";')],
  });
  try {
    const client = new Client({ name: 'big', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(gw2.url)));
    const { tools } = await allTools(client);
    assert.ok(tools.length > 50 && tools.length < 1000, `${tools.length} tools`);
    assert.equal(gw2.upstream('big').state, 'ready');
    assert.equal(gw2.upstream('big').restarts, 0);
    assert.match(gw2.log(), /the catalog is over max_message \(16384 bytes\): listed without the last \d+ tools/);
    await client.close();
  } finally {
    assert.equal(await gw2.stop(), 0);
  }
});

// What is left out is the list with the most bytes, and no more of it than
// the bytes over: a few tools with long descriptions go, not the many
// small resources (cut by count, 40 of 100 resources went before a tool).
test('a catalog over max_message loses the bytes over, from the largest list', async () => {
  const gw2 = await startGateway({
    servers: [cat('heavy', ['--tools', '5', '--describe', '4000', '--page', '2', '--resources', '100'], 'max_message = "16k";')],
  });
  try {
    const client = new Client({ name: 'heavy', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(gw2.url)));
    const { tools } = await allTools(client);
    const { resources } = await client.listResources();
    assert.equal(resources.length, 100);
    // 6 tools of 4 KB each (with toggle) in 16 KiB with the resources.
    assert.ok(tools.length >= 2 && tools.length <= 3, `${tools.length} tools`);
    assert.match(gw2.log(), /listed without the last [34] tools, 0 resources/);
    await client.close();
  } finally {
    assert.equal(await gw2.stop(), 0);
  }
});
