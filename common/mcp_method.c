/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <string.h>

#include "mcp_method.h"

/*
 * One row per method: name, its length (t/unit/check_mcp_method checks
 * it), flags, what a client's request of it is counted as, and the
 * parameter that routes it which an Mcp-Name header mirrors.
 */
const struct mcp_method_info mcp_methods[MCPM_N] = {
	[MCPM_OTHER] = {
	    "other", 5,
	    0,
	    MCPM_OTHER, NULL },
	[MCPM_INITIALIZE] = {
	    "initialize", 10,
	    MCPM_F_2025 | MCPM_F_NO_CATALOG,
	    MCPM_INITIALIZE, NULL },
	[MCPM_PING] = {
	    "ping", 4,
	    MCPM_F_2025 | MCPM_F_NO_CATALOG,
	    MCPM_PING, NULL },
	[MCPM_TOOLS_LIST] = {
	    "tools/list", 10,
	    MCPM_F_2025 | MCPM_F_2026 | MCPM_F_LIST,
	    MCPM_TOOLS_LIST, NULL },
	[MCPM_TOOLS_CALL] = {
	    "tools/call", 10,
	    MCPM_F_2025 | MCPM_F_2026 | MCPM_F_STREAMS | MCPM_F_PROGRESS |
	    MCPM_F_PARKS,
	    MCPM_TOOLS_CALL, "name" },
	[MCPM_RESOURCES_LIST] = {
	    "resources/list", 14,
	    MCPM_F_2025 | MCPM_F_2026 | MCPM_F_LIST,
	    MCPM_RESOURCES_LIST, NULL },
	[MCPM_TEMPLATES_LIST] = {
	    "resources/templates/list", 24,
	    MCPM_F_2025 | MCPM_F_2026 | MCPM_F_LIST,
	    MCPM_TEMPLATES_LIST, NULL },
	[MCPM_RESOURCES_READ] = {
	    "resources/read", 14,
	    MCPM_F_2025 | MCPM_F_2026 | MCPM_F_STREAMS | MCPM_F_PROGRESS |
	    MCPM_F_PARKS,
	    MCPM_RESOURCES_READ, "uri" },
	[MCPM_SUBSCRIBE] = {
	    "resources/subscribe", 19,
	    MCPM_F_2025,
	    MCPM_SUBSCRIBE, NULL },
	[MCPM_UNSUBSCRIBE] = {
	    "resources/unsubscribe", 21,
	    MCPM_F_2025,
	    MCPM_UNSUBSCRIBE, NULL },
	[MCPM_PROMPTS_LIST] = {
	    "prompts/list", 12,
	    MCPM_F_2025 | MCPM_F_2026 | MCPM_F_LIST,
	    MCPM_PROMPTS_LIST, NULL },
	[MCPM_PROMPTS_GET] = {
	    "prompts/get", 11,
	    MCPM_F_2025 | MCPM_F_2026 | MCPM_F_STREAMS | MCPM_F_PROGRESS |
	    MCPM_F_PARKS,
	    MCPM_PROMPTS_GET, "name" },
	[MCPM_COMPLETE] = {
	    "completion/complete", 19,
	    MCPM_F_2025 | MCPM_F_2026 | MCPM_F_PROGRESS,
	    MCPM_COMPLETE, NULL },
	[MCPM_SET_LEVEL] = {
	    "logging/setLevel", 16,
	    MCPM_F_2025 | MCPM_F_NO_CATALOG,
	    MCPM_SET_LEVEL, NULL },
	[MCPM_TOOLS_REGISTER] = {
	    "tools/register", 14,
	    MCPM_F_2025 | MCPM_F_NO_CATALOG,
	    MCPM_TOOLS_REGISTER, NULL },
	[MCPM_TOOLS_UNREGISTER] = {
	    "tools/unregister", 16,
	    MCPM_F_2025 | MCPM_F_NO_CATALOG,
	    MCPM_TOOLS_UNREGISTER, NULL },
	[MCPM_DISCOVER] = {
	    "server/discover", 15,
	    MCPM_F_2026 | MCPM_F_NO_CATALOG,
	    MCPM_DISCOVER, NULL },
	[MCPM_LISTEN] = {
	    "subscriptions/listen", 20,
	    MCPM_F_2026,
	    MCPM_LISTEN, NULL },
	[MCPM_SAMPLING] = {
	    "sampling/createMessage", 22,
	    MCPM_F_INPUT,
	    MCPM_OTHER, NULL },
	[MCPM_ELICITATION] = {
	    "elicitation/create", 18,
	    MCPM_F_INPUT,
	    MCPM_OTHER, NULL },
	[MCPM_ROOTS] = {
	    "roots/list", 10,
	    MCPM_F_INPUT,
	    MCPM_OTHER, NULL },
	[MCPM_INITIALIZED] = {
	    "notifications/initialized", 25,
	    0,
	    MCPM_OTHER, NULL },
	[MCPM_CANCELLED] = {
	    "notifications/cancelled", 23,
	    0,
	    MCPM_OTHER, NULL },
	[MCPM_PROGRESS] = {
	    "notifications/progress", 22,
	    0,
	    MCPM_OTHER, NULL },
	[MCPM_MESSAGE] = {
	    "notifications/message", 21,
	    0,
	    MCPM_OTHER, NULL },
	[MCPM_ROOTS_CHANGED] = {
	    "notifications/roots/list_changed", 32,
	    0,
	    MCPM_OTHER, NULL },
	[MCPM_TOOLS_CHANGED] = {
	    "notifications/tools/list_changed", 32,
	    0,
	    MCPM_OTHER, NULL },
	[MCPM_RESOURCES_CHANGED] = {
	    "notifications/resources/list_changed", 36,
	    0,
	    MCPM_OTHER, NULL },
	[MCPM_PROMPTS_CHANGED] = {
	    "notifications/prompts/list_changed", 34,
	    0,
	    MCPM_OTHER, NULL },
	[MCPM_UPDATED] = {
	    "notifications/resources/updated", 31,
	    0,
	    MCPM_OTHER, NULL },
	[MCPM_ELICITATION_COMPLETE] = {
	    "notifications/elicitation/complete", 34,
	    0,
	    MCPM_OTHER, NULL },
	[MCPM_ACKNOWLEDGED] = {
	    "notifications/subscriptions/acknowledged", 40,
	    0,
	    MCPM_OTHER, NULL },
};

enum mcp_method
mcp_method_lookup(const char *name, size_t len)
{
	size_t	i;

	/* Lengths differ first: a compare of bytes is rarely needed. */
	for (i = 1; i < MCPM_N; i++) {
		if (mcp_methods[i].len == len &&
		    memcmp(mcp_methods[i].name, name, len) == 0)
			return ((enum mcp_method)i);
	}
	return (MCPM_OTHER);
}

int
mcp_method_is(enum mcp_method id, unsigned int flags)
{
	return ((mcp_methods[id].flags & flags) != 0);
}

const char *
mcp_method_name(enum mcp_method id)
{
	return (mcp_methods[id].name);
}
