// SPDX-License-Identifier: ISC
// common/jose against a JOSE implementation we did not write: tokens and
// keys of every type made by npm jose (panva) in t/fixtures/
// jose-vectors.mjs, fresh each run, verified by common/jose through
// t/interop/jose_cases (C), each verdict compared with the one expected;
// and the expectations themselves checked against jose's own jwtVerify,
// which must agree except where our policy is deliberately stricter (each
// such case says why).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { jwtVerify, createLocalJWKSet } from 'jose';
import { verifyCases } from '../lib/oidc.mjs';
import { vectors } from '../fixtures/jose-vectors.mjs';

const v = await vectors();

test('common/jose gives every case its verdict', async () => {
  const r = await verifyCases(v);
  const bad = r.stdout.split('\n').filter((l) => l.startsWith('not ok'));
  assert.deepEqual(bad, [], r.stdout);
  assert.equal(r.code, 0, r.stdout + (r.stderr ?? ''));
  assert.match(r.stdout, new RegExp(`^${v.cases.length} passed, 0 failed$`, 'm'));
  // Every verdict of the table is exercised by at least one case.
  const verdicts = new Set(v.cases.map((c) => c.expect));
  for (const want of ['ok', 'expired', 'not_yet_valid', 'issued_in_future', 'issuer', 'audience', 'claims',
    'alg_none', 'alg_hmac', 'alg_denied', 'no_key', 'crit', 'typ', 'kid_unknown', 'kid_ambiguous', 'signature',
    'encrypted', 'malformed', 'too_long', 'jwks_refused']) {
    assert.ok(verdicts.has(want), `no case for ${want}`);
  }
});

test('the expected verdicts agree with jose (panva)', async () => {
  const disagree = [];
  for (const c of v.cases) {
    const jwks = c.jwks ?? v.jwks;
    const algs = (c.algs ?? v.algs).split(' ');
    const typ = c.typ ?? v.typ;
    let took;
    try {
      await jwtVerify(c.token, createLocalJWKSet(jwks), {
        issuer: v.issuer,
        audience: v.audience,
        algorithms: algs,
        currentDate: new Date(v.now * 1000),
        clockTolerance: v.leeway,
        requiredClaims: ['exp'],
        ...(typ === 'at+jwt' ? { typ: 'at+jwt' } : {}),
      });
      took = true;
    } catch {
      took = false;
    }
    const ours = c.expect === 'ok';
    if (c.stricter) {
      // We refuse what jose takes, and say why.
      if (!(took && !ours)) disagree.push(`${c.name}: marked stricter, but jose ${took ? 'took' : 'refused'} it`);
    } else if (took !== ours) {
      disagree.push(`${c.name}: jose ${took ? 'took' : 'refused'} it, we expect ${c.expect}`);
    }
  }
  assert.deepEqual(disagree, []);
});

test('a case with the wrong expectation fails jose_cases', async () => {
  const c = v.cases.find((x) => x.name === 'expired');
  const r = await verifyCases({ ...v, cases: [{ ...c, expect: 'ok' }] });
  assert.equal(r.code, 1);
  assert.match(r.stdout, /^not ok - expired: got expired/m);
  assert.match(r.stdout, /^0 passed, 1 failed$/m);
});
