/* SPDX-License-Identifier: ISC */
/* One upstream's group in servers = ( ... ), read strictly. */
#include "config.h"

#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <libconfig.h>

#include "conf.h"
#include "conf_priv.h"
#include "env.h"
#include "naming.h"
#include "xmalloc.h"

/* Read an env group: { NAME = "value"; ... }. */
static int
get_env(struct conf_ctx *ctx, const config_setting_t *s, char ***out)
{
	config_setting_t	*e;
	char			**v;
	int			  i, n;

	if (!config_setting_is_group(s))
		return (conf_error(ctx, s, "env must be a group of "
		    "NAME = \"value\" settings"));
	n = config_setting_length(s);
	v = xcalloc((size_t)n + 1, sizeof *v);
	for (i = 0; i < n; i++) {
		e = config_setting_get_elem(s, (unsigned int)i);
		if (!env_valid_name(config_setting_name(e)) ||
		    config_setting_type(e) != CONFIG_TYPE_STRING) {
			conf_strv_free(v);
			return (conf_error(ctx, e, "env: %s must be a string "
			    "with a valid variable name",
			    config_setting_name(e)));
		}
		if (!conf_valid_utf8(config_setting_get_string(e))) {
			conf_strv_free(v);
			return (conf_error(ctx, e, "env: %s must be valid "
			    "UTF-8", config_setting_name(e)));
		}
		xasprintf(&v[i], "%s=%s", config_setting_name(e),
		    config_setting_get_string(e));
	}
	conf_strv_free(*out);
	*out = v;
	return (0);
}

int
conf_get_pass_env(struct conf_ctx *ctx, const config_setting_t *s,
    char ***out)
{
	char	**v = NULL;
	size_t	  i, j;

	if (conf_get_strv(ctx, s, 0, &v) != 0)
		return (-1);
	for (i = 0; v[i] != NULL; i++) {
		if (i == CONF_MAX_PASS_ENV) {
			conf_strv_free(v);
			return (conf_error(ctx, s, "pass_env: more than %d "
			    "names", CONF_MAX_PASS_ENV));
		}
		for (j = 0; j < i && strcmp(v[i], v[j]) != 0; j++)
			;
		if (!env_valid_name(v[i]) || j < i) {
			conf_error(ctx, config_setting_get_elem(s,
			    (unsigned int)i), j < i ? "pass_env: %s is named "
			    "twice" : "pass_env: \"%s\" is not a variable name "
			    "(letters, digits and _, not beginning with a "
			    "digit)", v[i]);
			conf_strv_free(v);
			return (-1);
		}
	}
	conf_strv_free(*out);
	*out = v;
	return (0);
}

/* The global pass_env and an upstream's own, each name once; or NULL. */
static char **
pass_env_union(char *const *global, char *const *own)
{
	char	**v;
	size_t	  n = 0, i, j, k = 0;

	for (i = 0; global != NULL && global[i] != NULL; i++)
		n++;
	for (i = 0; own != NULL && own[i] != NULL; i++)
		n++;
	if (n == 0)
		return (NULL);
	v = xcalloc(n + 1, sizeof *v);
	for (i = 0; global != NULL && global[i] != NULL; i++)
		v[k++] = xstrdup(global[i]);
	for (i = 0; own != NULL && own[i] != NULL; i++) {
		for (j = 0; j < k && strcmp(v[j], own[i]) != 0; j++)
			;
		if (j == k)
			v[k++] = xstrdup(own[i]);
	}
	return (v);
}

/* Is s an HTTP header name (a token) we let users set? */
static int
valid_header_name(const char *s)
{
	static const char *const reserved[] = {
		"Host", "Content-Length", "Content-Type", "Transfer-Encoding",
		"Connection", "Upgrade", "Accept", "Mcp-Session-Id",
		"MCP-Protocol-Version", "Last-Event-ID", NULL
	};
	size_t	i;

	if (*s == '\0')
		return (0);
	for (i = 0; s[i] != '\0'; i++) {
		if (!((s[i] >= 'A' && s[i] <= 'Z') ||
		    (s[i] >= 'a' && s[i] <= 'z') ||
		    (s[i] >= '0' && s[i] <= '9') || s[i] == '-' || s[i] == '_'))
			return (0);
	}
	for (i = 0; reserved[i] != NULL; i++) {
		if (strcasecmp(reserved[i], s) == 0 ||
		    strncasecmp(s, "Sec-WebSocket-", 14) == 0)
			return (0);
	}
	return (1);
}

/* Read a headers group: { Authorization = "Bearer ${file:/path}"; }. */
int
conf_get_headers(struct conf_ctx *ctx, const config_setting_t *s, char ***out)
{
	config_setting_t	*e;
	const char		*v;
	char			**h;
	int			  i, n;

	if (!config_setting_is_group(s))
		return (conf_error(ctx, s, "headers must be a group of "
		    "Name = \"value\" settings"));
	n = config_setting_length(s);
	h = xcalloc((size_t)n + 1, sizeof *h);
	for (i = 0; i < n; i++) {
		e = config_setting_get_elem(s, (unsigned int)i);
		if (!valid_header_name(config_setting_name(e))) {
			conf_strv_free(h);
			return (conf_error(ctx, e, "headers: %s is not a header "
			    "name that can be set", config_setting_name(e)));
		}
		if (config_setting_type(e) != CONFIG_TYPE_STRING ||
		    strpbrk((v = config_setting_get_string(e)), "\r\n") !=
		    NULL || !conf_valid_utf8(v)) {
			conf_strv_free(h);
			return (conf_error(ctx, e, "headers: %s must be a "
			    "one-line string", config_setting_name(e)));
		}
		xasprintf(&h[i], "%s: %s", config_setting_name(e), v);
	}
	conf_strv_free(*out);
	*out = h;
	return (0);
}

/* Check a URL's scheme for a transport. */
static int
check_url(struct conf_ctx *ctx, const config_setting_t *s,
    const struct server_conf *srv)
{
	const char	*u = srv->url;

	switch (srv->transport) {
	case TRANSPORT_HTTP:
	case TRANSPORT_SSE:
		if (strncmp(u, "http://", 7) == 0 ||
		    strncmp(u, "https://", 8) == 0)
			return (0);
		return (conf_error(ctx, s, "server %s: url must start with "
		    "http:// or https://", srv->name));
	case TRANSPORT_WS:
		if (strncmp(u, "ws://", 5) == 0 || strncmp(u, "wss://", 6) == 0)
			return (0);
		return (conf_error(ctx, s, "server %s: url must start with "
		    "ws:// or wss://", srv->name));
	default:
		return (0);
	}
}

/* Read one server group. */
int
conf_parse_server(struct conf_ctx *ctx, const struct conf *conf,
    const config_setting_t *g, struct server_conf *srv)
{
	config_setting_t	*s, *url_s = NULL, *transport_s = NULL;
	config_setting_t	*remote_s = NULL;	/* a remote-only key */
	config_setting_t	*pass_s = NULL;
	config_setting_t	*isolation_s = NULL;
	const char		*key;
	char			*tmp = NULL, **pass_env;
	int			 i, n, v;
	long long		 ll;
	size_t			 sz;
	int			 have_prefix = 0, have_timeout = 0;
	int			 have_max = 0, have_stimeout = 0;

	memset(srv, 0, sizeof *srv);
	srv->at = conf_where(ctx, g);
	srv->init_timeout = 60;
	srv->max_instances = 64;
	srv->tls_verify = 1;
	srv->connect_timeout = 10;
	srv->ping_interval = 30;
	srv->ping_timeout = 10;
	srv->restart_delay = 1;
	srv->restart_max_delay = 60;
	srv->healthy_after = 60;
	srv->max_failures = 10;
	srv->pinning = conf->pinning;
	conf_traffic_defaults(&srv->traffic);
	memcpy(srv->elicitation, conf->elicitation, sizeof srv->elicitation);
	srv->nelicitation = conf->nelicitation;
	memcpy(srv->sampling, conf->sampling, sizeof srv->sampling);
	conf_targets_copy(srv->sampling_target, conf->sampling_target,
	    conf->nsampling);
	srv->nsampling = conf->nsampling;
	if (conf->user != NULL)
		srv->user = xstrdup(conf->user);
	if (!config_setting_is_group(g))
		return (conf_error(ctx, g, "each entry of servers must be a "
		    "group { name = ...; ... }"));
	n = config_setting_length(g);
	for (i = 0; i < n; i++) {
		s = config_setting_get_elem(g, (unsigned int)i);
		key = config_setting_name(s);
		if (strcmp(key, "name") == 0) {
			if (conf_get_name(ctx, s, "server", &srv->name) != 0)
				return (-1);
		} else if (strcmp(key, "transport") == 0) {
			if (conf_get_string(ctx, s, &tmp, 0) != 0)
				return (-1);
			v = conf_lookup_name(conf_transport_names, 4, tmp);
			if (v < 0) {
				conf_error(ctx, s, "unknown transport \"%s\" "
				    "(stdio, http, sse or ws)", tmp);
				free(tmp);
				return (-1);
			}
			srv->transport = (enum transport)v;
			transport_s = s;
		} else if (strcmp(key, "command") == 0) {
			if (conf_get_strv(ctx, s, 1, &srv->command) != 0)
				return (-1);
			if (*srv->command[0] == '\0')
				return (conf_error(ctx, s, "command[0] must "
				    "not be empty"));
		} else if (strcmp(key, "env") == 0) {
			if (get_env(ctx, s, &srv->env) != 0)
				return (-1);
		} else if (strcmp(key, "pass_env") == 0) {
			pass_s = s;
			if (conf_get_pass_env(ctx, s, &srv->pass_env) != 0)
				return (-1);
		} else if (strcmp(key, "cwd") == 0) {
			if (conf_get_string(ctx, s, &srv->cwd, 0) != 0)
				return (-1);
			if (srv->cwd[0] != '/')
				return (conf_error(ctx, s, "cwd must be an "
				    "absolute path"));
		} else if (strcmp(key, "url") == 0) {
			if (conf_get_string(ctx, s, &srv->url, 0) != 0)
				return (-1);
			url_s = s;
		} else if (strcmp(key, "prefix") == 0) {
			if (conf_get_string(ctx, s, &srv->prefix, 1) != 0)
				return (-1);
			if (!name_valid_prefix(srv->prefix))
				return (conf_error(ctx, s, "prefix \"%s\" must "
				    "be at most 32 characters of A-Z a-z 0-9 _ "
				    "- .", srv->prefix));
			have_prefix = 1;
		} else if (strcmp(key, "isolation") == 0) {
			if (conf_get_string(ctx, s, &tmp, 0) != 0)
				return (-1);
			v = conf_lookup_name(conf_isolation_names, 2, tmp);
			if (v < 0) {
				conf_error(ctx, s, "unknown isolation \"%s\" "
				    "(shared or per-session)", tmp);
				free(tmp);
				return (-1);
			}
			srv->isolation = (enum isolation)v;
			isolation_s = s;
		} else if (strcmp(key, "era") == 0) {
			if (conf_get_string(ctx, s, &tmp, 0) != 0)
				return (-1);
			v = conf_lookup_name(conf_era_names, 3, tmp);
			if (v < 0) {
				conf_error(ctx, s, "unknown era \"%s\" (auto, "
				    "2025 or 2026)", tmp);
				free(tmp);
				return (-1);
			}
			srv->era = (enum era)v;
		} else if (strcmp(key, "request_timeout") == 0) {
			if (conf_get_seconds(ctx, s, 1, 86400,
			    &srv->request_timeout) != 0)
				return (-1);
			have_timeout = 1;
		} else if (strcmp(key, "server_request_timeout") == 0) {
			if (conf_get_seconds(ctx, s, 1, 86400,
			    &srv->server_request_timeout) != 0)
				return (-1);
			have_stimeout = 1;
		} else if (strcmp(key, "init_timeout") == 0) {
			if (conf_get_seconds(ctx, s, 1, 3600,
			    &srv->init_timeout) != 0)
				return (-1);
		} else if (strcmp(key, "max_instances") == 0) {
			if (conf_get_int(ctx, s, 1, 10000, &ll) != 0)
				return (-1);
			srv->max_instances = (unsigned int)ll;
		} else if (strcmp(key, "elicitation") == 0) {
			if (conf_get_strategies(ctx, s, srv->elicitation, NULL,
			    &srv->nelicitation) != 0)
				return (-1);
		} else if (strcmp(key, "sampling") == 0) {
			if (conf_get_strategies(ctx, s, srv->sampling,
			    srv->sampling_target, &srv->nsampling) != 0)
				return (-1);
		} else if (strcmp(key, "budget") == 0) {
			if (conf_get_budget(ctx, s, &srv->budget) != 0)
				return (-1);
		} else if (strcmp(key, "log_prompts") == 0) {
			if (conf_get_bool(ctx, s, &srv->log_prompts) != 0)
				return (-1);
		} else if (strcmp(key, "headers") == 0) {
			remote_s = s;
			if (conf_get_headers(ctx, s, &srv->headers) != 0)
				return (-1);
		} else if (strcmp(key, "tls_verify") == 0) {
			remote_s = s;
			if (conf_get_bool(ctx, s, &srv->tls_verify) != 0)
				return (-1);
		} else if (strcmp(key, "ca_file") == 0) {
			remote_s = s;
			if (conf_get_string(ctx, s, &srv->ca_file, 0) != 0)
				return (-1);
			if (srv->ca_file[0] != '/')
				return (conf_error(ctx, s, "ca_file must be an "
				    "absolute path"));
		} else if (strcmp(key, "connect_timeout") == 0) {
			remote_s = s;
			if (conf_get_seconds(ctx, s, 1, 3600,
			    &srv->connect_timeout) != 0)
				return (-1);
		} else if (strcmp(key, "lazy") == 0) {
			if (conf_get_bool(ctx, s, &srv->lazy) != 0)
				return (-1);
		} else if (strcmp(key, "required") == 0) {
			if (conf_get_bool(ctx, s, &srv->required) != 0)
				return (-1);
		} else if (strcmp(key, "oauth") == 0) {
			remote_s = s;
			if (conf_parse_upoauth(ctx, s, &srv->oauth) != 0)
				return (-1);
		} else if (strcmp(key, "scopes") == 0) {
			if (conf_get_server_scopes(ctx, s, &srv->scopes) != 0)
				return (-1);
		} else if (strcmp(key, "ping_interval") == 0) {
			if (conf_get_seconds(ctx, s, 0, 86400,
			    &srv->ping_interval) != 0)
				return (-1);
		} else if (strcmp(key, "ping_timeout") == 0) {
			if (conf_get_seconds(ctx, s, 1, 3600,
			    &srv->ping_timeout) != 0)
				return (-1);
		} else if (strcmp(key, "restart_delay") == 0) {
			if (conf_get_seconds(ctx, s, 1, 3600,
			    &srv->restart_delay) != 0)
				return (-1);
		} else if (strcmp(key, "restart_max_delay") == 0) {
			if (conf_get_seconds(ctx, s, 1, 86400,
			    &srv->restart_max_delay) != 0)
				return (-1);
		} else if (strcmp(key, "healthy_after") == 0) {
			if (conf_get_seconds(ctx, s, 1, 86400,
			    &srv->healthy_after) != 0)
				return (-1);
		} else if (strcmp(key, "max_failures") == 0) {
			if (conf_get_int(ctx, s, 0, 1000000, &ll) != 0)
				return (-1);
			srv->max_failures = (unsigned int)ll;
		} else if (strcmp(key, "user") == 0) {
			if (conf_get_string(ctx, s, &srv->user, 0) != 0)
				return (-1);
			if (getpwnam(srv->user) == NULL)
				return (conf_error(ctx, s, "user \"%s\" does not "
				    "exist", srv->user));
		} else if (strcmp(key, "rlimit_nofile") == 0) {
			if (conf_get_int(ctx, s, 16, 1048576, &ll) != 0)
				return (-1);
			srv->rlimit_nofile = (unsigned long long)ll;
		} else if (strcmp(key, "rlimit_as") == 0) {
			if (conf_get_size(ctx, s, 16ULL << 20, 1ULL << 42,
			    &sz) != 0)
				return (-1);
			srv->rlimit_as = sz;
		} else if (strcmp(key, "max_message") == 0) {
			if (conf_get_size(ctx, s, 4096, 1ULL << 30,
			    &srv->max_message) != 0)
				return (-1);
			have_max = 1;
		} else if (strcmp(key, "pinning") == 0 ||
		    strcmp(key, "tools") == 0) {
			if (conf_parse_server_catalog(ctx, s, srv) != 0)
				return (-1);
		} else if ((v = conf_traffic_key(ctx, s, key,
		    &srv->traffic)) != 0) {
			if (v < 0)
				return (-1);
		} else {
			return (conf_error(ctx, s, "unknown server setting "
			    "\"%s\"", key));
		}
		free(tmp);
		tmp = NULL;
	}
	/* The upstream's own names are added to the global ones. */
	pass_env = srv->pass_env;
	srv->pass_env = srv->transport == TRANSPORT_STDIO ?
	    pass_env_union(conf->pass_env, pass_env) : NULL;
	conf_strv_free(pass_env);
	if (srv->name == NULL)
		return (conf_error(ctx, g, "server has no name"));
	if (transport_s == NULL && srv->command == NULL && srv->url != NULL)
		return (conf_error(ctx, g, "server %s: set transport "
		    "(http, sse or ws) for a url", srv->name));
	switch (srv->transport) {
	case TRANSPORT_STDIO:
		if (srv->command == NULL)
			return (conf_error(ctx, g, "server %s: stdio needs a "
			    "command", srv->name));
		if (srv->url != NULL)
			return (conf_error(ctx, url_s, "server %s: url is not "
			    "used by stdio", srv->name));
		break;
	default:
		if (srv->url == NULL)
			return (conf_error(ctx, g, "server %s: %s needs a url",
			    srv->name, conf_transport_names[srv->transport]));
		if (srv->command != NULL || srv->env != NULL ||
		    srv->cwd != NULL)
			return (conf_error(ctx, g, "server %s: command, env "
			    "and cwd are only for stdio", srv->name));
		if (pass_s != NULL)
			return (conf_error(ctx, pass_s, "server %s: pass_env is "
			    "only for stdio", srv->name));
		if (check_url(ctx, url_s, srv) != 0)
			return (-1);
		break;
	}
	if (srv->transport == TRANSPORT_STDIO && remote_s != NULL)
		return (conf_error(ctx, remote_s, "server %s: %s is only for "
		    "http, sse and ws", srv->name,
		    config_setting_name(remote_s)));
	/* Each principal's calls on a connection of its own. */
	if (srv->oauth != NULL && srv->oauth->identity == UPOAUTH_PER_USER) {
		if (isolation_s != NULL &&
		    srv->isolation == ISOLATION_SHARED)
			return (conf_error(ctx, isolation_s, "server %s: "
			    "oauth.identity per-user needs isolation "
			    "\"per-session\" (each user's calls on a "
			    "connection of their own)", srv->name));
		if (srv->transport != TRANSPORT_HTTP)
			return (conf_error_at(ctx, srv->oauth->at, "server "
			    "%s: oauth.identity per-user is only for the http "
			    "transport (so far)", srv->name));
		srv->isolation = ISOLATION_PER_SESSION;
	}
	if (srv->restart_max_delay < srv->restart_delay)
		return (conf_error(ctx, g, "server %s: restart_max_delay is "
		    "shorter than restart_delay", srv->name));
	if (srv->transport == TRANSPORT_SSE && srv->era == ERA_2026)
		return (conf_error(ctx, g, "server %s: the sse transport is of "
		    "2024-11-05, not era \"2026\"", srv->name));
	if (!have_prefix)
		xasprintf(&srv->prefix, "%s__", srv->name);
	if (!have_timeout)
		srv->request_timeout = conf->request_timeout;
	if (!have_stimeout)
		srv->server_request_timeout = conf->server_request_timeout;
	if (!have_max)
		srv->max_message = conf->max_message;
	return (0);
}
