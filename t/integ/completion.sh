#!/bin/sh
# SPDX-License-Identifier: ISC
# mcpctl's bash completion (etc/bash-completion/mcpctl): commands, options,
# and upstream and tool names asked of a running daemon.
. "$(dirname "$0")/lib.sh"

BC=/usr/share/bash-completion/bash_completion
if [ ! -f "$BC" ] || ! command -v bash > /dev/null 2>&1; then
	echo "bash or bash-completion missing (Debian package bash-completion)"
	[ -n "${MCPS_REQUIRE_ALL:-}" ] && exit 1
	exit 77
fi

# complete LINE: what completing the end of LINE offers, sorted, on one line.
complete() {
	PATH="$top_builddir/mcpctl:$PATH" bash -c '
		. "$1"
		. "$2"
		COMP_LINE=$3
		COMP_POINT=${#COMP_LINE}
		read -r -a COMP_WORDS <<< "$COMP_LINE"
		case $COMP_LINE in *" ") COMP_WORDS+=(""); esac
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		_mcpctl mcpctl "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
		[ ${#COMPREPLY[@]} -eq 0 ] ||
		    printf "%s\n" "${COMPREPLY[@]}" | sort | tr "\n" " "
	' bash "$BC" "$top_srcdir/etc/bash-completion/mcpctl" "$1"
}

start_gateway "$(demo alpha)" "$(demo beta)"
is "commands" "$(complete "mcpctl ")" \
    "check connect drain refresh-keys reload reopen restart sessions start status stop tools "
is "a command by its beginning" "$(complete "mcpctl -j st")" "start status stop "
is "options" "$(complete "mcpctl -")" "-V -h -j -s "
is "upstream names from the daemon" "$(complete "mcpctl -s $CTL restart ")" "alpha beta "
is "and by their beginning" "$(complete "mcpctl -s $CTL stop al")" "alpha "
like "tool names from the daemon" "$(complete "mcpctl -s $CTL tools beta__e")" "^beta__echo beta__elicit "
is "nothing after the argument" "$(complete "mcpctl -s $CTL stop alpha ")" ""
is "no daemon: no names, no noise" "$(complete "mcpctl -s $T/none.sock stop ")" ""
finish
