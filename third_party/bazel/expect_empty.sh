#!/usr/bin/env bash
# Used by assert_no_dependency: $1 is a genquery output that must be empty; $2 says why.
if [[ -s "$1" ]]; then
  echo "FAIL: layering rule broken: $2" >&2
  echo "forbidden dependencies:" >&2
  cat "$1" >&2
  exit 1
fi
