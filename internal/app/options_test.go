package app

import (
	"slices"
	"testing"

	"github.com/spf13/pflag"
)

func TestSelectControllers(t *testing.T) {
	known := []string{"source", "kustomize", "helm", "notification"}
	tests := []struct {
		flag    []string
		want    []string
		all     []string
		wantErr bool
	}{
		{flag: []string{"*"}, want: known},
		{flag: []string{"*", "-source"}, want: []string{"kustomize", "helm", "notification"}},
		{flag: []string{"helm", "source"}, want: []string{"source", "helm"}},
		{flag: []string{"*", "-source", "-kustomize", "-helm", "-notification"}, wantErr: true},
		{flag: []string{"source"}, want: []string{"source"}},
		{flag: []string{"source", "source"}, want: []string{"source"}},
		{flag: []string{"helmchart"}, wantErr: true},
		{flag: []string{"-source"}, wantErr: true},
		{flag: []string{"*", "-nope"}, wantErr: true},
		// The UI runs only when named.
		{flag: []string{"*"}, want: known, all: append(slices.Clone(known), "ui")},
		{flag: []string{"ui"}, want: []string{"ui"}, all: append(slices.Clone(known), "ui")},
		{flag: []string{"*", "ui"}, want: append(slices.Clone(known), "ui"), all: append(slices.Clone(known), "ui")},
	}
	for _, tt := range tests {
		all := known
		if tt.all != nil {
			all = tt.all
		}
		got, err := selectControllers(tt.flag, all)
		if (err != nil) != tt.wantErr {
			t.Errorf("%v: err = %v", tt.flag, err)
			continue
		}
		if !tt.wantErr && !slices.Equal(got, tt.want) {
			t.Errorf("%v: got %v, want %v", tt.flag, got, tt.want)
		}
	}
}

func TestFluxFlagsParse(t *testing.T) {
	o := DefaultOptions()
	fs := pflag.NewFlagSet("weir-controller", pflag.ContinueOnError)
	o.AddFlags(fs)
	err := fs.Parse([]string{
		"--events-addr=http://notification-controller.flux-system.svc.cluster.local./",
		"--watch-all-namespaces=false", "--log-level=debug", "--log-encoding=console",
		"--enable-leader-election", "--storage-path=/tmp/data", "--storage-adv-addr=source-controller.flux-system.svc.cluster.local.",
		"--concurrent=10", "--requeue-dependency=5s", "--feature-gates=StrictPostBuildSubstitutions=true,ExternalArtifact=false",
		"--no-cross-namespace-refs=true", "--default-service-account=default", "--controllers=source,kustomize",
	})
	if err != nil {
		t.Fatal(err)
	}
	if o.WatchAllNamespaces || !o.EnableLeaderElection || o.Concurrent != 10 || o.StoragePath != "/tmp/data" ||
		!o.FeatureGates["StrictPostBuildSubstitutions"] || o.FeatureGates["ExternalArtifact"] || !o.NoCrossNamespaceRefs {
		t.Errorf("flags not applied: %+v", o)
	}
	if err := fs.Parse([]string{"--feature-gates=Broken"}); err == nil {
		t.Error("malformed feature gate accepted")
	}
}
