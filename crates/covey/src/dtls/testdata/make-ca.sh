#!/bin/sh
# Regenerates the CA fixtures of the trust-anchor tests (the tests set the clock, so the
# validity periods need not be current): a CA, a client certificate it issued, one it issued
# for servers only, one without the signature key usage, a self-signed look-alike, and one
# made large (about 3.9 KB of DER, over dimpl's old 2 KB output buffer) by 120 names.
set -eu
cd "$(dirname "$0")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
key() { openssl ecparam -name prime256v1 -genkey -noout | openssl pkcs8 -topk8 -nocrypt -out "$1"; }
key ca.key
openssl req -x509 -new -key ca.key -subj /CN=covey-test-ca -days 36500 -out ca.crt
issue() { # name subject extensions
    key "$1.key"
    openssl req -new -key "$1.key" -subj "$2" -out "$tmp/$1.csr"
    printf '%b' "$3" > "$tmp/$1.ext"
    openssl x509 -req -in "$tmp/$1.csr" -CA ca.crt -CAkey ca.key -set_serial "0x$(openssl rand -hex 8)" \
        -days 36500 -extfile "$tmp/$1.ext" -out "$1.crt"
}
issue operator /CN=ops.example.org 'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=clientAuth\n'
issue server-only /CN=ops.example.org 'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n'
issue no-signing /CN=ops.example.org 'basicConstraints=CA:FALSE\nkeyUsage=keyAgreement\n'
names=$(seq -f 'DNS:node-%03g.ward-3.example.org' 1 120 | paste -sd,)
issue large /CN=large.example.org "basicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=clientAuth,serverAuth\nsubjectAltName=$names\n"
key forged.key
openssl req -x509 -new -key forged.key -subj /CN=ops.example.org -days 36500 -out forged.crt
