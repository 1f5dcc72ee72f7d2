// SPDX-License-Identifier: ISC
// 2026-07-28 requests by hand, for what an SDK client would not send:
// tampered or replayed requestState, missing or lying headers, other
// principals.  Every request is one POST; answers come back parsed,
// whether JSON or an event stream.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { srcdir } from './gateway.mjs';

export const MODERN = '2026-07-28';

// The envelope of a request: its version, capabilities and identity.
export function envelope(caps = {}, extra = {}) {
  return {
    'io.modelcontextprotocol/protocolVersion': MODERN,
    'io.modelcontextprotocol/clientCapabilities': caps,
    'io.modelcontextprotocol/clientInfo': { name: 'hand', version: '1' },
    ...extra,
  };
}

let nextId = 1;

// The Mcp-Name header for a value, in the Base64 sentinel when needed.
function nameHeader(v) {
  return /^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$/.test(v) && !/^=\?base64\?.*\?=$/.test(v)
    ? v : `=?base64?${Buffer.from(v, 'utf8').toString('base64')}?=`;
}

// POST one modern request.  opts: caps, meta (more _meta), headers (set
// or replaced; null removes), token (bearer), id.  Returns { status,
// body (the JSON-RPC response), events (every message of a stream),
// headers }.
export async function post(url, method, params = {}, opts = {}) {
  const id = opts.id ?? nextId++;
  const body = {
    jsonrpc: '2.0', id, method,
    params: { ...params, _meta: { ...envelope(opts.caps ?? {}), ...(opts.meta ?? {}) } },
  };
  const headers = {
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
    'MCP-Protocol-Version': MODERN,
    'Mcp-Method': method,
  };
  const name = method === 'resources/read' ? params.uri : params.name;
  if (['tools/call', 'prompts/get', 'resources/read'].includes(method) && typeof name === 'string') {
    headers['Mcp-Name'] = nameHeader(name);
  }
  if (opts.token) headers.Authorization = `Bearer ${opts.token}`;
  for (const [k, v] of Object.entries(opts.headers ?? {})) {
    if (v === null) delete headers[k]; else headers[k] = v;
  }
  const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify(opts.rawBody ?? body), signal: opts.signal });
  const type = res.headers.get('content-type') ?? '';
  const out = { status: res.status, headers: res.headers, events: [] };
  if (type.startsWith('text/event-stream')) {
    const text = await res.text();
    for (const block of text.split('\n\n')) {
      const data = block.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n');
      if (data) out.events.push(JSON.parse(data));
    }
    out.body = out.events.find((e) => e.id !== undefined && (e.result !== undefined || e.error !== undefined));
  } else {
    const text = await res.text();
    out.body = text ? JSON.parse(text) : undefined;
  }
  return out;
}

// Start t/fixtures/modern-server.mjs over HTTP; resolves with its URL and
// a stop().  It ends by itself when the test process does (stdin).
export async function modernServer(...args) {
  const child = spawn(process.execPath, [path.join(srcdir, 't/fixtures/modern-server.mjs'), 'http', ...args],
    { stdio: ['pipe', 'pipe', 'inherit'] });
  const url = await new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`modern-server exited ${code}`)));
    child.stdout.once('data', (d) => resolve(JSON.parse(d).url));
  });
  return { url, child, stop: () => { child.stdin.end(); child.kill(); } };
}

// The configuration of a stdio upstream running the modern fixture.
export function modernStdio(name, extra = '', args = []) {
  const q = (s) => JSON.stringify(s);
  return `{ name = ${q(name)}; transport = "stdio"; command = [ ${q(process.execPath)}, ${q(path.join(srcdir, 't/fixtures/modern-server.mjs'))}, "stdio"${args.map((a) => `, ${q(a)}`).join('')} ]; ${extra} }`;
}
