/*
 * The upstream's era and handshake.  A 2025-era upstream is initialized;
 * a 2026-07-28 one has no handshake and is asked server/discover.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "log.h"
#include "worker.h"
#include "xmalloc.h"

/* Protocol versions the worker accepts from upstreams. */
static const char *const upstream_versions[] = {
	"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", NULL
};

/* The initialize answer arrived. */
static void
conn_initialized(struct conn *c, const struct jrpc *m, void *arg)
{
	json_t		*result;
	json_error_t	 jerr;
	const char	*version, *instr;
	char		 why[512];
	size_t		 i;

	if (m->kind == JRPC_ERROR) {
		snprintf(why, sizeof why, "initialize failed: %.*s",
		    (int)(m->error.len > 300 ? 300 : m->error.len),
		    m->p + m->error.off);
		conn_lost(c, why);
		return;
	}
	result = json_loadb(m->p + m->result.off, m->result.len,
	    JSON_ALLOW_NUL, &jerr);
	if (result == NULL || json_unpack(result, "{s:s}", "protocolVersion",
	    &version) != 0) {
		json_decref(result);
		conn_lost(c, "initialize result has no protocolVersion");
		return;
	}
	for (i = 0; upstream_versions[i] != NULL; i++) {
		if (strcmp(version, upstream_versions[i]) == 0)
			break;
	}
	if (upstream_versions[i] == NULL) {
		snprintf(why, sizeof why, "unsupported protocol version %.32s",
		    version);
		json_decref(result);
		conn_lost(c, why);
		return;
	}
	snprintf(c->version, sizeof c->version, "%s", version);
	c->server_caps = json_incref(json_object_get(result, "capabilities"));
	if (!json_is_object(c->server_caps)) {
		json_decref(c->server_caps);
		c->server_caps = json_object();
	}
	c->server_info = json_incref(json_object_get(result, "serverInfo"));
	if (json_unpack(result, "{s:s}", "instructions", &instr) == 0)
		c->instructions = xstrdup(instr);
	json_decref(result);
	conn_notify(c, "notifications/initialized", NULL);
	log_debug("initialized, protocol %s", c->version);
	if (c->ops->initialized != NULL)
		c->ops->initialized(c);
	if (c->session != 0) {
		/* Its requests flow at once; its catalog, the session's view
		 * of this upstream, follows when fetched. */
		conn_ready(c);
		catalog_fetch_all(c);
	} else
		catalog_fetch_all(c);
}

/*
 * The client capabilities to declare to the upstream.  A shared upstream
 * serves every client at once, so it is told only what the gateway can
 * honour for any request on that session, whoever caused it: sampling and
 * elicitation when their strategy lists can always answer (they end in
 * decline), never roots, which belong to one client.  A per-session
 * instance serves one client: its client's capabilities, plus what the
 * strategies can always answer.
 */
static json_t *
conn_client_caps(struct conn *c)
{
	json_t	*caps;

	if (c->info != NULL && json_is_object(c->info->caps))
		caps = json_deep_copy(c->info->caps);
	else
		caps = json_object();
	if (conf_strategies_always(sc->sampling, sc->nsampling) &&
	    json_object_get(caps, "sampling") == NULL)
		json_object_set_new(caps, "sampling", json_object());
	if (conf_strategies_always(sc->elicitation, sc->nelicitation))
		json_object_set_new(caps, "elicitation", json_pack("{s:{}, s:{}}",
		    "form", "url"));
	return (caps);
}

/* The transport is up: begin the handshake. */
void
conn_transport_up(struct conn *c)
{
	json_t	*params, *info;

	c->state = CONN_INITIALIZING;
	info = json_pack("{s:s, s:s}", "name", "mcp-supervisor", "version",
	    PACKAGE_VERSION);
	params = json_pack("{s:s, s:o, s:o}", "protocolVersion", "2025-11-25",
	    "capabilities", conn_client_caps(c), "clientInfo", info);
	conn_call(c, "initialize", params, conn_initialized, NULL);
}
