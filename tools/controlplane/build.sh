#!/usr/bin/env bash
# Builds the local control plane (etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler, kwok) from Go modules into $OUT (default: <repo>/bin/controlplane).
# The build is skipped when the recorded key (a hash of the recipes) is unchanged,
# so a warm run costs a few milliseconds.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${OUT:-$root/bin/controlplane}"
kube_version="v1.34.3"

step() { printf '► %s\n' "$*"; }

# in_dir_quietly runs "$@" in directory $2 and says every 30 seconds that
# building $1 is still going, so that no minute of a first build passes in
# silence.
in_dir_quietly() {
	local what="$1" dir="$2" waited=0 pid
	shift 2
	(cd "$dir" && "$@") &
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		sleep 1
		waited=$((waited + 1))
		if ((waited % 30 == 0)); then
			printf '◎ still building %s (%ds)\n' "$what" "$waited"
		fi
	done
	wait "$pid"
}

# kwok's Stage objects: the "fast" set (nodes Ready at once, pods Ready
# without the create/init delays) plus node leases. Cheap, so always copied.
copy_kwok_stages() {
	local kwok_dir
	kwok_dir="$(cd "$here/kwok" && go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)"
	rm -rf "$out/kwok-stages"
	mkdir -p "$out/kwok-stages"
	for set in node/fast node/heartbeat-with-lease pod/fast; do
		cp "$kwok_dir/kustomize/stage/$set/"*.yaml "$out/kwok-stages/"
	done
	rm -f "$out/kwok-stages/kustomization.yaml"
	chmod -R u+w "$out/kwok-stages"
}

# The key covers what decides the binaries' bytes: the recipes and versions.
key="$( (echo "$kube_version"; cat "$here"/*/go.mod "$here"/*/go.sum \
	"$here"/kube/cmd/*/main.go "$here"/etcd/main.go) | sha256sum | cut -c1-16)"
mkdir -p "$out"
if [[ -f "$out/.key" && "$(cat "$out/.key")" == "$key" ]]; then
	copy_kwok_stages
	echo "✔ control plane binaries up to date in $out"
	exit 0
fi
rm -f "$out/.key"
export CGO_ENABLED=0

start=$SECONDS
step "building etcd"
in_dir_quietly etcd "$here/etcd" go build -trimpath -ldflags "-s -w" -o "$out/etcd" .

step "building kube-apiserver, kube-controller-manager, kube-scheduler $kube_version (about 3 minutes the first time)"
major="${kube_version#v}"; major="${major%%.*}"
minor="${kube_version#v*.}"; minor="${minor%%.*}"
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
	ldflags+=" -X $pkg.gitVersion=$kube_version -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor"
	ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
done
for bin in kube-apiserver kube-controller-manager kube-scheduler; do
	step "building $bin ($((SECONDS - start))s so far)"
	in_dir_quietly "$bin" "$here/kube" go build -trimpath -ldflags "$ldflags" -o "$out/$bin" "./cmd/$bin"
done

step "building kwok"
in_dir_quietly kwok "$here/kwok" go build -trimpath -ldflags "-s -w" -o "$out/kwok" sigs.k8s.io/kwok/cmd/kwok
copy_kwok_stages

echo "$key" >"$out/.key"
printf '✔ control plane built in %ds into %s\n' "$((SECONDS - start))" "$out"
