#!/usr/bin/env node
// SPDX-License-Identifier: ISC
// Serves the conformance fixture (fixture-server.mjs) over Streamable HTTP
// using the SDK's own StreamableHTTPServerTransport, so the conformance suite
// can be run against the fixture without the gateway:
//
//   node t/conformance/fixture-http.mjs [PORT]        # PORT 0/absent = ephemeral
//   -> prints "http://127.0.0.1:PORT/mcp" on stdout once listening
//   node .../conformance/dist/index.js server --url http://127.0.0.1:PORT/mcp
//
// One fixture Server + transport per MCP session.  An in-memory event store
// enables SSE resumability (priming events, Last-Event-ID replay; SEP-1699).
// Host/Origin are restricted to loopback names (dns-rebinding-protection).

import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { createFixtureServer } from './fixture-server.mjs';

const port = Number(process.argv[2] ?? 0);
const RETRY_MS = Number(process.env.FIXTURE_SSE_RETRY_MS ?? 500);
const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

// In-memory EventStore: ids are "<streamId>_<n>" with n global and increasing.
function memoryEventStore() {
  const events = []; // { id, streamId, message }
  let n = 0;
  return {
    async storeEvent(streamId, message) {
      const id = `${streamId}_${++n}`;
      events.push({ id, streamId, message });
      return id;
    },
    async getStreamIdForEventId(eventId) {
      return events.find((e) => e.id === eventId)?.streamId;
    },
    async replayEventsAfter(lastEventId, { send }) {
      const i = events.findIndex((e) => e.id === lastEventId);
      if (i < 0) throw new Error(`unknown event id ${lastEventId}`);
      const { streamId } = events[i];
      for (const e of events.slice(i + 1)) {
        // skip other streams and priming events (stored as {})
        if (e.streamId === streamId && Object.keys(e.message).length > 0) await send(e.id, e.message);
      }
      return streamId;
    },
  };
}

function hostnameOf(value) {
  try {
    return new URL(value.includes('://') ? value : `http://${value}`).hostname;
  } catch {
    return null;
  }
}

function jsonError(res, status, code, message) {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

async function readJson(req) {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

const sessions = new Map(); // sessionId -> transport

const httpServer = http.createServer(async (req, res) => {
  try {
    const url = new URL(req.url, 'http://localhost');
    if (url.pathname !== '/mcp') return jsonError(res, 404, -32000, 'Not found');

    // DNS-rebinding protection: Host (and Origin, when present) must be loopback.
    const host = hostnameOf(req.headers.host ?? '');
    const origin = req.headers.origin;
    if (!LOOPBACK.has(host) || (origin !== undefined && !LOOPBACK.has(hostnameOf(origin)))) {
      return jsonError(res, 403, -32000, 'Forbidden: non-loopback Host/Origin');
    }

    const sid = req.headers['mcp-session-id'];
    if (sid !== undefined) {
      const transport = sessions.get(sid);
      if (!transport) return jsonError(res, 404, -32001, 'Session not found');
      return await transport.handleRequest(req, res);
    }

    if (req.method !== 'POST') return jsonError(res, 400, -32000, 'Bad Request: no session');
    let body;
    try {
      body = await readJson(req);
    } catch {
      return jsonError(res, 400, -32700, 'Parse error');
    }
    const msgs = Array.isArray(body) ? body : [body];
    if (!msgs.some((m) => isInitializeRequest(m))) {
      return jsonError(res, 400, -32000, 'Bad Request: no session and not an initialize request');
    }

    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      eventStore: memoryEventStore(),
      retryInterval: RETRY_MS,
      onsessioninitialized: (id) => sessions.set(id, transport),
      onsessionclosed: (id) => sessions.delete(id),
    });
    transport.onclose = () => transport.sessionId && sessions.delete(transport.sessionId);
    const server = createFixtureServer();
    server.onerror = (err) => process.stderr.write(`fixture-http: ${err?.message ?? err}\n`);
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  } catch (err) {
    process.stderr.write(`fixture-http: ${err?.stack ?? err}\n`);
    if (!res.headersSent) jsonError(res, 500, -32603, 'Internal error');
  }
});

httpServer.listen(port, '127.0.0.1', () => {
  process.stdout.write(`http://127.0.0.1:${httpServer.address().port}/mcp\n`);
});

const shutdown = async () => {
  for (const t of sessions.values()) await t.close().catch(() => {});
  httpServer.close();
  process.exit(0);
};
process.on('SIGINT', shutdown);
process.on('SIGTERM', shutdown);
