#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""
Delete each access check of supervisor/, one at a time, and see which unit
test fails: every check must be caught by one.

    t/unit/mutants.py [-k] [-j N] [ID ...]

The source tree is copied to a temporary directory and configured there
(the tree itself is never changed); then for each mutant its file is
edited, the supervisor's suites (t/unit/check_*.c that use sup_check.h)
are rebuilt and run, and the file is put back.  A mutant is CAUGHT when a
test fails, MISSED when all pass, STALE when its text is no longer found
exactly once (the code moved on: update the mutant), BROKEN when it does
not build, and equivalent when no test can tell (another check always
refuses first; the mutant says why).  Exits 1 if any mutant is missed or stale.  -k keeps the
temporary directory.  Takes a few minutes (one compile per mutant).

Run it by hand after changing an access check or its tests; it is not
part of make check.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile

# (id, file, function, what the check does, text, replacement[, why it
# cannot be caught]).  The text must occur once in the file.  A check that
# another always makes first is an equivalent mutant: it says why, and
# is reported, not counted, when no test fails.
MUTANTS = [
    # acl.c
    ("acl-unknown", "acl.c", "acl_client",
     "a client removed by a reload has no rights",
     "\t*unknown = 1;\n\treturn (NULL);", "\treturn (NULL);"),
    ("acl-allow", "acl.c", "acl_allows",
     "allow patterns on tool, prompt and template names",
     "\tif (cl->allow != NULL && !acl_match(cl->allow, name))\n"
     "\t\treturn (0);\n", ""),
    ("acl-deny", "acl.c", "acl_allows",
     "deny patterns on names",
     "\treturn (cl->deny == NULL || !acl_match(cl->deny, name));",
     "\treturn (1);"),
    ("acl-uri-refuse", "acl.c", "acl_allows_uri",
     "a URI that cannot be normalised is refused",
     "\t\tfree(norm);\n\t\treturn (-1);", "\t\tfree(norm);\n\t\treturn (1);"),
    ("acl-uri-deny-decoded", "acl.c", "acl_allows_uri",
     "deny patterns on the URI decoded as a file server reads it",
     "\tr = cl->deny == NULL || !acl_match(cl->deny, norm);", "\tr = 1;"),
    ("acl-uri-allow", "acl.c", "acl_allows_uri",
     "allow patterns on the URI's normal form",
     "\t\tr = (cl->allow == NULL || acl_match(cl->allow, norm)) &&",
     "\t\tr = 1 &&"),
    ("acl-uri-deny", "acl.c", "acl_allows_uri",
     "deny patterns on the URI's normal form",
     "\t\t    (cl->deny == NULL || !acl_match(cl->deny, norm));",
     "\t\t    1;"),
    ("acl-filtered", "acl.c", "acl_filtered",
     "a client with patterns sees less than everything",
     "\treturn (cl->allow != NULL || cl->deny != NULL);", "\treturn (0);"),
    ("acl-filtered-unknown", "acl.c", "acl_filtered",
     "a removed client sees nothing",
     "\tif ((cl = acl_client(s, &unknown)) == NULL)\n\t\treturn (unknown);\n"
     "\treturn (cl->allow",
     "\tif ((cl = acl_client(s, &unknown)) == NULL)\n\t\treturn (0);\n"
     "\treturn (cl->allow"),
    ("acl-register", "acl.c", "acl_may_register",
     "the register right",
     "\treturn (cl->may_register);", "\treturn (1);"),
    ("acl-register-unknown", "acl.c", "acl_may_register",
     "a removed client may not register",
     "\t\treturn (!unknown);\n\treturn (cl->may_register);",
     "\t\treturn (1);\n\treturn (cl->may_register);"),
    # acl.c and vendpoint.c: virtual endpoints (check_vendpoint)
    ("vep-names", "acl.c", "acl_allows",
     "an endpoint selects tools and prompts by its patterns",
     "\tif (s->vep != NULL && !vendpoint_selects(s->vep, kind, name))\n"
     "\t\treturn (0);\n", ""),
    ("vep-uris", "acl.c", "acl_allows_uri",
     "an endpoint selects resources by URI",
     "\tif (s->vep != NULL && (r = vendpoint_selects_uri(s->vep, uri,\n"
     "\t    why)) != 1)\n\t\treturn (r);\n", ""),
    ("vep-filtered", "acl.c", "acl_filtered",
     "an endpoint's lists are cut at all",
     "\tif (s->vep != NULL)\n\t\treturn (1);\n", ""),
    ("vep-exclude", "vendpoint.c", "vep_match",
     "a \"!\" pattern excludes",
     "\t\t\tif (fnmatch(rules[i] + 1, exc, 0) == 0)\n\t\t\t\treturn (0);",
     "\t\t\tif (0)\n\t\t\t\treturn (0);"),
    ("vep-none", "vendpoint.c", "vep_match",
     "a kind left out selects nothing",
     "\tif (rules == NULL)\n\t\treturn (0);", "\tif (rules == NULL)\n\t\treturn (1);"),
    ("vep-uri-decoded", "vendpoint.c", "vendpoint_selects_uri",
     "exclusions see the URI decoded",
     "\t\tr = vep_match(v->ec->resources, norm, dec) &&",
     "\t\tr = vep_match(v->ec->resources, norm, norm) &&"),
    ("vep-bound-mcp", "mcp_http.c", "mcp_http_session",
     "a session is known only at its endpoint (Streamable HTTP)",
     "\t    s->only != NULL || s->modern || s->vep != req->vep ||",
     "\t    s->only != NULL || s->modern ||"),
    ("vep-bound-legacy", "mcp_http.c", "mcp_http_legacy_post",
     "a session is known only at its endpoint (legacy POST)",
     "\tif (s != NULL && (s->vep != req->vep ||\n",
     "\tif (s != NULL && (0 ||\n"),
    ("vep-principal", "session.c", "session_modern",
     "an endpoint's 2026-07-28 requests are a principal of their own",
     "\tif (vep != NULL)\n\t\tsnprintf(principal + strlen(principal),",
     "\tif (0)\n\t\tsnprintf(principal + strlen(principal),"),
    ("vep-list-changed", "broadcast.c", "bcast_apply",
     "a session of an endpoint hears only of its own lists",
     "\t\tif ((changed = vendpoint_changes_for(b->epc, s,\n"
     "\t\t    b->changed)) == 0)\n\t\t\treturn;",
     "\t\tif ((changed = b->changed) == 0)\n\t\t\treturn;"),
    ("vep-oauth-metadata", "oauth_http.c", "endpoint_of",
     "an endpoint's paths are protected resources with metadata",
     "\tif (vendpoint_route(path, &t) != NULL)\n\t\treturn (path);\n", ""),
    ("vep-oauth-audience", "oauth.c", "oauth_configure",
     "a token for an endpoint's path is accepted there",
     "\t\taudience_add(&n, p, \"%s%s\", oc->resource, p);\n", ""),
    ("vep-ctools", "vendpoint.c", "vep_changes",
     "an endpoint is told of client tools only when its selection changed",
     "\t\telse if (veps[i]->ctools_changed)\n"
     "\t\t\tvc->changed[i] = 1 << CATALOG_TOOLS;",
     "\t\telse\n\t\t\tvc->changed[i] = 1 << CATALOG_TOOLS;"),
    ("vep-reload-end", "vendpoint.c", "vep_end_sessions",
     "a removed endpoint's sessions end",
     "\twhile ((s = TAILQ_FIRST(&v->sessions)) != NULL)\n"
     "\t\tsession_free(s, \"its endpoint was removed\");",
     "\ts = NULL;\n\t(void)s;"),
    # route.c
    ("route-named", "route.c", "route_named",
     "a denied tool or prompt is unknown to calls, gets and completions",
     "\tif (e == NULL || !acl_allows(s, kind, buf)) {", "\tif (e == NULL) {"),
    ("route-uri-refuse", "route.c", "route_uri_param",
     "a URI the patterns cannot check is refused (read, subscribe, "
     "unsubscribe, completion)",
     "\tif ((allowed = acl_allows_uri(s, u, &why)) < 0) {",
     "\tif ((allowed = acl_allows_uri(s, u, &why)) < -1) {"),
    ("route-uri-denied", "route.c", "route_uri_param",
     "a denied URI is not found",
     "view_catalog(s), u)) == NULL || !allowed) {",
     "view_catalog(s), u)) == NULL) {"),
    # catalog.c
    ("catalog-page-uri", "catalog.c", "page_allows",
     "resources/list cut by URI",
     "\t\treturn (acl_allows_uri(s, key, &why) == 1);", "\t\treturn (1);"),
    ("catalog-page-name", "catalog.c", "page_allows",
     "tools, prompts and templates lists cut by name",
     "\treturn (acl_allows(s, kind, key));", "\treturn (1);"),
    ("catalog-filtered", "catalog.c", "catalog_page",
     "lists of a client with patterns are cut at all",
     "\tint\t\t\t\t filtered = s != NULL &&\n\t\t\t\t\t    acl_filtered(s);",
     "\tint\t\t\t\t filtered = 0;"),
    ("catalog-item", "catalog.c", "catalog_at",
     "an item (clients' tools too) the client may not see is skipped",
     "\treturn (!filtered || page_allows(s, kind, item->key));",
     "\treturn (1);"),
    # modern_listen.c
    ("listen-uri", "modern_listen.c", "listen_open",
     "subscriptions/listen honours only URIs the client may read",
     "\t\t\t    NULL || acl_allows_uri(s, uri, &why) != 1 ||",
     "\t\t\t    NULL ||"),
    # modern.c
    ("modern-private", "modern.c", "modern_private",
     "lists that differ per principal are not for shared caches",
     "\tif (acl_filtered(s))\n\t\treturn (1);\n", ""),
    # ctools.c
    ("ctools-register", "ctools.c", "ctools_register",
     "tools/register needs the register right",
     "\tif (!acl_may_register(s)) {", "\tif (0) {"),
    ("ctools-reload", "ctools.c", "ctools_not_allowed",
     "a reload withdraws the tools of clients that lost the right",
     "\tif (!acl_may_register(t->e.owner)) {", "\tif (0) {"),
    ("ctools-squat", "ctools.c", "ctools_squats",
     "an unnamed client's tool never lands in an upstream's names",
     "\t\tif (*p != '\\0' && strncmp(exposed, p, strlen(p)) == 0)\n"
     "\t\t\treturn (upstreams[i]);\n", ""),
    ("ctools-prefix-session", "ctools.c", "ctools_prefix_taken",
     "a prefix another session holds is not given again",
     "\tif ((other = strmap_get(&prefixes, want)) != NULL && other != s)\n"
     "\t\treturn (1);\n", ""),
    ("ctools-prefix-upstream", "ctools.c", "ctools_prefix_taken",
     "a prefix an upstream holds is not given to a client",
     "\t\tif (strcmp(upstreams[i]->sc->prefix, want) == 0)\n"
     "\t\t\treturn (1);\n", ""),
    # auth.c
    ("auth-match", "auth.c", "auth_check",
     "a token that matches none is refused",
     "\treturn (found != 0 ? 0 : -1);", "\treturn (0);"),
    ("auth-length", "auth.c", "auth_equal",
     "a token matches only whole (not a prefix, not repeated)",
     "\tunsigned char\tdiff = alen != blen;", "\tunsigned char\tdiff = 0;"),
    ("auth-required-mcp", "auth.c", "auth_required",
     "MCP needs a token once one admits to it",
     "\t\treturn ((any_rights & AUTH_MCP) != 0);", "\t\treturn (0);"),
    ("auth-required-metrics", "auth.c", "auth_required",
     "the metrics need a token once any is configured",
     "\treturn (ncreds > 0);", "\treturn (0);"),
    ("auth-client-metrics", "auth.c", "auth_build",
     "a named client reads the metrics only with metrics = true",
     "AUTH_MCP | (c->clients[i].metrics ? AUTH_METRICS : 0),",
     "AUTH_MCP | AUTH_METRICS,"),
    ("auth-metrics-token", "auth.c", "auth_build",
     "a token of metrics_tokens admits to the metrics only",
     "\t\tif (auth_add(&t, c->metrics_tokens[i], NULL, AUTH_METRICS,",
     "\t\tif (auth_add(&t, c->metrics_tokens[i], NULL, "
     "AUTH_MCP | AUTH_METRICS,"),
    # mcp_access.c, mcp_http.c
    ("http-bearer", "mcp_access.c", "mcp_http_check_auth",
     "only a bearer token is taken",
     "\tif (h == NULL || h->valuelen < 8 || !http_value_begins(h, "
     "\"Bearer \")) {",
     "\tif (h == NULL || h->valuelen < 8) {"),
    ("http-rights", "mcp_access.c", "mcp_http_check_auth",
     "a token without the right asked for gets 403",
     "\t\treturn ((rights & right) != 0 ? 0 : 403);", "\t\treturn (0);"),
    ("http-credential", "mcp_http.c", "mcp_http_same_credential",
     "a session serves only the token that made it",
     "\tif (s->credential != req->credential) {",
     "\tif (0) {"),
    ("http-oauth-rights", "mcp_access.c", "mcp_http_check_auth",
     "an OAuth token's grant admits to MCP, not the metrics",
     "\treturn ((req->grant->rights & right) != 0 ? 0 : 403);",
     "\treturn (0);"),
    ("http-oauth-insufficient", "mcp_access.c", "mcp_http_check_auth",
     "a token without the scopes every request needs gets 403",
     "\tif (v->status == OAUTH_INSUFFICIENT)\n\t\treturn (403);", ""),
    # oauth.c, oauth_http.c
    ("oauth-claims", "oauth.c", "check_jwt",
     "a JWT's claims: issuer, audience, dates",
     "\tif ((r = jose_claims_check(claims, &pol, now, t, why)) != JOSE_OK)",
     "\tif ((r = jose_claims_check(claims, &pol, now, t, why)) != JOSE_OK "
     "&& 0)"),
    ("oauth-audience", "oauth.c", "pick_audience",
     "the audience checked is one of ours, never the token's",
     "\treturn (audiences[0]);",
     "\treturn (json_is_string(aud) ? json_string_value(aud) : "
     "audiences[0]);"),
    ("oauth-scopes", "oauth.c", "grant_verdict",
     "the scopes every request needs",
     "\tif (!oauth_grant_has(g, oc->scopes, &missing)) {", "\tif (0) {"),
    ("oauth-principal", "oauth.c", "grant_new",
     "the principal is the subject: another subject, another credential",
     "\t    EVP_DigestUpdate(ctx, subject, strlen(subject) + 1) != 1 ||\n",
     ""),
    ("oauth-active", "oauth.c", "introspected_verdict",
     "an introspected token must be active",
     "\tif (!json_is_object(resp) || !json_is_true(json_object_get(resp,\n"
     "\t    \"active\"))) {",
     "\tif (!json_is_object(resp)) {"),
    ("oauth-introspect-aud", "oauth.c", "introspected_verdict",
     "an introspected token must be for this resource",
     "\tif (audiences[i] == NULL) {", "\tif (0) {"),
    ("oauth-post-scopes", "mcp_http.c", "mcp_http_post",
     "an upstream's scopes: 403 on a Streamable HTTP POST",
     "\tif ((refusal = oauth_post_refusal(s, &m)) != NULL) {",
     "\tif ((refusal = oauth_post_refusal(s, &m)) != NULL && 0) {"),
    ("oauth-modern-scopes", "modern.c", "modern_post",
     "an upstream's scopes: 403 on a 2026-07-28 POST",
     "\tif ((refusal = oauth_post_refusal(s, m)) != NULL) {",
     "\tif ((refusal = oauth_post_refusal(s, m)) != NULL && 0) {",
     "equivalent for the Check suites: routing refuses it as -32023; "
     "t/interop/oauth.test.mjs (the SDK v2 steps up) fails without it"),
    ("route-scopes", "route.c", "route_scope_refused",
     "an upstream's scopes where the call is routed (WebSocket, SSE)",
     "\tif ((data = oauth_upstream_refusal(r->session, up)) == NULL)\n"
     "\t\treturn (0);",
     "\tif ((data = oauth_upstream_refusal(r->session, up)) == NULL || 1)\n"
     "\t\treturn (0);"),
    ("oauth-post-acl", "oauth_http.c", "oauth_post_refusal",
     "what the client may not use stays unknown: no 403 for it",
     "\t} else if (acl_allows(s, m->method_id == MCPM_TOOLS_CALL ?\n"
     "\t    CATALOG_TOOLS : CATALOG_PROMPTS, v)) {", "\t} else if (1) {"),
    ("oauth-upstream-scopes", "oauth_http.c", "oauth_upstream_refusal",
     "an upstream's scopes",
     "\tif ((sc = running_server(up)) == NULL ||\n"
     "\t    oauth_grant_has(s->grant, sc->scopes, &missing))",
     "\tif ((sc = running_server(up)) == NULL || 1)"),
    ("http-credential-mcp", "mcp_http.c", "mcp_http_session",
     "the binding asked for POST, GET and DELETE on /mcp",
     "\t    s->only != NULL || s->modern || s->vep != req->vep ||\n"
     "\t    !mcp_http_same_credential(c, req, s)) {",
     "\t    s->only != NULL || s->modern || s->vep != req->vep) {"),
    ("http-credential-legacy", "mcp_http.c", "mcp_http_legacy_post",
     "the binding asked for POST /messages",
     "\tif (s != NULL && (s->vep != req->vep ||\n"
     "\t    !mcp_http_same_credential(c, req, s)))\n", "\tif (s != NULL && s->vep != req->vep)\n"),
    ("http-only-own-way", "mcp_http.c", "mcp_http_session",
     "a legacy or WebSocket session is not reached by /mcp",
     "\t    s->only != NULL || s->modern ||",
     "\t    s->modern ||"),
    ("http-not-modern", "mcp_http.c", "mcp_http_session",
     "a principal's internal 2026-07-28 session is not reached by /mcp",
     "\t    s->only != NULL || s->modern ||",
     "\t    s->only != NULL ||"),
    ("http-host-required", "mcp_access.c", "mcp_http_check_host",
     "a Host header is required",
     "\tif (host == NULL || host->valuelen == 0) {\n"
     "\t\t*why = \"Host header is required\";\n\t\treturn (400);\n\t}\n",
     "\tif (host == NULL)\n\t\treturn (0);\n"),
    ("http-host-allowed", "mcp_access.c", "mcp_http_check_host",
     "Host must be one of allowed_hosts",
     "\t\tif (!host_in(&a, host->value, host->valuelen,\n"
     "\t\t    conf->allowed_hosts)) {",
     "\t\tif (0) {"),
    ("http-host-loopback", "mcp_access.c", "mcp_http_check_host",
     "on loopback, Host must be a loopback name",
     "\t} else if (loopback && !host_in(&a, host->value,",
     "\t} else if (0 && !host_in(&a, host->value,"),
    ("http-origin-malformed", "mcp_access.c", "mcp_http_check_origin",
     "a malformed Origin is refused as such",
     "\tif (r < 0) {", "\tif (0) {"),
    ("http-origin-allowed", "mcp_access.c", "mcp_http_check_origin",
     "an Origin must be one of allowed_origins",
     "\t\t*why = \"Origin not allowed\";\n\t\treturn (403);\n\t}\n"
     "\t/* Default",
     "\t\treturn (0);\n\t}\n\t/* Default"),
    ("http-origin-loopback", "mcp_access.c", "mcp_http_check_origin",
     "by default an Origin must be on a loopback name",
     "\t    host_in(&a, a.host, a.hostlen, (char *const *)loopback_names))",
     "\t    1)"),
    ("http-origin-scheme", "mcp_access.c", "mcp_http_check_origin",
     "by default an Origin must be http or https",
     "\tif (r == 0 && (strcmp(scheme, \"http\") == 0 ||\n"
     "\t    strcmp(scheme, \"https\") == 0) &&",
     "\tif (r == 0 &&"),
    ("http-check-auth", "mcp_access.c", "mcp_http_check_access",
     "the token is checked for the right asked for",
     "\tswitch (mcp_http_check_auth(req, right, 0, &v)) {",
     "\tswitch (0) {"),
    ("http-check-mcp", "mcp_http.c", "mcp_http_check",
     "/mcp, /sse, /messages and the WebSocket need the MCP right",
     "\treturn (mcp_http_check_access(c, req, listen_loopback, AUTH_MCP));",
     "\treturn (mcp_http_check_access(c, req, listen_loopback, 0));"),
    ("http-request-check", "http_request.c", "(request head)",
     "every request's head is checked before its body is read",
     "\tif (c->svc->check != NULL && (r = c->svc->check(c, &c->req)) != 0) {",
     "\tif (0) {"),
    ("http-check-again", "http_request.c", "http_check_again",
     "a head whose check waited is checked again before its body is read",
     "\tif ((r = c->svc->check(c, &c->req)) != 0)\n\t\treturn;",
     "\t(void)r;"),
    ("listen-loopback", "http_listen.c", "http_listen",
     "a listener on loopback keeps the loopback Host rule",
     "\t\tif (!http_is_loopback(ai->ai_addr))", "\t\tif (1)"),
    ("control-mode", "control.c", "control_listen",
     "the control socket is for its owner and group (mode 0660)",
     "\told = umask(0117);", "\told = umask(0);"),
    # endpoints.c, health.c
    ("endpoint-metrics", "endpoints.c", "main_check",
     "/metrics on the main listener needs the metrics right",
     "\t\treturn (mcp_http_check_access(c, req, listen_loopback,\n"
     "\t\t    AUTH_METRICS));",
     "\t\treturn (mcp_http_check_access(c, req, listen_loopback,\n"
     "\t\t    0));"),
    ("endpoint-health", "endpoints.c", "main_check",
     "the health checks are under the Host and Origin rules",
     "\tif (health_path(req))\n"
     "\t\treturn (mcp_http_check_access(c, req, listen_loopback, 0));",
     "\tif (health_path(req))\n\t\treturn (0);"),
    ("endpoint-metrics-listener", "endpoints.c", "metrics_check",
     "/metrics on metrics_listen needs the metrics right",
     "\t    health_path(req) ? 0 : AUTH_METRICS));",
     "\t    health_path(req) ? 0 : 0));"),
    ("endpoint-metrics-listener-host", "endpoints.c", "metrics_check",
     "metrics_listen is under its Host and Origin rules",
     "\treturn (mcp_http_check_access(c, req, metrics_loopback,\n"
     "\t    health_path(req) ? 0 : AUTH_METRICS));",
     "\treturn (0);"),
    ("endpoint-metrics-listener-paths", "endpoints.c", "metrics_check",
     "metrics_listen serves the metrics and health checks only",
     "\tif (!health_path(req) && !metrics_path(req)) {", "\tif (0) {"),
    ("health-reasons", "health.c", "health_serve",
     "why /readyz is not ready is said only to metrics readers",
     "\telse if (mcp_http_may(req, AUTH_METRICS))", "\telse if (1)"),
    # session.c
    ("session-whole-id", "session.c", "session_find",
     "a session id must match whole, not only the bits that find it",
     "\tif (strlen(s->sid) != len || !equal_ct(s->sid, id, len))\n"
     "\t\treturn (NULL);\n", ""),
    ("session-principal", "session.c", "session_modern",
     "each principal's 2026-07-28 requests are its own",
     "\tsnprintf(principal, sizeof principal, \"%016llx/%s\",\n"
     "\t    (unsigned long long)credential, client != NULL ? client : \"\");",
     "\tsnprintf(principal, sizeof principal, \"everyone\");"),
    # continuation.c
    ("state-binding", "continuation.c", "continuation_resume",
     "requestState serves its principal, method, name and arguments",
     "\tif (!stoken_binding_equal(binding, t.binding))",
     "\tif (0)"),
    ("state-mac", "continuation.c", "continuation_resume",
     "requestState must verify (HMAC)",
     "\tif (verdict != STOKEN_OK)\n\t\treturn (refuse(r, \"requestState %s\",",
     "\tif (0)\n\t\treturn (refuse(r, \"requestState %s\","),
    ("state-once", "continuation.c", "continuation_resume",
     "requestState is good once (its round)",
     "\t    !pk->waiting || t.round != pk->round)",
     "\t    0)"),
    ("state-session", "continuation.c", "continuation_resume",
     "requestState continues only its own session's call",
     "\tif ((pk = parked_find(t.id)) == NULL || pk->session != s ||",
     "\tif ((pk = parked_find(t.id)) == NULL ||",
     "the binding names the principal, a principal has one session, and "
     "its parked calls end with it: defence in depth"),
    ("acl-uri-plain-refuse", "acl.c", "acl_allows_uri",
     "a URI whose written form cannot be normalised is refused",
     "\tif (r && uri_normalize(uri, len, 0, norm, len + 1, why) != 0)\n"
     "\t\tr = -1;\n", "\tif (r)\n\t\turi_normalize(uri, len, 0, norm, "
     "len + 1, why);\n",
     "the decoded form is refused whenever the written one is "
     "(common/uri.c): defence in depth"),
    # route_up.c: who is asked what
    ("caps-sampling", "route_up.c", "route_caps_can",
     "sampling goes only to a client that declared it",
     "\t\tc = json_object_get(caps, \"sampling\");\n\t\tif (c == NULL) {",
     "\t\tc = json_object_get(caps, \"sampling\");\n\t\tif (0) {"),
    ("caps-sampling-tools", "route_up.c", "route_caps_can",
     "sampling with tools only to a client that declared sampling.tools",
     "\t\t    json_object_get(c, \"tools\") == NULL) {", "\t\t    0) {"),
    ("caps-elicitation", "route_up.c", "route_caps_can",
     "elicitation goes only to a client that declared it",
     "\t\tc = json_object_get(caps, \"elicitation\");\n\t\tif (c == NULL) {",
     "\t\tc = json_object_get(caps, \"elicitation\");\n\t\tif (0) {"),
    ("caps-roots", "route_up.c", "route_caps_can",
     "roots/list goes only to a client that declared roots",
     "\tcase MCPM_ROOTS:\n"
     "\t\tif (json_object_get(caps, \"roots\") == NULL) {",
     "\tcase MCPM_ROOTS:\n\t\tif (0) {"),
    ("roots-shared", "route_up.c", "roots_refused",
     "a shared upstream is never given one client's roots",
     "\tif (m->method_id != MCPM_ROOTS ||\n"
     "\t    up->sc->isolation != ISOLATION_SHARED || upstream_modern(up))\n"
     "\t\treturn (0);",
     "\tif (1)\n\t\treturn (0);"),
    # pin.c, pin_store.c: pinned tool definitions
    ("pin-hold", "pin.c", "pin_check",
     "a changed definition is held back under enforce",
     "\tpin_set_held(p, mode == PINNING_ENFORCE);\n\treturn (!p->held);",
     "\tpin_set_held(p, mode == PINNING_ENFORCE);\n\treturn (1);"),
    ("pin-hold-mode", "pin.c", "pin_check",
     "held back only under enforce, and under enforce always",
     "\tpin_set_held(p, mode == PINNING_ENFORCE);",
     "\tpin_set_held(p, mode != PINNING_OFF);"),
    ("pin-off", "pin.c", "pin_check",
     "pinning = off records nothing",
     "\tif (mode == PINNING_OFF)\n\t\treturn (1);\n", ""),
    ("pin-held-acl", "route.c", "route_held",
     "a held tool is named only to a client that may see its name",
     "\tif (!acl_allows(r->session, CATALOG_TOOLS, name) ||\n"
     "\t    !pin_held_error",
     "\tif (!pin_held_error"),
    ("pin-approve-changed", "pin.c", "pin_approve",
     "only a changed tool can be approved",
     "\tif (!p->changed) {", "\tif (0) {"),
    ("pin-approve-digest", "pin.c", "pin_approve",
     "an approval with a digest approves only what was looked at",
     "\tif (digest != NULL && (strlen(digest) < 8 ||",
     "\tif (0 && (strlen(digest) < 8 ||"),
    ("pin-load-digest", "pin_store.c", "load_one",
     "a stored definition that does not have its digest is refused",
     "\t\tif (memcmp(check, d, PIN_DIGEST_LEN) != 0) {", "\t\tif (0) {"),
    # override.c, as catalog.c applies it
    ("override-hidden", "catalog.c", "catalog_merge_named",
     "a hidden tool is neither listed nor callable",
     "\t\t\tif (o != NULL && o->hidden)\n\t\t\t\tcontinue;\n", ""),
    # limit.c, breaker.c: an upstream's traffic policy (check_limit)
    ("limit-cap", "limit.c", "limit_free_slot",
     "no more than max_concurrent calls in flight",
     "\treturn (cap == 0 || up->limit.inflight < cap);", "\treturn (1);"),
    ("limit-queue-full", "limit.c", "limit_full",
     "no more than max_queued calls waiting",
     "\t    up->limit.nwaiting > 0) && up->limit.nwaiting >= t->max_queued);",
     "\t    up->limit.nwaiting > 0) && 0);"),
    ("limit-queue-timeout", "route_pending.c", "route_timeout_cb",
     "a waiter's timer is queue_timeout's, and it never reaches the upstream",
     "\tif (p->waiting) {\n\t\tlimit_expired(p);\n\t\treturn;\n\t}\n", ""),
    ("limit-cancel", "limit.c", "limit_pending_gone",
     "a waiter cancelled or whose session ends leaves the queue",
     "\t\tlimit_unqueue(p);\n\t}\n\tif (p->slot) {",
     "\t}\n\tif (p->slot) {"),
    ("limit-stream-gone", "route_pending.c", "route_stream_gone",
     "a waiter whose answer has nowhere to go leaves the queue",
     "\tlimit_stream_gone(st);\n", ""),
    ("limit-release", "limit.c", "limit_pending_gone",
     "a call that ends gives its slot to the oldest waiter",
     "\t\tlimit_kick(up);\n\t}\n\tif (p->limit == LIMIT_PROBE)",
     "\t}\n\tif (p->limit == LIMIT_PROBE)"),
    ("breaker-open", "breaker.c", "breaker_failure",
     "breaker_failures in a row open the breaker",
     "\t\tif (b->failures >= up->sc->traffic.breaker_failures)\n"
     "\t\t\tbreaker_open(up);\n", ""),
    ("breaker-fail-fast", "breaker.c", "breaker_admit",
     "an open breaker fails calls fast",
     "\tb->refused++;\n\tbreaker_refuse(up, rf);\n\treturn (-1);",
     "\treturn (0);"),
    ("breaker-one-probe", "breaker.c", "breaker_admit",
     "half-open, one probe at a time",
     "\t\tif (!b->probing) {", "\t\tif (1) {"),
    ("breaker-probe-gone", "breaker.c", "breaker_probe_gone",
     "a probe that ends without an outcome lets the next call probe",
     "\t\tup->breaker.probing = 0;\n}", "\t\t;\n}"),
    ("breaker-answer-ends-run", "breaker.c", "breaker_success",
     "an answer ends a run of failures",
     "\t\tif (b->failures > 0) {\n\t\t\tb->failures = 0;",
     "\t\tif (b->failures > 0) {\n\t\t\t;"),
    ("breaker-window", "breaker.c", "breaker_timer_cb",
     "a run older than breaker_window starts again",
     "\t\tb->failures = 0;\n\t\treturn;", "\t\treturn;"),
    ("breaker-codes", "route_answer.c", "route_fail",
     "only a failed connection or a timeout counts",
     "\t\tif ((code == MCP_CONNECTION_CLOSED ||\n"
     "\t\t    code == MCP_REQUEST_TIMEOUT) &&",
     "\t\tif (1 &&"),
    ("breaker-not-deaths", "route_answer.c", "route_fail",
     "the calls of an upstream that is exiting do not count",
     "\t\t    code == MCP_REQUEST_TIMEOUT) && !gone &&\n"
     "\t\t    up->state == UPSTREAM_READY)",
     "\t\t    code == MCP_REQUEST_TIMEOUT) && !gone)"),
    ("breaker-readyz", "health.c", "health_ready",
     "an open breaker of a required upstream: /readyz 503",
     "\t\tif (up->sc->required && up->breaker.state == BREAKER_OPEN) {",
     "\t\tif (0) {"),
    # rate.c: rate limits (check_rate)
    ("rate-checked", "route_pending.c", "route_forward",
     "a call over a rate limit is refused",
     "\tif (rate_admit(s, up, r->name, &rf, &hold) != 0) {",
     "\tif (0) {"),
    ("rate-429", "rate.c", "rate_refused",
     "a modern request over a rate limit: HTTP 429 with Retry-After",
     "\tst->status = 429;\n", ""),
    ("rate-per-principal", "rate.c", "rate_principal",
     "each principal has its own bucket",
     "\telse if (s->client_name != NULL)\n\t\tsnprintf(buf, len, \"client %s\", "
     "s->client_name);",
     "\telse if (s->client_name != NULL)\n\t\tsnprintf(buf, len, \"client\");"),
    ("rate-per-subject", "rate.c", "rate_principal",
     "each OAuth subject has its own bucket, whatever client it maps to",
     "\tif (s->grant != NULL)",
     "\tif (0)"),
    ("rate-shared", "rate.c", "rate_admit",
     "a shared rule has one bucket for everyone",
     "\t\tif (rules[i].rc.shared)\n\t\t\tuse[n] = &rules[i].shared;",
     "\t\tif (0)\n\t\t\tuse[n] = &rules[i].shared;"),
    ("rate-all-or-none", "rate.c", "rate_admit",
     "a refused call takes no token from any rule",
     "\t\tuse[n]->tokens = level;\n\t\tuse[n]->at = now;\n"
     "\t\twhich[n++] = i;\n\t}\n"
     "\t/* Every bucket has a token and every rule room: take them. */\n"
     "\tfor (i = 0; i < n; i++) {\n\t\tuse[i]->tokens -= 1;",
     "\t\tuse[n]->tokens = level - 1;\n\t\tuse[n]->at = now;\n"
     "\t\twhich[n++] = i;\n\t}\n"
     "\tfor (i = 0; i < n; i++) {\n\t\t;"),
    ("rate-burst", "rate.c", "rate_level",
     "a bucket holds at most burst tokens",
     "\treturn (t > rr->rc.burst ? rr->rc.burst : t);", "\treturn (t);"),
    ("rate-tool-glob", "rate.c", "rate_matches",
     "a rule with a tool pattern matches only those tools",
     "\tif (rr->rc.tool != NULL && (name == NULL || fnmatch(rr->rc.tool, "
     "name,\n\t    0) != 0))\n\t\treturn (0);\n", ""),
    ("conc-checked", "rate.c", "rate_admit",
     "a call over a rule's concurrent is refused",
     "\t\t\tif (rate_conc_level(&rules[i], principal) >=\n"
     "\t\t\t    rules[i].rc.concurrent) {",
     "\t\t\tif (0) {"),
    ("conc-released", "route_pending.c", "route_pending_free",
     "a call that ends gives its calls in flight back",
     "\t\trate_release(p->rate_hold);\n", "\t\tfree(p->rate_hold);\n"),
    ("conc-limit-refused", "route_pending.c", "route_forward",
     "a call its upstream's queue refuses holds no call in flight",
     "\t\tif (hold != NULL)\n\t\t\trate_release(hold);\n", ""),
    ("conc-shared", "rate.c", "rate_conc_level",
     "a shared rule counts everyone's calls together",
     "\tif (rr->rc.shared)\n\t\treturn (rr->inflight);",
     "\tif (0)\n\t\treturn (rr->inflight);"),
    ("conc-per-principal", "rate.c", "rate_conc_key",
     "each principal's calls in flight are counted apart",
     "\tsnprintf(buf, len, \"%s/%s\", rr->rc.name, principal);",
     "\tsnprintf(buf, len, \"%s/\", rr->rc.name);"),
    ("conc-reload", "rate.c", "rate_configure",
     "a reload keeps the count of a rule's calls in flight",
     "\t\t\t\trules[i].inflight += k->inflight;\n", ""),
    # tool_search.c: search_tools shows a client what it may see
    # (check_tool_search)
    ("search-filtered", "tool_search.c", "search_visible",
     "a client with patterns searches only what they allow",
     "\tif (!acl_filtered(s))\n\t\treturn (NULL);", "\treturn (NULL);"),
    ("search-visible", "tool_search.c", "search_visible",
     "a tool the client (or its endpoint) may not see is left out before "
     "ranking",
     "\t\t    acl_allows(s, CATALOG_TOOLS, sidx_key(idx, (uint32_t)i));",
     "\t\t    1;"),
    ("search-recheck", "tool_search.c", "search_tools",
     "each hit is checked again as a call would be",
     "\t\t    NULL || e->up == NULL ||\n"
     "\t\t    !acl_allows(r->session, CATALOG_TOOLS, sidx_key(idx,\n"
     "\t\t    hits[i].doc)))",
     "\t\t    NULL || e->up == NULL)",
     "search_visible has left out what acl_allows refuses, before "
     "ranking"),
    # uplogin.c: an upstream's login takes only what belongs to it
    # (check_uplogin)
    ("login-state", "uplogin.c", "serve_callback",
     "the redirect reaches only the login whose state it carries",
     "\t\t    CRYPTO_memcmp(upstreams[i]->login.state, state,\n"
     "\t\t    strlen(state)) == 0) {",
     "\t\t    1) {"),
    ("login-waiting", "uplogin.c", "serve_callback",
     "only a login that waits takes a redirect (not one answered)",
     "\t\tif (upstreams[i]->login.phase == LOGIN_WAITING &&",
     "\t\tif (1 &&"),
    ("login-code-waiting", "uplogin.c", "login_code",
     "a pasted response goes only to a login that waits",
     "\tif (up->login.phase != LOGIN_WAITING)\n", "\tif (0)\n"),
    # route.c: a tool of an upstream waiting for a login
    ("login-name-acl", "route.c", "route_login_needed",
     "a name the client may not see is unknown, not 'needs a login'",
     "\tif (!acl_allows(r->session, kind, name) ||\n"
     "\t    (up = route_prefix_owner(name, route_is_login)) == NULL)",
     "\tif ((up = route_prefix_owner(name, route_is_login)) == NULL)"),
    # uplogin_users.c: each principal's tokens are its own
    # (check_uplogin_users)
    ("user-record", "uplogin_users.c", "uplogin_session_open",
     "a session is given its own principal's record, no other's",
     "\tif ((r = users_record(up, id)) != NULL)\n"
     "\t\tjson_object_set(o, \"oauth_record\", r);",
     "\tif ((r = users_record(up, \"gateway\")) != NULL)\n"
     "\t\tjson_object_set(o, \"oauth_record\", r);"),
    ("user-state", "uplogin_users.c", "users_login_find",
     "a redirect reaches only the identity whose login's state it carries",
     "\t\t\tif (n > 0 && strlen(v) == n &&\n"
     "\t\t\t    CRYPTO_memcmp(v, secret, n) == 0) {",
     "\t\t\tif (which == 0 || (n > 0 && strlen(v) == n &&\n"
     "\t\t\t    CRYPTO_memcmp(v, secret, n) == 0)) {"),
]

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
FAIL_LINE = re.compile(r"^\S+:\d+:[FE]:([^:]+):([^:]+):")


def run(cmd, cwd, timeout=None):
    return subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True,
                          timeout=timeout)


def suites():
    """The suites of the supervisor: check_*.c that include sup_check.h."""
    found = []
    unit = os.path.join(TOP, "t", "unit")
    for name in sorted(os.listdir(unit)):
        if name.startswith("check_") and name.endswith(".c"):
            with open(os.path.join(unit, name)) as f:
                if '"sup_check.h"' in f.read():
                    found.append("t/unit/" + name[:-2])
    return found


def failures(build, tests):
    """The tests that fail, as "suite:test"; the suites' binaries run."""
    failed = []
    for t in tests:
        try:
            r = run(["./" + t], build, timeout=300)
            out = r.stdout
        except subprocess.TimeoutExpired:
            failed.append(os.path.basename(t) + ":(hung)")
            continue
        names = [os.path.basename(t)[6:] + ":" + m.group(2)
                 for m in map(FAIL_LINE.match, out.splitlines()) if m]
        if r.returncode != 0 and not names:
            names = [os.path.basename(t)[6:] + ":(exit %d)" % r.returncode]
        failed.extend(names)
    return failed


def skip(d, names):
    """What is not copied: git, build directories, node modules."""
    return [n for n in names if n in (".git", "node_modules",
            "autom4te.cache") or (d == TOP and (n == "build" or
            (n.startswith("build-") and n != "build-aux")))]


def main():
    args = sys.argv[1:]
    keep = "-k" in args
    jobs = "2"
    if "-j" in args:
        jobs = args[args.index("-j") + 1]
        del args[args.index("-j"):args.index("-j") + 2]
    wanted = [a for a in args if a != "-k"]
    tmp = tempfile.mkdtemp(prefix="mcps-mutants.")
    src = os.path.join(tmp, "src")
    shutil.copytree(TOP, src, symlinks=True, ignore=skip)
    build = os.path.join(src, "b")
    os.mkdir(build)
    tests = suites()
    print("building in %s" % build, flush=True)
    for step in (["../configure", "--quiet"], ["make", "-j" + jobs] + tests):
        r = run(step, build)
        if r.returncode != 0:
            print("cannot build the suites:\n%s" % r.stdout[-3000:],
                  file=sys.stderr)
            return 2
    base = failures(build, tests)
    if base:
        print("the suites fail unmutated: %s" % " ".join(base),
              file=sys.stderr)
        return 2
    bad = 0
    print("| mutant | file:function | check | result |")
    print("|---|---|---|---|")
    for mutant in MUTANTS:
        mid, fname, func, what, old, new = mutant[:6]
        equivalent = mutant[6] if len(mutant) > 6 else None
        if wanted and mid not in wanted:
            continue
        path = os.path.join(src, "supervisor", fname)
        with open(path) as f:
            text = f.read()
        if text.count(old) != 1:
            result = "STALE (its text is found %d times)" % text.count(old)
            bad += 1
        else:
            with open(path, "w") as f:
                f.write(text.replace(old, new))
            try:
                if run(["make", "-j" + jobs] + tests, build).returncode != 0:
                    result = "BROKEN (does not build)"
                    bad += 1
                else:
                    failed = failures(build, tests)
                    if failed:
                        result = "caught by " + ", ".join(failed)
                    elif equivalent is not None:
                        result = "equivalent: " + equivalent
                    else:
                        result = "MISSED"
                        bad += 1
            finally:
                with open(path, "w") as f:
                    f.write(text)
        print("| %s | %s:%s | %s | %s |" % (mid, fname, func, what, result),
              flush=True)
    if keep:
        print("kept %s" % tmp)
    else:
        shutil.rmtree(tmp)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
