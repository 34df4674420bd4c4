#!/usr/bin/env bash
# `npm run image`: the image the Dockerfile describes, built without a container engine, into an
# OCI archive (dist/image/floatip-oci.tar, tag floatip:<version>), with Debian's umoci. The root
# filesystem is what the Dockerfile's runtime stage holds: this machine's Node.js 20 binary and the
# shared libraries it links, the built dist/, production node_modules only (npm ci --omit=dev),
# crds/ and openapi/, a passwd entry for the non-root user 10001, and an empty /tmp. The entrypoint
# is node itself as PID 1: floatip handles SIGTERM and SIGINT (it hands the Lease on and exits).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v umoci >/dev/null || { echo "npm run image: needs umoci (apt-get install umoci)" >&2; exit 1; }
version=$(node -p 'require("./package.json").version')
out=dist/image
work=$(mktemp -d /tmp/floatip-image.XXXXXX)
trap 'rm -rf "$work"' EXIT

npm run build --silent
rm -rf "$out" && mkdir -p "$out"

root=$work/rootfs
mkdir -p "$root"/{app,etc,tmp,usr/local/bin} && chmod 1777 "$root/tmp"
# the application: what floatip reads at run time, and its production dependencies only
cp -r dist/src "$root/app/dist-src"
mkdir -p "$root/app/dist" && mv "$root/app/dist-src" "$root/app/dist/src"
cp -r dist/dashboard "$root/app/dist/dashboard"
cp -r package.json package-lock.json crds openapi "$root/app/"
(cd "$root/app" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null)
rm "$root/app/package-lock.json"
# Node.js 20 and the libraries it links (the Dockerfile's runtime stage takes node:20-bookworm-slim)
node=$(readlink -f "$(command -v node)")
"$node" -e 'if (!process.version.startsWith("v20.")) { console.error("npm run image: needs Node.js 20, this is " + process.version); process.exit(1) }'
cp "$node" "$root/usr/local/bin/node"
for lib in $(ldd "$node" | grep -o '/[^ ]*'); do
  mkdir -p "$root$(dirname "$lib")"
  cp -L "$lib" "$root$lib"
done
# the non-root user; nothing in the image is writable by it but /tmp
printf 'root:x:0:0:root:/root:/sbin/nologin\nfloatip:x:10001:10001:floatip:/app:/sbin/nologin\n' >"$root/etc/passwd"
printf 'root:x:0:\nfloatip:x:10001:\n' >"$root/etc/group"

layout=$work/oci
umoci init --layout "$layout"
umoci new --image "$layout:$version"
umoci unpack --image "$layout:$version" "$work/bundle" >/dev/null
cp -a "$root/." "$work/bundle/rootfs/"
umoci repack --image "$layout:$version" "$work/bundle"
umoci config --image "$layout:$version" \
  --author floatip --os linux --architecture amd64 \
  --config.user 10001:10001 \
  --config.workingdir /app \
  --config.env NODE_ENV=production \
  --config.env PATH=/usr/local/bin:/usr/bin:/bin \
  --config.entrypoint /usr/local/bin/node --config.entrypoint /app/dist/src/main.js \
  --config.cmd serve \
  --config.exposedports 9040/tcp --config.exposedports 9041/tcp --config.exposedports 9042/tcp \
  --config.label org.opencontainers.image.title=floatip \
  --config.label "org.opencontainers.image.version=$version"
umoci gc --layout "$layout"
tar -C "$layout" -cf "$out/floatip-oci.tar" .
echo "$out/floatip-oci.tar: floatip:$version ($(du -h "$out/floatip-oci.tar" | cut -f1))"
