// SPDX-License-Identifier: ISC
// Old clients: the 2024-11-05 HTTP+SSE transport through the SDK's own
// SSEClientTransport, including a server-initiated request.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { CreateMessageRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { startGateway, demo } from '../lib/gateway.mjs';

let gw;
before(async () => { gw = await startGateway({ servers: [demo('demo')] }); });
after(async () => { assert.equal(await gw.stop(), 0); });

test('a legacy SSE client lists, calls and answers sampling', async () => {
  const client = new Client({ name: 'legacy', version: '1' }, { capabilities: { sampling: {} } });
  client.setRequestHandler(CreateMessageRequestSchema, async () =>
    ({ role: 'assistant', content: { type: 'text', text: 'old but fine' }, model: 'm' }));
  await client.connect(new SSEClientTransport(new URL(`${gw.base}/sse`)));
  const { tools } = await client.listTools();
  assert.ok(tools.some((t) => t.name === 'demo__echo'));
  const r = await client.callTool({ name: 'demo__echo', arguments: { text: 'via sse' } });
  assert.equal(r.content[0].text, 'via sse');
  const s = await client.callTool({ name: 'demo__sample', arguments: { prompt: 'p' } });
  assert.equal(s.content[0].text, 'sampled: old but fine');
  assert.equal(gw.status().sessions, 1);
  await client.close();
  await gw.waitFor((st) => st.sessions === 0, 'the session ends with its stream', 5000);
});

test('a message for an unknown legacy session is 404', async () => {
  const r = await fetch(`${gw.base}/messages?sessionId=0123456789abcdef0123456789abcdef`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
  });
  assert.equal(r.status, 404);
});
