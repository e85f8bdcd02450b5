#!/bin/sh
# test-completion.sh: the bash completion, cli/bash-completion/ldpgnn (TAP output). The
# script is sourced in bash and its function called the way bash calls it (COMP_WORDS,
# COMP_CWORD); the words come from the program built here.
set -u
bin="$LDPGNN_BUILDDIR/ldpgnn"
script="$LDPGNN_SRCDIR/cli/bash-completion/ldpgnn"
fixtures="$LDPGNN_BUILDDIR/tests/plugins/.libs"
tmp="$LDPGNN_BUILDDIR/test-completion.tmp"
rm -rf "$tmp" && mkdir -p "$tmp/dir.d" && : >"$tmp/mine.yaml" && : >"$tmp/notes.txt"
. "$LDPGNN_SRCDIR/tests/tap.sh"
echo "1..11"
if ! command -v bash >/dev/null 2>&1; then
  i=0; while [ $i -lt 11 ]; do ok "# SKIP no bash"; i=$((i + 1)); done
  exit 0
fi

# complete WORD...: the completions of the last word, sorted, one per line
complete_words() {
  (cd "$tmp" && bash -c '
    . "$1"; shift
    COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 ))
    _ldpgnn
    printf "%s\n" "${COMPREPLY[@]}" | sort' sh "$script" "$bin" "$@")
}
expect() { # description, expected words (space-separated), then the words typed
  d=$1 want=$2; shift 2
  got=$(complete_words "$@" | tr '\n' ' ' | sed 's/ $//')
  if [ "$got" = "$want" ]; then ok "$d"
  else printf 'typed: %s\nwant: %s\ngot:  %s\n' "$*" "$want" "$got" >"$tmp/out"; not_ok "$d" "$tmp/out"
  fi
}

all=$("$bin" --complete=commands | sort | tr '\n' ' ' | sed 's/ $//')
expect "the commands" "$all" ""
expect "a command from its first letters" "report run" r
expect "after help: the commands" "report run" help r
expect "a long option of the command" "--out" run --ou
expect "an option's DIR value: directories only" "dir.d" run --out ""
expect "a plugin name for describe" "multibit" describe multi
expect "only mechanisms for audit (no dataset linqs)" "laplace ldpgcn locallap" audit l
expect "a PIPELINE: pipeline names and .yaml files" "mine.yaml" validate mi
expect "a PIPELINE: the shipped pipeline by name" "quickstart" run quick
if [ -f "$fixtures/fixture-mechanism.so" ]; then
  expect "plugins found on a --plugin-path typed before the command" "fixture_mechanism" \
    --plugin-path "$fixtures" describe fixture_m
else
  ok "# SKIP the test fixtures are not built (make check builds them)"
fi
if bash -c '. "$1"; complete -p ldpgnn' sh "$script" 2>&1 | grep -q -- "-F _ldpgnn ldpgnn"
then ok "the script registers _ldpgnn for ldpgnn"
else not_ok "the script registers _ldpgnn for ldpgnn"
fi
[ $fails -eq 0 ] && rm -rf "$tmp"
exit 0
