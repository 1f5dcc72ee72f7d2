// SPDX-License-Identifier: ISC
// Resumability: drop an SSE stream mid-call, reconnect with Last-Event-ID,
// and receive exactly the missed events and the final response, once.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, demo, rawSession, post, parseSse, sleep } from '../lib/gateway.mjs';

let gw;
before(async () => { gw = await startGateway({ servers: [demo('demo')] }); });
after(async () => { assert.equal(await gw.stop(), 0); });

// Read events from a streaming response until pred says stop.
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

function get(session, lastEventId) {
  const headers = { accept: 'text/event-stream', 'mcp-session-id': session };
  if (lastEventId !== undefined) headers['last-event-id'] = lastEventId;
  return fetch(gw.url, { headers });
}

test('a POST stream resumes after a dropped connection', async () => {
  const session = await rawSession(gw);
  const res = await post(gw, {
    jsonrpc: '2.0', id: 'long', method: 'tools/call',
    params: { name: 'demo__sleep', arguments: { ms: 1200, steps: 6 }, _meta: { progressToken: 'p' } },
  }, { session, raw: true });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type'), /^text\/event-stream/);
  // Priming event, then two progress events; then the client goes away.
  const first = await readEvents(res, (ev) => ev.length >= 3);
  assert.equal(first[0].data, '', 'a priming event with an empty data field');
  assert.ok(first[0].id, 'the priming event has an id');
  const progress1 = first.slice(1).map((e) => JSON.parse(e.data).params.progress);
  assert.deepEqual(progress1, [1, 2]);
  const last = first[first.length - 1].id;

  await sleep(1600);	// the call finishes while nobody listens
  const again = await get(session, last);
  assert.equal(again.status, 200);
  const rest = parseSse(await again.text()).filter((e) => e.data !== '');
  const msgs = rest.map((e) => JSON.parse(e.data));
  assert.deepEqual(msgs.filter((m) => m.method).map((m) => m.params.progress), [3, 4, 5, 6], 'exactly the missed progress');
  const finals = msgs.filter((m) => m.id === 'long');
  assert.equal(finals.length, 1, 'the response once');
  assert.equal(finals[0].result.content[0].text, 'slept 1200 ms');
  const ids = rest.map((e) => e.id);
  assert.equal(new Set(ids).size, ids.length, 'event ids are unique');

  // Everything was delivered: resuming again yields nothing more.
  const done = await get(session, rest[rest.length - 1].id);
  assert.equal(done.status, 204);
});

test('resuming while the call is still running goes live', async () => {
  const session = await rawSession(gw);
  const res = await post(gw, {
    jsonrpc: '2.0', id: 7, method: 'tools/call',
    params: { name: 'demo__sleep', arguments: { ms: 1000, steps: 4 }, _meta: { progressToken: 1 } },
  }, { session, raw: true });
  const first = await readEvents(res, (ev) => ev.length >= 2);
  const again = await get(session, first[first.length - 1].id);
  const rest = parseSse(await again.text()).filter((e) => e.data !== '').map((e) => JSON.parse(e.data));
  assert.deepEqual(rest.filter((m) => m.method).map((m) => m.params.progress), [2, 3, 4]);
  assert.equal(rest.filter((m) => m.id === 7).length, 1);
});

test('the standalone stream replays what a dropped GET missed', async () => {
  const watcher = await rawSession(gw);
  const actor = await rawSession(gw);
  const res = await get(watcher);
  assert.equal(res.status, 200);
  const conflict = await get(watcher);
  assert.equal(conflict.status, 409, 'one standalone stream per session');
  await conflict.body?.cancel();
  const toggle = () => post(gw, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'demo__toggle_tool', arguments: {} } }, { session: actor });
  const seen = readEvents(res, (ev) => ev.some((e) => e.data.includes('list_changed')));
  await toggle();
  const events = await seen;
  const last = events[events.length - 1].id;
  await toggle();	// nobody is listening now
  await sleep(200);
  const again = await get(watcher, last);
  const replay = await readEvents(again, (ev) => ev.some((e) => e.data.includes('list_changed')));
  const changed = replay.filter((e) => e.data.includes('notifications/tools/list_changed'));
  assert.equal(changed.length, 1, 'the missed list_changed, once');
  assert.notEqual(changed[0].id, events.find((e) => e.data.includes('list_changed')).id);
});

test('a bad Last-Event-ID is refused', async () => {
  const session = await rawSession(gw);
  for (const bad of ['garbage', '99999-1', '-1', '1-']) {
    const r = await get(session, bad);
    assert.equal(r.status, 400, bad);
    await r.body?.cancel();
  }
});
