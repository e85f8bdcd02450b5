#!/bin/sh
# checkpoint.sh: carry the finished part of long sweeps from one machine to another
# through the source tree (doc/results/in-progress/), for machines that do not keep
# their disks: a batch node that is reclaimed, a CI-like box rebuilt every day.
#
#   bench/checkpoint.sh save RUNS NAME      # RUNS's complete cells and selection points
#                                           #   -> doc/results/in-progress/NAME/
#   bench/checkpoint.sh restore NAME RUNS   # and back, before the same sweeps run again
#   bench/checkpoint.sh drop NAME           # once the sweeps are complete and collected
#
# What is kept is what `ldpgnn sweep` needs to skip finished work (doc/workbench.md,
# "Resuming"): each completion mark (pipeline.sha256) under RUNS and the output files it
# lists, nothing else (no run.log, no timing.csv). The files name this machine's
# source tree and data directory (@TOP@: this script's tree, when the pipelines came
# from it); they are stored with @SRC@ and @DATA@ in their
# place and written back with the restoring machine's, so the bytes, and with them
# the marks, hold again only where those paths are the same. A mark also names the
# build (commit, library and plugin hashes): the sweeps skip restored work only when
# run by the same commit built at the same path with the same configure options,
# which NAME/BUILD records. Anything else runs again; nothing stale is ever used.
# Run from the build directory of the tree the sweeps run from ($LDPGNN_DATA set);
# $LDP_CHECKPOINT_DIR puts the store elsewhere (the tests do).
set -eu
# the source tree of the build in the current directory (where the sweeps' pipelines
# are), else the one this script is in
src=$(sed -n 's/^abs_top_srcdir = //p' Makefile 2>/dev/null)
[ -n "$src" ] || src=$(cd "$(dirname "$0")/.." && pwd)
# the tree this script is in: sweeps may run its pipelines with another tree's build
# (doc/results/upgnet-experiments.py runs main's pipelines with a worktree's ldpgnn)
top=$(cd "$(dirname "$0")/.." && pwd)
store=${LDP_CHECKPOINT_DIR:-$top/doc/results/in-progress}
# a data directory that does not exist here was read by no run here: nothing to replace
data=${LDPGNN_DATA:-}
if [ -n "$data" ] && [ -d "$data" ]; then data=$(cd "$data" && pwd); else data=; fi

usage() {
  echo "usage: bench/checkpoint.sh save RUNS NAME | restore NAME RUNS | drop NAME" >&2
  exit 2
}

# The path substitutions (placeholder, then path), longest path first so that none
# eats part of another.
substitutions() {
  {
    [ -z "$data" ] || printf '%s @DATA@ %s\n' "${#data}" "$data"
    printf '%s @SRC@ %s\n' "${#src}" "$src"
    [ "$top" = "$src" ] || printf '%s @TOP@ %s\n' "${#top}" "$top"
  } | sort -rn | cut -d' ' -f2-
}
to_store() {
  set --
  while read -r tag path; do
    set -- "$@" -e "s|$path|$tag|g"
  done <<SUBST
$(substitutions)
SUBST
  sed "$@"
}
from_store() {
  sed -e "s|@SRC@|$src|g" -e "s|@TOP@|$top|g" -e "s|@DATA@|${data:-@DATA@}|g"
}

check_name() {
  case $1 in
  '' | */* | .*) echo "checkpoint.sh: '$1': expected a plain name (no '/', no leading '.')" >&2; exit 2 ;;
  esac
}

cmd=${1:-}
case $cmd in
save)
  [ $# -eq 3 ] || usage
  runs=$2 name=$3
  check_name "$name"
  [ -d "$runs" ] || { echo "checkpoint.sh: $runs: no such directory" >&2; exit 2; }
  dest=$store/$name
  tmp=$store/.$name.tmp
  rm -rf "$tmp" && mkdir -p "$tmp"
  # every directory with a completion mark: a sweep cell or a cell's selection point
  find "$runs" -name pipeline.sha256 -type f | LC_ALL=C sort | while read -r mark; do
    dir=$(dirname "$mark")
    rel=${dir#"$runs"}
    rel=${rel#/}
    mkdir -p "$tmp/$rel"
    to_store <"$mark" >"$tmp/$rel/pipeline.sha256"
    sed -n 's/^output [0-9a-f]* //p' "$mark" | while read -r f; do
      to_store <"$dir/$f" >"$tmp/$rel/$f"
    done
  done
  commit=$(git -C "$src" describe --always --dirty 2>/dev/null || echo unknown)
  configure=$(sed -n 's/^  \$ .*configure /configure /p' config.log 2>/dev/null | head -n 1)
  # where the build was, relative to the tree that keeps the store (a resume needs the
  # same absolute path; the store's tree is found at the same place as here)
  where=$(python3 -c 'import os, sys; print(os.path.relpath(sys.argv[1], sys.argv[2]))' "$src" "$top" 2>/dev/null ||
    echo unknown)
  {
    echo "commit $commit"
    echo "configure ${configure:-unknown}"
    echo "path $where (relative to the tree holding doc/results/in-progress)"
    echo "saved $(find "$tmp" -name pipeline.sha256 | wc -l) marks"
  } >"$tmp/BUILD"
  rm -rf "$dest" && mv "$tmp" "$dest"
  sed -n 4p "$dest/BUILD" | sed "s|^|$name: |"
  ;;
restore)
  [ $# -eq 3 ] || usage
  name=$2 runs=$3
  check_name "$name"
  from=$store/$name
  [ -f "$from/BUILD" ] || { echo "checkpoint.sh: no checkpoint '$name' in $store" >&2; exit 2; }
  here=$(git -C "$src" describe --always --dirty 2>/dev/null || echo unknown)
  there=$(sed -n 's/^commit //p' "$from/BUILD")
  [ "$here" = "$there" ] || echo "checkpoint.sh: $name was saved by a build of $there, this tree is $here: its work will run again" >&2
  (cd "$from" && find . -type f ! -name BUILD) | while read -r f; do
    mkdir -p "$runs/$(dirname "$f")"
    from_store <"$from/$f" >"$runs/$f"
  done
  echo "$name: restored $(find "$from" -name pipeline.sha256 | wc -l) marks into $runs"
  ;;
drop)
  [ $# -eq 2 ] || usage
  check_name "$2"
  rm -rf "${store:?}/$2"
  ;;
*) usage ;;
esac
