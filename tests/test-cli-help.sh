#!/bin/sh
# test-cli-help.sh: the command line's help and usage errors (TAP output). Every
# subcommand answers --help with exit status 0 and lists each of its options; `ldpgnn
# help CMD` says the same; the top-level help lists every option of every command; an
# unknown option is still a usage error (exit status 2) that names it. Also: `plugins`
# fits 100 columns, and PIPELINE arguments given by name are found on the pipeline path.
set -u
LC_ALL=C; export LC_ALL  # GLib's option errors are translated
bin="$LDPGNN_BUILDDIR/ldpgnn"
src="$LDPGNN_SRCDIR"
tmp="$LDPGNN_BUILDDIR/test-cli-help.tmp"
rm -rf "$tmp" && mkdir -p "$tmp"
. "$LDPGNN_SRCDIR/tests/tap.sh"

# The options of each command, as documented before the option tables existed (the
# usage strings of the hand-written parsers): none may be lost.
expected() {
  case $1 in
    run) echo "--set -s --seeds --variant --out --data-dir --max-memory --quiet -q" ;;
    sweep) echo "--grid --set -s --seeds --jobs -j --out --data-dir --shard --mpi --max-memory --no-plot --quiet -q" ;;
    report) echo "--rows --cols --metric --baseline --select-by --out" ;;
    plot) echo "--metric" ;;
    join) echo "--out" ;;
    validate) echo "--set" ;;
    plugins) echo "" ;;
    describe) echo "" ;;
    datasets) echo "--data-dir --set" ;;
    audit) echo "--epsilon --trials --seed --set" ;;
  esac
}
commands="run sweep report plot join validate plugins describe datasets audit"

# 1. the program's list of commands is the one above
"$bin" --complete=commands >"$tmp/commands" 2>&1
if [ "$(tr '\n' ' ' <"$tmp/commands")" = "$commands help " ]; then ok "the commands are: $commands help"
else not_ok "the commands are: $commands help" "$tmp/commands"
fi

# An option appears in help text as "--name" or "-x," / "-x " at a word start.
has_option() { # file option
  case $2 in
    --*) grep -Eq -- "(^|[ [])$2([ =]|\$|\])" "$1" ;;
    -?) grep -Eq -- "(^|[ [])$2[, ]" "$1" ;;
  esac
}

for c in $commands; do
  out="$tmp/$c.help"
  if "$bin" "$c" --help >"$out" 2>"$tmp/$c.err" && [ ! -s "$tmp/$c.err" ] && grep -q "^Usage: ldpgnn $c " "$out"
  then ok "$c --help exits 0 with its usage on stdout"
  else not_ok "$c --help exits 0 with its usage on stdout" "$tmp/$c.err"
  fi
  # every option of the table (the program's own list, as completion sees it) and
  # every option the command always had
  missing=
  for o in $(expected "$c") $("$bin" --complete=options "$c" | cut -d' ' -f1); do
    has_option "$out" "$o" || missing="$missing $o"
  done
  for o in --help -h --plugin-path --verbose -v; do has_option "$out" "$o" || missing="$missing $o"; done
  if [ -z "$missing" ]; then ok "$c --help lists all its options"
  else echo "missing:$missing" >>"$out"; not_ok "$c --help lists all its options" "$out"
  fi
  if "$bin" help "$c" >"$tmp/$c.help2" 2>&1 && cmp -s "$out" "$tmp/$c.help2" &&
     "$bin" "$c" -h >"$tmp/$c.help3" 2>&1 && cmp -s "$out" "$tmp/$c.help3"
  then ok "ldpgnn help $c and $c -h print the same help"
  else not_ok "ldpgnn help $c and $c -h print the same help" "$tmp/$c.help2"
  fi
  "$bin" "$c" --no-such-option >"$tmp/$c.bad" 2>"$tmp/$c.bad.err"
  rc=$?
  if [ $rc -eq 2 ] && [ ! -s "$tmp/$c.bad" ] && grep -q "^ldpgnn $c: unknown option --no-such-option" "$tmp/$c.bad.err" &&
     grep -q "^Usage: ldpgnn $c " "$tmp/$c.bad.err"
  then ok "$c --no-such-option: exit status 2 and a message naming it"
  else echo "exit status $rc" >>"$tmp/$c.bad.err"; not_ok "$c --no-such-option: exit status 2 and a message naming it" "$tmp/$c.bad.err"
  fi
done

# the top-level usage: every command with every one of its long options
"$bin" --help >"$tmp/top.help" 2>&1
rc=$?
missing=
for c in $commands; do
  grep -q "^  ldpgnn $c" "$tmp/top.help" || missing="$missing $c"
  for o in $(expected "$c"); do
    case $o in --*) has_option "$tmp/top.help" "$o" || missing="$missing $c:$o" ;; esac
  done
done
for o in --plugin-path --verbose --help --version; do has_option "$tmp/top.help" "$o" || missing="$missing $o"; done
if [ $rc -eq 0 ] && [ -z "$missing" ]; then ok "ldpgnn --help lists every command and option"
else echo "exit status $rc; missing:$missing" >>"$tmp/top.help"; not_ok "ldpgnn --help lists every command and option" "$tmp/top.help"
fi
check "ldpgnn help is ldpgnn --help" sh -c "'$bin' help | cmp - '$tmp/top.help'"
check "no line of the help is wider than 80 columns" \
  sh -c "cat '$tmp'/*.help | awk 'length(\$0) > 80 { print; bad = 1 } END { exit bad }'"
check "ldpgnn help of an unknown command: exit status 2" \
  sh -c "'$bin' help nosuch 2>'$tmp/h.err'; test \$? -eq 2 && grep -q \"unknown command 'nosuch'\" '$tmp/h.err'"
check "an unknown global option: exit status 2" \
  sh -c "'$bin' --nosuch plugins >/dev/null 2>'$tmp/g.err'; test \$? -eq 2 && grep -q 'nosuch' '$tmp/g.err'"
check "a missing option value: exit status 2" \
  sh -c "'$bin' run x.yaml --out 2>'$tmp/v.err'; test \$? -eq 2 && grep -q -- '--out' '$tmp/v.err'"
check "a missing positional argument: exit status 2 with the usage" \
  sh -c "'$bin' run 2>'$tmp/p.err'; test \$? -eq 2 && grep -q '^Usage: ldpgnn run ' '$tmp/p.err'"
check "describe --help is the help, not a plugin lookup" \
  sh -c "'$bin' describe --help | grep -q '^Usage: ldpgnn describe '"

# plugins: 100 columns without -v; -v adds the file of each plugin
"$bin" plugins >"$tmp/plugins" 2>&1
if awk 'length($0) > 100 { bad = 1 } END { exit bad }' "$tmp/plugins" && grep -q "^mechanism  *rr  " "$tmp/plugins"
then ok "ldpgnn plugins fits 100 columns"
else not_ok "ldpgnn plugins fits 100 columns" "$tmp/plugins"
fi
check "ldpgnn plugins -v and -v plugins add the files" \
  sh -c "'$bin' plugins -v | grep '^mechanism  *rr ' | grep -q '/rr\.so\$' &&
         '$bin' -v plugins | grep '^mechanism  *rr ' | grep -q '/rr\.so\$'"

# PIPELINE by name: $LDPGNN_PIPELINE_PATH first, then the source tree's pipelines/ when
# uninstalled; a file given as a path is used as it is.
mkdir -p "$tmp/pp"
sed 's/^name: quickstart/name: mine/' "$src/pipelines/quickstart.yaml" >"$tmp/pp/quickstart.yaml"
check "validate NAME finds NAME.yaml on \$LDPGNN_PIPELINE_PATH first" \
  sh -c "cd '$tmp' && LDPGNN_PIPELINE_PATH='$tmp/pp' '$bin' validate quickstart | grep -q '^$tmp/pp/quickstart.yaml: ok'"
check "validate NAME finds the source tree's pipeline when uninstalled" \
  sh -c "cd '$tmp' && '$bin' validate quickstart | grep -q 'pipelines/quickstart.yaml: ok'"
check "an unknown pipeline name: exit status 1 naming the directories searched" \
  sh -c "cd '$tmp' && LDPGNN_PIPELINE_PATH='$tmp/pp' '$bin' run nosuch >/dev/null 2>'$tmp/n.err'; test \$? -eq 1 &&
         grep -q 'nosuch: no such file, and no pipeline nosuch.yaml in $tmp/pp, ' '$tmp/n.err'"
check "options after the pipeline and --opt=value still work" \
  sh -c "'$bin' validate '$src/pipelines/quickstart.yaml' --set=seeds=2 -v | grep -q '\"seeds\" : 2'"

echo "1..$n"
[ $fails -eq 0 ] && rm -rf "$tmp"
exit 0
