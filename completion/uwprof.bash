# SPDX-License-Identifier: GPL-2.0
# bash completion for uwprof(1): subcommands, each one's options, and the
# values options take (files, pids, events, sort keys, cgroups, thread
# names). Source it, or install it as
# /usr/share/bash-completion/completions/uwprof.

# One candidate per line, so names with blanks stay whole.
_uwprof_reply()
{
	mapfile -t COMPREPLY < <(compgen "$@")
}

# --cgroup: cgroup v2 paths as /proc/PID/cgroup shows them, that is the
# directories of the cgroup2 mount without the mount point.
_uwprof_cgroups()
{
	local mnt dir
	mnt=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts 2>/dev/null)
	[ -n "$mnt" ] || return 0
	[ "${1:0:1}" = / ] || set -- "/$1"
	COMPREPLY=()
	while IFS= read -r dir; do
		COMPREPLY+=("${dir#"$mnt"}/")
	done < <(compgen -d -- "$mnt$1")
}

# The options of record and agent that name what to sample.
_uwprof_target_arg()
{
	case $1 in
	--cache-dir)
		_uwprof_reply -d -- "$2" ;;
	-p|--pid)
		_uwprof_reply -W "$(ps -e -o pid= 2>/dev/null)" -- "$2" ;;
	--cgroup)
		_uwprof_cgroups "$2" ;;
	--comm)
		_uwprof_reply -W "$(ps -e -L -o comm= 2>/dev/null | sort -u)" -- "$2" ;;
	-F|--freq)
		;;
	*)
		return 1 ;;
	esac
	return 0
}

_uwprof()
{
	local cur prev cmd i
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=
	[ "$COMP_CWORD" -gt 0 ] && prev=${COMP_WORDS[COMP_CWORD - 1]}
	COMPREPLY=()

	local cmds="record report script table agent status help"
	cmd=
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		-*) ;;
		*) cmd=${COMP_WORDS[i]}; break ;;
		esac
	done
	if [ -z "$cmd" ]; then
		_uwprof_reply -W "$cmds --help" -- "$cur"
		return 0
	fi

	local opts=
	case $cmd in
	record)
		_uwprof_target_arg "$prev" "$cur" && return 0
		case $prev in
		-o|--output)
			_uwprof_reply -f -- "$cur"; return 0 ;;
		-e|--event)
			_uwprof_reply -W "cycles cpu-clock" -- "$cur"; return 0 ;;
		-d|--duration|--depth|--ring-pages|--off-cpu-min|--snapshot-size)
			return 0 ;;
		esac
		# After the command to profile, complete its own words.
		for ((i = 2; i < COMP_CWORD; i++)); do
			if [ "${COMP_WORDS[i]}" = "--" ]; then
				if [ $((i + 1)) -eq "$COMP_CWORD" ]; then
					_uwprof_reply -c -- "$cur"
				else
					_uwprof_reply -f -- "$cur"
				fi
				return 0
			fi
		done
		opts="-F --freq -a --all-cpus -p --pid --cgroup --comm -d --duration
		      -g --kernel -o --output -e --event --depth --no-fp-fallback --no-python
		      --ring-pages --cache-dir --snapshot-size --hold-exec --off-cpu
		      --off-cpu-min -q --quiet --help --"
		;;
	report)
		case $prev in
		-i|--input|--pprof|--otlp|--svg)
			_uwprof_reply -f -- "$cur"; return 0 ;;
		-s|--sort)
			_uwprof_reply -W "sym dso,sym" -- "$cur"; return 0 ;;
		-n|--max)
			return 0 ;;
		esac
		opts="-i --input -s --sort --lines --folded --pprof --otlp --svg --mark-incomplete -n --max
		      --on-cpu-only --off-cpu-only --python-native --help"
		;;
	script)
		case $prev in
		-i|--input)
			_uwprof_reply -f -- "$cur"; return 0 ;;
		esac
		opts="-i --input --lines --max-stack --python-native --help"
		;;
	table)
		case $prev in
		--blob)
			_uwprof_reply -f -- "$cur"; return 0 ;;
		esac
		if [[ $cur != -* ]]; then
			_uwprof_reply -f -- "$cur"; return 0
		fi
		opts="--stats --quiet --blob --help"
		;;
	agent)
		_uwprof_target_arg "$prev" "$cur" && return 0
		case $prev in
		--config|--socket|--token-file|--push-header-file)
			_uwprof_reply -f -- "$cur"; return 0 ;;
		--socket-group)
			_uwprof_reply -g -- "$cur"; return 0 ;;
		--user)
			_uwprof_reply -u -- "$cur"; return 0 ;;
		--socket-mode)
			_uwprof_reply -W "0600 0660" -- "$cur"; return 0 ;;
		--output-dir)
			_uwprof_reply -d -- "$cur"; return 0 ;;
		--push-header)
			# Not secrets: ps shows them (those go in --push-header-file).
			_uwprof_reply -W "'X-Scope-OrgID: '" -- "$cur"
			return 0 ;;
		--listen|--allow-host|--interval|--keep-files|--keep-bytes|--push|\
		--push-name|--push-timeout|--otlp)
			return 0 ;;
		esac
		opts="--config --socket --socket-mode --socket-group --listen --allow-host
		      --token-file --user -F --freq -a --all-cpus -p --pid --cgroup
		      --comm --cache-dir --python-native --output-dir --interval --keep-files
		      --keep-bytes --push --push-name --push-header
		      --push-header-file --push-timeout --otlp --help"
		;;
	status)
		opts="--help"
		;;
	help)
		_uwprof_reply -W "$cmds" -- "$cur"; return 0
		;;
	*)
		return 0 ;;
	esac
	if [[ $cur == -* ]]; then
		_uwprof_reply -W "$opts" -- "$cur"
	elif [ "$cmd" = record ]; then
		_uwprof_reply -c -- "$cur"
	fi
	return 0
}
complete -o default -o bashdefault -F _uwprof uwprof
