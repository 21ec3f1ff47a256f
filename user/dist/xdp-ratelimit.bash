# bash completion for xdp-ratelimit and xdp-ratelimitd.
# Commands and options are read from the tools' own --help, so that the
# completion offers exactly what the parser takes; the words rule add's
# options take come from the rule table (make docs; tests/docs checks
# both).

_xrl_words()
{
	COMPREPLY=($(compgen -W "$1" -- "$2"))
}

_xrl_files()
{
	compopt -o filenames 2>/dev/null
	COMPREPLY=($(compgen -f -- "$1"))
}

_xrl_ifaces()
{
	_xrl_words "$(ls /sys/class/net 2>/dev/null)" "$1"
}

# Completes the value of option $1 (the previous word); 1 when $1 takes
# none that we know.
_xrl_value()
{
	case $1 in
	--policy|-p|--config|-c|--state) _xrl_files "$2" ;;
	--iface|-i) _xrl_ifaces "$2" ;;
	--pin-dir|-P|--socket|-S)
		compopt -o filenames 2>/dev/null
		COMPREPLY=($(compgen -d -- "$2")) ;;
	--mode|-m) _xrl_words "native generic auto" "$2" ;;
	--priority) _xrl_words "5 10 20 50" "$2" ;;
	# generated: option values (make docs)
	--action) _xrl_words "limit monitor allow deny" "$2" ;;
	--scope) _xrl_words "source aggregate" "$2" ;;
	--strategy) _xrl_words "token_bucket leaky_bucket sliding_window" "$2" ;;
	--proto) _xrl_words "tcp udp icmp icmpv6" "$2" ;;
	--tcp-flags) _xrl_words "syn" "$2" ;;
	# end generated
	--socket-group|-g) COMPREPLY=($(compgen -g -- "$2")) ;;
	*) return 1 ;;
	esac
	return 0
}

_xrl_options()
{
	"$@" --help 2>/dev/null | grep -o -- '--[a-z][a-z-]*' | sort -u
}

_xdp_ratelimit()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
	local prog=${COMP_WORDS[0]} cmd="" i

	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		--pin-dir|-P|--socket|-S) ((i++)) ;;
		-*) ;;
		*) cmd=${COMP_WORDS[i]}; break ;;
		esac
	done
	_xrl_value "$prev" "$cur" && return 0
	if [[ -z $cmd ]]; then
		if [[ $cur == -* ]]; then
			_xrl_words "$(_xrl_options "$prog")" "$cur"
		else
			_xrl_words "$("$prog" --help 2>/dev/null |
				sed -n 's/^  \([a-z][a-z]*\)\( .*\)\{0,1\}$/\1/p')" "$cur"
		fi
		return 0
	fi
	if [[ $cur == -* ]]; then
		_xrl_words "$(_xrl_options "$prog" "$cmd")" "$cur"
		return 0
	fi
	case $cmd in
	attach|detach) ((COMP_CWORD == i + 1)) && _xrl_ifaces "$cur" ;;
	rule) ((COMP_CWORD == i + 1)) && _xrl_words "add del list revert" "$cur" ;;
	reload|check) _xrl_files "$cur" ;;
	help) _xrl_words "$("$prog" --help 2>/dev/null |
		sed -n 's/^  \([a-z][a-z]*\)\( .*\)\{0,1\}$/\1/p')" "$cur" ;;
	esac
	return 0
}

_xdp_ratelimitd()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}

	_xrl_value "$prev" "$cur" && return 0
	_xrl_words "$(_xrl_options "${COMP_WORDS[0]}")" "$cur"
}

complete -F _xdp_ratelimit xdp-ratelimit
complete -F _xdp_ratelimitd xdp-ratelimitd
