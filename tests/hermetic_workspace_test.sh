#!/usr/bin/env bash
# Fails if the build could download anything: the WORKSPACE and our Starlark may name
# only local repositories, and .bazelrc must forbid repository downloads.
set -euo pipefail
fail=0
for f in WORKSPACE third_party/system_paths.bzl third_party/cuda/cuda_configure.bzl; do
  if grep -nE 'http_archive|http_file|git_repository|ctx\.download|download_and_extract|urls? *=' "$f"; then
    echo "FAIL: $f names a remote source; the build must stay offline" >&2
    fail=1
  fi
done
grep -q -- '--experimental_repository_disable_download' .bazelrc || {
  echo "FAIL: .bazelrc does not pass --experimental_repository_disable_download" >&2; fail=1; }
grep -q -- '--incompatible_strict_action_env' .bazelrc || {
  echo "FAIL: .bazelrc does not pass --incompatible_strict_action_env" >&2; fail=1; }
# Every absolute system path of the WORKSPACE comes from third_party/system_paths.bzl.
if grep -nE '"/(usr|opt|lib)' WORKSPACE; then
  echo "FAIL: WORKSPACE names a system path; put it in third_party/system_paths.bzl" >&2; fail=1
fi
exit $fail
