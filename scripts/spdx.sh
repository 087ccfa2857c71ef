#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# spdx.sh keeps the licence identifier at the top of every source file.
#
#   scripts/spdx.sh check [PATH...]   list the files without it; exit 1 if any
#   scripts/spdx.sh add [PATH...]     add it to the files without it
#
# Without a PATH it works on the files git tracks; a PATH that is a directory
# stands for the source files under it (tracked or not, so that freshly
# generated files are covered). Sources are Go files, shell scripts (*.sh or a
# shell #! line), Makefiles and Dockerfiles. The identifier is the first line,
# after a #! line or Dockerfile parser directives when there are any, and in
# Go is followed by a blank line so that it never becomes a package doc.
set -euo pipefail

readonly ID='SPDX-License-Identifier: Apache-2.0'

usage() {
	echo "usage: $0 check|add [PATH...]" >&2
	exit 2
}

# is_source FILE: whether FILE is a source file that must carry the identifier.
is_source() {
	case "$(basename "$1")" in
	*.go | *.sh | Makefile | *.mk | Dockerfile | *.Dockerfile) return 0 ;;
	*.*) return 1 ;;
	esac
	# An extensionless executable script: shell if its #! line says so.
	head -n1 "$1" 2>/dev/null | grep -qE '^#!.*\b(ba|da|k|z)?sh\b'
}

# candidates PATH...: the files named, or found under the directories named, or
# every tracked file; NUL-separated.
candidates() {
	if [ "$#" -eq 0 ]; then
		git ls-files -z
		return
	fi
	local p
	for p in "$@"; do
		if [ -d "$p" ]; then
			find "$p" -type f -not -path '*/.git/*' -print0
		else
			printf '%s\0' "$p"
		fi
	done
}

# comment FILE: the comment marker of FILE's language.
comment() {
	case "$1" in
	*.go) echo '//' ;;
	*) echo '#' ;;
	esac
}

# header_line FILE: the line number where the identifier belongs (1 unless a
# #! line or Dockerfile parser directives come first).
header_line() {
	awk '
		NR == 1 && /^#!/ { n = 1; next }
		/^# *(syntax|escape|check) *=/ { n = NR; next }
		{ exit }
		END { print n + 1 }
	' "$1"
}

# has_id FILE: whether the identifier sits where it belongs.
has_id() {
	local want
	want="$(comment "$1") $ID"
	[ "$(sed -n "$(header_line "$1")p" "$1")" = "$want" ]
}

# add_id FILE: insert the identifier where it belongs.
add_id() {
	local at line tmp
	at=$(header_line "$1")
	line="$(comment "$1") $ID"
	tmp=$(mktemp "$1.spdx.XXXXXX")
	{
		head -n $((at - 1)) "$1"
		echo "$line"
		# Go: a blank line, unless one follows already.
		case "$1" in
		*.go) [ -z "$(sed -n "${at}p" "$1")" ] || echo ;;
		esac
		tail -n +"$at" "$1"
	} >"$tmp"
	chmod --reference="$1" "$tmp" 2>/dev/null || true
	mv "$tmp" "$1"
}

main() {
	[ "$#" -ge 1 ] || usage
	local mode=$1 missing=0 f
	shift
	case "$mode" in check | add) ;; *) usage ;; esac
	while IFS= read -r -d '' f; do
		[ -f "$f" ] && is_source "$f" || continue
		has_id "$f" && continue
		if [ "$mode" = add ]; then
			add_id "$f"
		else
			echo "$f"
			missing=1
		fi
	done < <(candidates "$@")
	if [ "$missing" = 1 ]; then
		echo "the files above lack the line '// $ID' (or '# $ID'); run scripts/spdx.sh add" >&2
		return 1
	fi
}

main "$@"
