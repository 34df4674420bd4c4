#!/bin/sh
# The extender port's mutual TLS, issued once with openssl: a private CA, floatip's certificate
# (it serves the extender port and, as a client, forwards a follower's binds to the leader, so it
# is both serverAuth and clientAuth) and kube-scheduler's client certificate.
#
#   scripts/extender-certs.sh DIR [SAN...]     e.g. scripts/extender-certs.sh ./certs IP:10.0.0.5
#
# Writes DIR/ca.crt, DIR/floatip.{crt,key}, DIR/scheduler.{crt,key} (and ca.key: keep it offline).
# floatip's certificate names the Service (floatip.kube-system.svc) and 127.0.0.1, plus any SAN given.
set -eu
dir=${1:?usage: extender-certs.sh DIR [SAN...]}
shift
sans="DNS:floatip.kube-system.svc,DNS:floatip.kube-system.svc.cluster.local,IP:127.0.0.1"
for san in "$@"; do sans="$sans,$san"; done
mkdir -p "$dir"
cd "$dir"
curve="-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"

# shellcheck disable=SC2086
openssl req -x509 $curve -days 3650 -subj "/CN=floatip-extender-ca" -keyout ca.key -out ca.crt 2>/dev/null

printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth,clientAuth\nkeyUsage=digitalSignature\n' "$sans" >floatip.ext
# shellcheck disable=SC2086
openssl req $curve -subj "/CN=floatip" -keyout floatip.key -out floatip.csr 2>/dev/null
openssl x509 -req -in floatip.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 825 \
  -extfile floatip.ext -out floatip.crt 2>/dev/null

printf 'extendedKeyUsage=clientAuth\nkeyUsage=digitalSignature\n' >scheduler.ext
# shellcheck disable=SC2086
openssl req $curve -subj "/CN=kube-scheduler" -keyout scheduler.key -out scheduler.csr 2>/dev/null
openssl x509 -req -in scheduler.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 825 \
  -extfile scheduler.ext -out scheduler.crt 2>/dev/null

rm -f floatip.csr floatip.ext scheduler.csr scheduler.ext ca.srl
chmod 600 ca.key floatip.key scheduler.key
echo "wrote $(pwd)/{ca.crt,ca.key,floatip.crt,floatip.key,scheduler.crt,scheduler.key}"
