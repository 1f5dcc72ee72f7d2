/* SPDX-License-Identifier: ISC */
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

/* Print a number with a fraction as briefly as reads back the same. */
void
conf_print_double(FILE *f, double v)
{
	char	buf[40];

	snprintf(buf, sizeof buf, "%.15g", v);
	if (strtod(buf, NULL) != v)
		snprintf(buf, sizeof buf, "%.17g", v);
	fputs(buf, f);
}

void
conf_print_str(FILE *f, const char *s)
{
	print_string(f, s);
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

void
conf_print_string(FILE *f, const char *s)
{
	print_string(f, s);
}

void
conf_print_strv(FILE *f, char *const *v)
{
	print_strv(f, v);
}

/* Print a strategy list setting (targets: sampling's, or NULL). */
static void
print_strategies(FILE *f, const char *key, const enum strategy *list,
    char *const *targets, size_t n)
{
	size_t	i;
	char	text[512];

	fprintf(f, "%s = [", key);
	for (i = 0; i < n; i++) {
		conf_strategy_text(list[i], targets != NULL ? targets[i] :
		    NULL, text, sizeof text);
		fputs(i > 0 ? ", " : " ", f);
		print_string(f, text);
	}
	fprintf(f, " ];\n");
}

/* Print a budget group, if it limits anything. */
static void
print_budget(FILE *f, const char *indent, const struct budget_conf *b)
{
	if (b->requests_per_minute == 0 && b->tokens_per_day == 0)
		return;
	fprintf(f, "%sbudget = { requests_per_minute = %u; "
	    "tokens_per_day = %llu; };\n", indent, b->requests_per_minute,
	    b->tokens_per_day);
}

/* Print the providers: the api_key as written, a reference, never a key. */
static void
print_llms(FILE *f, const struct conf *conf)
{
	const struct llm_conf	*lc;
	size_t			 i, j;

	if (conf->nllms == 0)
		return;
	fprintf(f, "llm = (");
	for (i = 0; i < conf->nllms; i++) {
		lc = &conf->llms[i];
		fprintf(f, "%s\n  {\n    name = ", i > 0 ? "," : "");
		print_string(f, lc->name);
		fprintf(f, ";\n    provider = \"%s\";\n    url = ",
		    conf_llm_provider_names[lc->provider]);
		print_string(f, lc->url);
		if (lc->api_key != NULL) {
			fprintf(f, ";\n    api_key = ");
			print_string(f, lc->api_key);
		}
		fprintf(f, ";\n    model = ");
		print_string(f, lc->model);
		fprintf(f, ";\n");
		if (lc->models != NULL) {
			fprintf(f, "    models = ");
			print_strv(f, lc->models);
			fprintf(f, ";\n");
		}
		if (lc->nscores > 0) {
			fprintf(f, "    scores = (");
			for (j = 0; j < lc->nscores; j++) {
				fprintf(f, "%s\n      { model = ", j > 0 ?
				    "," : "");
				print_string(f, lc->scores[j].model);
				fprintf(f, "; cost = ");
				conf_print_double(f, lc->scores[j].cost);
				fprintf(f, "; speed = ");
				conf_print_double(f, lc->scores[j].speed);
				fprintf(f, "; intelligence = ");
				conf_print_double(f, lc->scores[j].intelligence);
				fprintf(f, "; }");
			}
			fprintf(f, "\n    );\n");
		}
		print_budget(f, "    ", &lc->budget);
		fprintf(f, "    timeout = %u;\n    connect_timeout = %u;\n"
		    "    stream = %s;\n", lc->timeout, lc->connect_timeout,
		    lc->stream ? "true" : "false");
		if (lc->provider == LLM_OPENAI)
			fprintf(f, "    max_tokens_field = \"%s\";\n",
			    lc->max_completion_tokens ?
			    "max_completion_tokens" : "max_tokens");
		fprintf(f, "    max_response = %zu;\n    max_concurrent = %u;\n"
		    "    tls_verify = %s;\n", lc->max_response,
		    lc->max_concurrent, lc->tls_verify ? "true" : "false");
		if (lc->ca_file != NULL) {
			fprintf(f, "    ca_file = ");
			print_string(f, lc->ca_file);
			fprintf(f, ";\n");
		}
		fprintf(f, "  }");
	}
	fprintf(f, "\n);\n");
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
	fprintf(f, ";\ninstance = ");
	print_string(f, conf->instance);
	fprintf(f, ";\n");
	if (conf->metrics_listen != NULL) {
		fprintf(f, "metrics_listen = ");
		print_string(f, conf->metrics_listen);
		fprintf(f, ";\n");
	}
	if (conf->access_log != NULL) {
		fprintf(f, "access_log = ");
		print_string(f, conf->access_log);
		fprintf(f, ";\n");
	}
	if (conf->trusted_proxies != NULL) {
		fprintf(f, "trusted_proxies = ");
		print_strv(f, conf->trusted_proxies);
		fprintf(f, ";\n");
	}
	if (conf->user != NULL) {
		fprintf(f, "user = ");
		print_string(f, conf->user);
		fprintf(f, ";\n");
	}
	if (conf->pass_env != NULL) {
		fprintf(f, "pass_env = ");
		print_strv(f, conf->pass_env);
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
	if (conf->metrics_tokens != NULL) {
		fprintf(f, "metrics_tokens = ");
		print_strv(f, conf->metrics_tokens);
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
	conf_print_catalog(conf, f);
	fprintf(f, "cache_ttl = %u;\n", conf->cache_ttl);
	fprintf(f, "client_tool_timeout = %u;\nclient_tools_max = %u;\n",
	    conf->client_tool_timeout, conf->client_tools_max);
	if (conf->nclients > 0) {
		fprintf(f, "clients = (");
		for (i = 0; i < conf->nclients; i++) {
			fprintf(f, "%s\n  { name = ", i > 0 ? "," : "");
			print_string(f, conf->clients[i].name);
			if (conf->clients[i].token != NULL) {
				fprintf(f, "; token = ");
				print_string(f, conf->clients[i].token);
			}
			fprintf(f, "; register = %s; metrics = %s;",
			    conf->clients[i].may_register ? "true" : "false",
			    conf->clients[i].metrics ? "true" : "false");
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
			if (conf->clients[i].oauth != NULL) {
				fprintf(f, "\n");
				conf_oauth_match_print(f, "    ",
				    conf->clients[i].oauth);
			}
			fprintf(f, " }");
		}
		fprintf(f, "\n);\n");
	}
	conf_print_endpoints(conf, f);
	print_strategies(f, "elicitation", conf->elicitation, NULL,
	    conf->nelicitation);
	print_strategies(f, "sampling", conf->sampling, conf->sampling_target,
	    conf->nsampling);
	print_llms(f, conf);
	conf_oauth_print(f, conf->oauth);
	conf_rate_limits_print(f, conf);
	conf_trace_print(f, conf->tracing);
	conf_oauth_client_print(f, conf->oauth_client);
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
		if (srv->pass_env != NULL) {
			fprintf(f, "    pass_env = ");
			print_strv(f, srv->pass_env);
			fprintf(f, ";\n");
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
		conf_print_server_catalog(srv, f);
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
		fprintf(f, "    lazy = %s;\n    required = %s;\n"
		    "    ping_interval = %u;\n    ping_timeout = %u;\n",
		    srv->lazy ? "true" : "false",
		    srv->required ? "true" : "false",
		    srv->ping_interval, srv->ping_timeout);
		if (srv->scopes != NULL) {
			fprintf(f, "    scopes = ");
			print_strv(f, srv->scopes);
			fprintf(f, ";\n");
		}
		fprintf(f, "    restart_delay = %u;\n    restart_max_delay = %u;\n"
		    "    healthy_after = %u;\n    max_failures = %u;\n",
		    srv->restart_delay, srv->restart_max_delay,
		    srv->healthy_after, srv->max_failures);
		conf_traffic_print(f, &srv->traffic);
		conf_upoauth_print(f, srv->oauth);
		print_strategies(f, "    elicitation", srv->elicitation, NULL,
		    srv->nelicitation);
		print_strategies(f, "    sampling", srv->sampling,
		    srv->sampling_target, srv->nsampling);
		print_budget(f, "    ", &srv->budget);
		fprintf(f, "    log_prompts = %s;\n", srv->log_prompts ?
		    "true" : "false");
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
