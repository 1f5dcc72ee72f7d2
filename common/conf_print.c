/* Print a configuration normalised, in the file's own syntax (-nv). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "conf.h"
#include "conf_priv.h"
#include "naming.h"

/* Print a string literal in libconfig syntax. */
static void
print_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s != '\0'; s++) {
		switch (*s) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		default:
			if ((unsigned char)*s < 0x20)
				fprintf(f, "\\x%02x", (unsigned char)*s);
			else
				fputc(*s, f);
		}
	}
	fputc('"', f);
}

/* Print a string vector as an array. */
static void
print_strv(FILE *f, char *const *v)
{
	size_t	i;

	fputs("[ ", f);
	for (i = 0; v[i] != NULL; i++) {
		if (i > 0)
			fputs(", ", f);
		print_string(f, v[i]);
	}
	fputs(" ]", f);
}

/* Print a strategy list setting. */
static void
print_strategies(FILE *f, const char *key, const enum strategy *list,
    size_t n)
{
	size_t	i;

	fprintf(f, "%s = [", key);
	for (i = 0; i < n; i++)
		fprintf(f, "%s\"%s\"", i > 0 ? ", " : " ",
		    conf_strategy_names[list[i]]);
	fprintf(f, " ];\n");
}

void
conf_print(const struct conf *conf, FILE *f)
{
	const struct server_conf	*srv;
	size_t				 i, j;
	const char			*eq;

	fprintf(f, "listen = ");
	print_string(f, conf->listen);
	fprintf(f, ";\ncontrol = ");
	print_string(f, conf->control);
	fprintf(f, ";\n");
	if (conf->user != NULL) {
		fprintf(f, "user = ");
		print_string(f, conf->user);
		fprintf(f, ";\n");
	}
	if (conf->allowed_origins != NULL) {
		fprintf(f, "allowed_origins = ");
		print_strv(f, conf->allowed_origins);
		fprintf(f, ";\n");
	}
	if (conf->allowed_hosts != NULL) {
		fprintf(f, "allowed_hosts = ");
		print_strv(f, conf->allowed_hosts);
		fprintf(f, ";\n");
	}
	if (conf->auth_tokens != NULL) {
		fprintf(f, "auth_tokens = ");
		print_strv(f, conf->auth_tokens);
		fprintf(f, ";\n");
	}
	fprintf(f, "max_message = %zu;\nmax_body = %zu;\n", conf->max_message,
	    conf->max_body);
	fprintf(f, "max_sessions = %u;\nmax_pending = %u;\n",
	    conf->max_sessions, conf->max_pending);
	fprintf(f, "session_timeout = %u;\nrequest_timeout = %u;\n",
	    conf->session_timeout, conf->request_timeout);
	fprintf(f, "server_request_timeout = %u;\n",
	    conf->server_request_timeout);
	fprintf(f, "sse_heartbeat = %u;\npage_size = %u;\n",
	    conf->sse_heartbeat, conf->page_size);
	fprintf(f, "max_buffered = %zu;\n", conf->max_buffered);
	fprintf(f, "ws_path = ");
	print_string(f, conf->ws_path);
	fprintf(f, ";\nws_ping_interval = %u;\n", conf->ws_ping_interval);
	if (conf->ws_lockfile != NULL) {
		fprintf(f, "ws_lockfile = ");
		print_string(f, conf->ws_lockfile);
		fprintf(f, ";\n");
	}
	if (conf->request_state_key != NULL) {
		fprintf(f, "request_state_key = ");
		print_string(f, conf->request_state_key);
		fprintf(f, ";\n");
	}
	fprintf(f, "request_state_ttl = %u;\n", conf->request_state_ttl);
	if (conf->instance != NULL) {
		fprintf(f, "instance = ");
		print_string(f, conf->instance);
		fprintf(f, ";\n");
	}
	fprintf(f, "cache_ttl = %u;\n", conf->cache_ttl);
	fprintf(f, "client_tool_timeout = %u;\nclient_tools_max = %u;\n",
	    conf->client_tool_timeout, conf->client_tools_max);
	if (conf->nclients > 0) {
		fprintf(f, "clients = (");
		for (i = 0; i < conf->nclients; i++) {
			fprintf(f, "%s\n  { name = ", i > 0 ? "," : "");
			print_string(f, conf->clients[i].name);
			fprintf(f, "; token = ");
			print_string(f, conf->clients[i].token);
			fprintf(f, "; register = %s;",
			    conf->clients[i].may_register ? "true" : "false");
			if (conf->clients[i].allow != NULL) {
				fprintf(f, "\n    allow = ");
				print_strv(f, conf->clients[i].allow);
				fprintf(f, ";");
			}
			if (conf->clients[i].deny != NULL) {
				fprintf(f, "\n    deny = ");
				print_strv(f, conf->clients[i].deny);
				fprintf(f, ";");
			}
			fprintf(f, " }");
		}
		fprintf(f, "\n);\n");
	}
	print_strategies(f, "elicitation", conf->elicitation,
	    conf->nelicitation);
	print_strategies(f, "sampling", conf->sampling, conf->nsampling);
	fprintf(f, "servers = (");
	for (i = 0; i < conf->nservers; i++) {
		srv = &conf->servers[i];
		fprintf(f, "%s\n  {\n    name = ", i > 0 ? "," : "");
		print_string(f, srv->name);
		fprintf(f, ";\n    transport = \"%s\";\n",
		    conf_transport_names[srv->transport]);
		if (srv->command != NULL) {
			fprintf(f, "    command = ");
			print_strv(f, srv->command);
			fprintf(f, ";\n");
		}
		if (srv->env != NULL) {
			fprintf(f, "    env = {");
			for (j = 0; srv->env[j] != NULL; j++) {
				eq = strchr(srv->env[j], '=');
				fprintf(f, " %.*s = ", (int)(eq - srv->env[j]),
				    srv->env[j]);
				print_string(f, eq + 1);
				fprintf(f, ";");
			}
			fprintf(f, " };\n");
		}
		if (srv->cwd != NULL) {
			fprintf(f, "    cwd = ");
			print_string(f, srv->cwd);
			fprintf(f, ";\n");
		}
		if (srv->url != NULL) {
			fprintf(f, "    url = ");
			print_string(f, srv->url);
			fprintf(f, ";\n");
		}
		/*
		 * The default prefix of a long name is longer than a prefix
		 * may be set to; leave it out and it is derived again.
		 */
		if (name_valid_prefix(srv->prefix)) {
			fprintf(f, "    prefix = ");
			print_string(f, srv->prefix);
			fprintf(f, ";\n");
		}
		fprintf(f, "    isolation = \"%s\";\n    era = \"%s\";\n",
		    conf_isolation_names[srv->isolation],
		    conf_era_names[srv->era]);
		fprintf(f, "    request_timeout = %u;\n"
		    "    server_request_timeout = %u;\n    init_timeout = %u;\n",
		    srv->request_timeout, srv->server_request_timeout,
		    srv->init_timeout);
		fprintf(f, "    max_instances = %u;\n", srv->max_instances);
		if (srv->headers != NULL) {
			fprintf(f, "    headers = {");
			for (j = 0; srv->headers[j] != NULL; j++) {
				eq = strchr(srv->headers[j], ':');
				fprintf(f, " %.*s = ", (int)(eq - srv->headers[j]),
				    srv->headers[j]);
				print_string(f, eq + 2);
				fprintf(f, ";");
			}
			fprintf(f, " };\n");
		}
		if (srv->transport != TRANSPORT_STDIO) {
			fprintf(f, "    tls_verify = %s;\n",
			    srv->tls_verify ? "true" : "false");
			if (srv->ca_file != NULL) {
				fprintf(f, "    ca_file = ");
				print_string(f, srv->ca_file);
				fprintf(f, ";\n");
			}
			fprintf(f, "    connect_timeout = %u;\n",
			    srv->connect_timeout);
		}
		fprintf(f, "    lazy = %s;\n    ping_interval = %u;\n"
		    "    ping_timeout = %u;\n", srv->lazy ? "true" : "false",
		    srv->ping_interval, srv->ping_timeout);
		fprintf(f, "    restart_delay = %u;\n    restart_max_delay = %u;\n"
		    "    healthy_after = %u;\n    max_failures = %u;\n",
		    srv->restart_delay, srv->restart_max_delay,
		    srv->healthy_after, srv->max_failures);
		print_strategies(f, "    elicitation", srv->elicitation,
		    srv->nelicitation);
		print_strategies(f, "    sampling", srv->sampling,
		    srv->nsampling);
		if (srv->user != NULL) {
			fprintf(f, "    user = ");
			print_string(f, srv->user);
			fprintf(f, ";\n");
		}
		if (srv->rlimit_nofile != 0)
			fprintf(f, "    rlimit_nofile = %llu;\n",
			    srv->rlimit_nofile);
		if (srv->rlimit_as != 0)
			fprintf(f, "    rlimit_as = %llu;\n", srv->rlimit_as);
		fprintf(f, "    max_message = %zu;\n  }", srv->max_message);
	}
	fprintf(f, "%s);\n", conf->nservers > 0 ? "\n" : " ");
}
