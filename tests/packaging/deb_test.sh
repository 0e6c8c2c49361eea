#!/usr/bin/env bash
# The Debian package, as `apt install ./ccfs_*.deb` would get it. Builds it from an already
# configured build directory with cpack (only the binary and the man pages are built first), then
# checks its control fields and declared dependencies (dpkg-deb -f), its files (dpkg-deb -c), and,
# unpacked into a temporary root (dpkg-deb -x: nothing is installed on this machine), that its
# ccfs runs and prints the project's version, that `man ccfs` and `man ccfs.toml` find and render
# its pages without a warning, that the example mount unit it ships verifies, that its changelog
# parses and names that version, and that the plot scripts its commands run are where the
# binary looks for them (an unpacked `ccfs advise --out` plots with them).
#
# Usage: tests/packaging/deb_test.sh [BUILD_DIR]      (default: build)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
work=$(mktemp -d /tmp/ccfs_deb_test.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "deb_test: FAIL: $*" >&2; exit 1; }

cmake --build "$build" --target ccfs ccfs_man >/dev/null
version=$(sed -n 's/^project(ccfs VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
arch=$(dpkg --print-architecture)
if ! cpack -G DEB --config "$build/CPackConfig.cmake" -B "$work/out" >"$work/cpack.log" 2>&1; then
  cat "$work/cpack.log" >&2
  fail "cpack -G DEB failed"
fi
deb="$work/out/ccfs_${version}_${arch}.deb"
[ -f "$deb" ] || fail "no ccfs_${version}_${arch}.deb in: $(ls "$work/out")"

# --- control fields --------------------------------------------------------------------------
field() { dpkg-deb -f "$deb" "$1"; }
[ "$(field Package)" = ccfs ] || fail "Package: $(field Package)"
[ "$(field Version)" = "$version" ] || fail "Version: $(field Version), project() says $version"
[ "$(field Architecture)" = "$arch" ] || fail "Architecture: $(field Architecture)"
[ "$(field Section)" = utils ] || fail "Section: $(field Section)"
[[ "$(field Maintainer)" =~ ^.+\ \<.+@.+\>$ ]] || fail "Maintainer: $(field Maintainer)"
[[ "$(field Description)" == *"FUSE file system"* ]] || fail "Description: $(field Description)"
depends=$(field Depends)
[[ "$(field Recommends)" == *python3-matplotlib* ]] ||
  fail "Recommends: '$(field Recommends)' lacks python3-matplotlib (the plot scripts need it)"
# Depends must name the package of every library the binary links itself (its NEEDED entries,
# resolved by ldd), and fuse3 (fusermount3). Libraries those load in turn (libcpp-httplib's
# OpenSSL, zlib, brotli) come with their own packages' Depends, as dpkg-shlibdeps expects.
declare -A wanted=([fuse3]=1)
needed=$(objdump -p "$build/ccfs" | awk '$1 == "NEEDED" {print $2}')
while read -r lib; do
  pkg=""
  for path in "$lib" "/usr$lib" "$(readlink -f "$lib")"; do
    pkg=$(dpkg -S "$path" 2>/dev/null | head -n1 | cut -d: -f1) && [ -n "$pkg" ] && break
  done
  [ -n "$pkg" ] || fail "no package owns $lib"
  wanted[$pkg]=1
done < <(ldd "$build/ccfs" | awk -v needed="$needed" '
  BEGIN { n = split(needed, names, "\n"); for (i = 1; i <= n; i++) direct[names[i]] = 1 }
  $1 in direct && $3 ~ /^\// { print $3 }')
declared=$(tr ',|' '\n\n' <<<"$depends" | sed 's/^ *//; s/[ (:].*//')
for pkg in "${!wanted[@]}"; do
  grep -qxF -- "$pkg" <<<"$declared" || fail "Depends lacks $pkg: $depends"
  # ... and each must be one Debian can install.
  apt-cache show "$pkg" >/dev/null 2>&1 || fail "Depends: $pkg is not a known package"
done

# --- files -----------------------------------------------------------------------------------
dpkg-deb -c "$deb" | awk '{print $NF}' >"$work/files"
for f in ./usr/bin/ccfs ./usr/share/man/man1/ccfs.1.gz ./usr/share/man/man5/ccfs.toml.5.gz \
         ./usr/share/doc/ccfs/copyright ./usr/share/doc/ccfs/changelog.gz \
         ./usr/share/doc/ccfs/README.md ./usr/share/doc/ccfs/docs/OPERATING.md \
         ./usr/share/doc/ccfs/examples/ccfs.toml ./usr/share/doc/ccfs/examples/srv-data.mount \
         ./usr/share/doc/ccfs/examples/fstab.example \
         ./usr/share/doc/ccfs/examples/ccfs-dashboard.json \
         ./usr/share/doc/ccfs/examples/ccfs-alerts.yml \
         ./usr/share/ccfs/plot_sweep.py ./usr/share/ccfs/plot_advise.py; do
  grep -qx -- "$f" "$work/files" || fail "the package lacks $f"
done
unexpected=$(grep -v -e '/$' -e '^\./usr/bin/ccfs$' -e '^\./usr/share/man/' -e '^\./usr/share/doc/ccfs/' \
             -e '^\./usr/share/ccfs/' "$work/files" || true)
[ -z "$unexpected" ] || fail "files the package should not hold: $unexpected"

# --- unpacked: the binary, the man pages, the unit -------------------------------------------
root="$work/root"
dpkg-deb -x "$deb" "$root"
shown=$("$root/usr/bin/ccfs" --version)
[ "$shown" = "ccfs $version" ] || fail "ccfs --version printed '$shown', expected 'ccfs $version'"
if readelf -S "$root/usr/bin/ccfs" | grep -q '\.debug_info'; then
  fail "usr/bin/ccfs is not stripped"
fi
export MANPATH="$root/usr/share/man" MANWIDTH=80
for page in ccfs ccfs.toml; do
  found=$(man -w "$page") || fail "man -w $page finds nothing in the package"
  [[ "$found" == "$root/"* ]] || fail "man $page found $found, not the package's"
  man -l "$found" >"$work/$page.txt" 2>"$work/$page.err" || fail "man -l $found failed"
  [ ! -s "$work/$page.err" ] || fail "man -l $found: $(cat "$work/$page.err")"
  zcat "$found" | groff -ww -z -man 2>"$work/$page.lint" || fail "groff failed on $found"
  [ ! -s "$work/$page.lint" ] || fail "groff warnings on $found: $(cat "$work/$page.lint")"
done
grep -q 'ccfs mount' "$work/ccfs.txt" || fail "ccfs.1 does not show ccfs mount"
grep -q 'compressed_percent' "$work/ccfs.toml.txt" || fail "ccfs.toml.5 lacks compressed_percent"
# The changelog: Debian's format, its newest entry the package's version; the copyright: the
# machine-readable format, with the license's text.
zcat "$root/usr/share/doc/ccfs/changelog.gz" >"$work/changelog"
logged=$(dpkg-parsechangelog -l "$work/changelog" -S Version) ||
  fail "dpkg-parsechangelog cannot read usr/share/doc/ccfs/changelog.gz"
[ "$logged" = "$version" ] || fail "the changelog's newest entry is $logged, the package is $version"
dep5='^Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/$'
head -n1 "$root/usr/share/doc/ccfs/copyright" | grep -q "$dep5" ||
  fail "usr/share/doc/ccfs/copyright is not in the machine-readable format"
grep -q '^License: Expat$' "$root/usr/share/doc/ccfs/copyright" || fail "copyright: no License: Expat"
# The plot scripts are where the unpacked binary looks (../share/ccfs beside it) and executable.
for script in plot_sweep.py plot_advise.py; do
  [ -x "$root/usr/share/ccfs/$script" ] || fail "usr/share/ccfs/$script is missing or not executable"
done
# The unpacked advise finds its plot script and plots, or, where python3-matplotlib (a Recommends)
# is missing, says so and keeps the CSV.
"$root/usr/bin/ccfs" mkdata "$work/data" --size 2MiB >/dev/null
"$root/usr/bin/ccfs" advise "$work/data" --memory 1MiB --c-max 50 --disk-us 100 \
  --kernel-hit-us 1 --sample-pages 32 --out "$work/advise" >"$work/advise.log" 2>&1 ||
  fail "ccfs advise --out failed: $(cat "$work/advise.log")"
[ -s "$work/advise/advise.csv" ] || fail "ccfs advise wrote no advise.csv: $(cat "$work/advise.log")"
if /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
  [ -s "$work/advise/advise.png" ] || fail "ccfs advise did not plot: $(cat "$work/advise.log")"
else
  grep -q 'python3-matplotlib is not installed' "$work/advise.log" ||
    fail "ccfs advise without matplotlib did not say so: $(cat "$work/advise.log")"
fi
if command -v systemd-analyze >/dev/null; then
  # Checks the unit's syntax, its name against Where=, and its Documentation= man pages (found
  # through MANPATH in the package).
  out=$(systemd-analyze verify "$root/usr/share/doc/ccfs/examples/srv-data.mount" 2>&1) ||
    fail "systemd-analyze verify srv-data.mount: $out"
  [ -z "$out" ] || fail "systemd-analyze verify srv-data.mount: $out"
else
  echo "deb_test: systemd-analyze not installed: the example unit is not verified" >&2
fi
echo "deb_test: ok: $(basename "$deb") ($(du -k "$deb" | cut -f1) KiB), Depends: $depends"
