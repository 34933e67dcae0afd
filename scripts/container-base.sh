#!/usr/bin/env bash
# Makes a local Debian bookworm base image for the Dockerfile where no registry of images can
# be reached (decision 088): debootstrap a minbase root from Debian's mirror, trim it the way
# debian:bookworm-slim is trimmed, and `podman import` it.
#   scripts/container-base.sh [TAG]      (default localhost/parley-base:bookworm)
# Then: podman build --format docker --build-arg BASE_IMAGE=TAG -t parley .
# The root's tarball is cached in $PARLEY_CONTAINER_CACHE (default node_modules/.cache/
# parley-container), so a second machine state or a wiped podman store re-imports in seconds.
# Needs root, debootstrap and podman.
set -euo pipefail
tag=${1:-localhost/parley-base:bookworm}
mirror=${PARLEY_DEBIAN_MIRROR:-http://deb.debian.org/debian}
cd "$(dirname "$0")/.."
cache=${PARLEY_CONTAINER_CACHE:-node_modules/.cache/parley-container}
tarball="$cache/bookworm-minbase.tar"

if podman image exists "$tag"; then
  echo "base image $tag: present"
  exit 0
fi

if [ ! -s "$tarball" ]; then
  mkdir -p "$cache"
  root=$(mktemp -d "${TMPDIR:-/tmp}/parley-base.XXXXXX")
  trap 'rm -rf "$root"' EXIT
  echo "base image $tag: debootstrap bookworm (minbase) from $mirror"
  debootstrap --variant=minbase bookworm "$root" "$mirror" >"$cache/debootstrap.log" 2>&1 \
    || { tail -20 "$cache/debootstrap.log" >&2; exit 1; }
  # What debian:bookworm-slim does: no docs, man pages or locales from later installs, no
  # recommends, no apt caches; plus the security suite.
  cat >"$root/etc/dpkg/dpkg.cfg.d/slim" <<'CFG'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-exclude /usr/share/lintian/*
CFG
  printf 'APT::Install-Recommends "false";\nAPT::Install-Suggests "false";\n' >"$root/etc/apt/apt.conf.d/90slim"
  printf 'deb %s bookworm main\ndeb %s bookworm-updates main\ndeb http://deb.debian.org/debian-security bookworm-security main\n' \
    "$mirror" "$mirror" >"$root/etc/apt/sources.list"
  find "$root/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete 2>/dev/null || true
  rm -rf "$root"/usr/share/man/* "$root"/usr/share/info/* "$root"/usr/share/locale/* \
    "$root"/var/cache/apt/* "$root"/var/lib/apt/lists/* "$root"/var/log/*.log "$root"/var/log/apt/*
  tar -C "$root" --numeric-owner -cf "$tarball.partial" .
  mv "$tarball.partial" "$tarball"
fi
echo "base image $tag: import $tarball"
podman import --change 'CMD ["bash"]' "$tarball" "$tag" >/dev/null
