#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 The babelqueue-cpp authors
#
# Testing kit: a Java broker's (or emulator's) jars, the given Maven Central artifacts and their
# runtime dependencies, copied by Maven into DIR/libs (run: java -cp 'DIR/libs/*' MAIN ...); or
# a broker's binary distribution, one tar.gz artifact unpacked by GNU tar into DIR/home (its top
# directory stripped; `mvn dependency:unpack` truncates long names). Fetched once; later calls
# only check a stamp naming the artifacts. Safe to call from parallel test binaries (flock; built
# in a temp dir, renamed). A transport's support script calls it with its pins, e.g.
# transports/kafka/test/support/kafka_dist.sh, transports/artemis/test/support/artemis_dist.sh.
#
# Usage: maven_dist.sh NAME DIR [bom:]GROUP:ARTIFACT:VERSION...     prints DIR/libs
#        maven_dist.sh NAME DIR GROUP:ARTIFACT:VERSION:tar.gz:CLASSIFIER   prints DIR/home
#   NAME names the distribution in messages and the stamp file; the first plain artifact's jar
#   must be among what Maven copied. An artifact written bom:GROUP:ARTIFACT:VERSION is a POM
#   whose dependency management is imported (the versions a project pins for its transitive
#   dependencies, e.g. a broker's parent POM; without it Maven takes the nearest version of each,
#   which can mix incompatible releases of one library); it adds no jar.
# Exit status: 0 ready, 1 the jars could not be fetched (reason on stderr), 2 bad usage.
# BABELQUEUE_MVN (default mvn on PATH) picks Maven; its settings (~/.m2) apply.
set -euo pipefail

[ "$#" -ge 3 ] || {
  echo "usage: maven_dist.sh NAME DIR GROUP:ARTIFACT:VERSION..." >&2
  exit 2
}
name=$1
dir=$(realpath -m -- "$2")
shift 2
artifacts=("$@")

fail() {
  echo "${name}_dist: $*" >&2
  exit 1
}

archive=""
out=libs
if [[ "${artifacts[0]}" == *:*:*:tar.gz:* ]]; then
  [ "${#artifacts[@]}" -eq 1 ] || fail "an archive is fetched alone: ${artifacts[*]}"
  archive=${artifacts[0]}
  out=home
fi
wanted="${artifacts[*]}"
stamp="$dir/$out/babelqueue-$name.stamp"
ready() { [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$wanted" ]; }

if ready; then
  echo "$dir/$out"
  exit 0
fi

mkdir -p "$dir"
exec 9>"$dir/.lock"
flock 9
if ready; then
  echo "$dir/$out"
  exit 0
fi

mvn=${BABELQUEUE_MVN:-$(command -v mvn || true)}
[ -n "$mvn" ] || fail "Maven not found (Debian: apt-get install maven, see scripts/install-deps)"
work=$(mktemp -d -p "$dir" fetch.XXXXXX)
trap 'rm -rf "$work"' EXIT
if [ -n "$archive" ]; then
  if ! "$mvn" -q -B dependency:copy -Dartifact="$archive" -DoutputDirectory="$work/archive" \
    >"$work/mvn.log" 2>&1; then
    tail -n 20 "$work/mvn.log" >&2
    fail "could not fetch $archive from Maven Central (is it reachable?)"
  fi
  mkdir "$work/home"
  tar -xzf "$work"/archive/*.tar.gz -C "$work/home" --strip-components=1 ||
    fail "could not unpack $archive"
  echo "$wanted" >"$work/home/babelqueue-$name.stamp"
  rm -rf "$dir/home"
  mv "$work/home" "$dir/home"
  echo "$dir/home"
  exit 0
fi
dependencies=""
imports=""
jars=()
for artifact in "${artifacts[@]}"; do
  coordinates=${artifact#bom:}
  IFS=: read -r group id version <<<"$coordinates"
  [ -n "$group" ] && [ -n "$id" ] && [ -n "$version" ] ||
    fail "not [bom:]GROUP:ARTIFACT:VERSION: $artifact"
  entry="<dependency><groupId>$group</groupId><artifactId>$id</artifactId><version>$version</version>"
  if [ "$coordinates" != "$artifact" ]; then
    imports+="      $entry<type>pom</type><scope>import</scope></dependency>"$'\n'
  else
    dependencies+="    $entry</dependency>"$'\n'
    jars+=("$coordinates")
  fi
done
[ "${#jars[@]}" -gt 0 ] || fail "no artifact to fetch besides bom: imports"
management=""
[ -z "$imports" ] ||
  management="  <dependencyManagement><dependencies>"$'\n'"$imports  </dependencies></dependencyManagement>"$'\n'
cat >"$work/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>babelqueue.test</groupId>
  <artifactId>$name-dist</artifactId>
  <version>1</version>
$management  <dependencies>
$dependencies  </dependencies>
</project>
POM
if ! "$mvn" -q -B -f "$work/pom.xml" dependency:copy-dependencies \
  -DincludeScope=runtime -DoutputDirectory="$work/libs" >"$work/mvn.log" 2>&1; then
  tail -n 20 "$work/mvn.log" >&2
  fail "could not fetch $wanted from Maven Central (is it reachable?)"
fi
IFS=: read -r _ first_id first_version <<<"${jars[0]}"
[ -f "$work/libs/$first_id-$first_version.jar" ] || fail "Maven left no $first_id jar"
echo "$wanted" >"$work/libs/babelqueue-$name.stamp"
rm -rf "$dir/libs"
mv "$work/libs" "$dir/libs"
echo "$dir/libs"
