package app

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Flux's install arguments, as gotk-components.yaml carries them: each
// controller's config/manager/deployment.yaml args, with flux2's
// manifests/bases/<controller>/patch.yaml adding --events-addr first (not to
// notification-controller) and `flux install` rewriting the first three.
const (
	fluxEventsAddr = "--events-addr=http://notification-controller.flux-system.svc.cluster.local./"
	fluxEventsURL  = "http://notification-controller.flux-system.svc.cluster.local./"
	fluxAdvAddr    = "source-controller.$(RUNTIME_NAMESPACE).svc.cluster.local."
)

var fluxCommonArgs = []string{"--watch-all-namespaces=true", "--log-level=info", "--log-encoding=json", "--enable-leader-election"}

// fluxInstallDefaults is what those common arguments mean: Flux's defaults
// with leader election on.
func fluxInstallDefaults() Options {
	o := DefaultOptions()
	o.EnableLeaderElection = true
	o.FeatureGates = map[string]bool{}
	return o
}

func withArgs(first []string, rest ...string) []string {
	return append(append(append([]string{}, first...), fluxCommonArgs...), rest...)
}

type fluxArgsCase struct {
	name string
	args []string
	// want changes fluxInstallDefaults into what args mean.
	want func(o *Options)
	// listen and send are where the notification controller takes events
	// and where the others send them, as the process's selection decides.
	listen, send string
}

func fluxArgsCases() []fluxArgsCase {
	sends := func(o *Options) { o.EventsAddr = fluxEventsURL }
	return []fluxArgsCase{
		{
			name: "source-controller (gotk-components)",
			args: withArgs([]string{fluxEventsAddr}, "--storage-path=/data", "--storage-adv-addr="+fluxAdvAddr, "--controllers=source"),
			want: func(o *Options) {
				sends(o)
				o.Controllers, o.StoragePath, o.StorageAdvAddr = []string{"source"}, "/data", fluxAdvAddr
			},
			send: fluxEventsURL,
		},
		{
			name: "kustomize-controller (gotk-components)",
			args: withArgs([]string{fluxEventsAddr}, "--controllers=kustomize"),
			want: func(o *Options) { sends(o); o.Controllers = []string{"kustomize"} },
			send: fluxEventsURL,
		},
		{
			name:   "notification-controller (gotk-components): listens on --events-addr's default",
			args:   withArgs(nil, "--controllers=notification"),
			want:   func(o *Options) { o.Controllers = []string{"notification"} },
			listen: ":9090",
		},
		{
			name: "notification-controller patched with Flux's listen flags",
			args: withArgs(nil, "--events-addr=:9999", "--receiverAddr=:9292", "--rate-limit-interval=1m", "--controllers=notification"),
			want: func(o *Options) {
				o.Controllers, o.EventsAddr, o.RateLimitInterval = []string{"notification"}, ":9999", 60e9
			},
			listen: ":9999",
		},
		{
			name: "helm-controller (gotk-components)",
			args: withArgs([]string{fluxEventsAddr}, "--controllers=helm"),
			want: func(o *Options) { sends(o); o.Controllers = []string{"helm"} },
			send: fluxEventsURL,
		},
		{
			// Flux's multi-tenancy lockdown and tuning docs applied to
			// helm-controller, with its feature gates.
			name: "helm-controller locked down and tuned",
			args: withArgs([]string{fluxEventsAddr},
				"--concurrent=10", "--requeue-dependency=5s", "--graceful-shutdown-timeout=600s",
				"--default-service-account=default", "--no-cross-namespace-refs=true",
				"--insecure-kubeconfig-exec=false", "--insecure-kubeconfig-tls=false",
				"--oom-watch-memory-threshold=95", "--oom-watch-interval=500ms",
				"--feature-gates=OOMWatch=true,AdditiveCELDependencyCheck=true,DefaultToRetryOnFailure=true", "--controllers=helm"),
			want: func(o *Options) {
				sends(o)
				o.Controllers, o.Concurrent, o.RequeueDependency = []string{"helm"}, 10, 5e9
				o.DefaultServiceAccount, o.NoCrossNamespaceRefs = "default", true
				o.FeatureGates = map[string]bool{"OOMWatch": true, "AdditiveCELDependencyCheck": true, "DefaultToRetryOnFailure": true}
			},
			send: fluxEventsURL,
		},
		{
			name: "image-reflector-controller (gotk-components)",
			args: withArgs([]string{fluxEventsAddr}, "--storage-path=/data", "--controllers=image-reflector"),
			want: func(o *Options) {
				sends(o)
				o.Controllers, o.StoragePath = []string{"image-reflector"}, "/data"
			},
			send: fluxEventsURL,
		},
		{
			name: "image-reflector-controller with its storage flags, FluxStorage and weir's cap",
			args: withArgs([]string{fluxEventsAddr}, "--storage-path=/data", "--storage-compression-threshold=128",
				"--max-tags-per-image-repository=500", "--concurrent=8", "--feature-gates=ObjectLevelWorkloadIdentity=true,FluxStorage=true",
				"--controllers=image-reflector"),
			want: func(o *Options) {
				sends(o)
				o.Controllers, o.StoragePath, o.Concurrent = []string{"image-reflector"}, "/data", 8
				o.ImageReflector = ImageReflectorOptions{CompressionThresholdKiB: 128, MaxTags: 500}
				o.FeatureGates = map[string]bool{"ObjectLevelWorkloadIdentity": true, "FluxStorage": true}
			},
			send: fluxEventsURL,
		},
		{
			// The image-automation controller comes with its own branch:
			// its install arguments must parse, as the shared flags they are.
			name: "image-automation-controller (gotk-components)",
			args: withArgs([]string{fluxEventsAddr}),
			want: sends, send: fluxEventsURL, listen: ":9091",
		},
		{
			// config/manager/deployment.yaml of each controller, before
			// flux2's patches: --watch-all-namespaces without a value.
			name: "source-controller (config/manager)",
			args: []string{
				"--watch-all-namespaces", "--log-level=info", "--log-encoding=json", "--enable-leader-election",
				"--storage-path=/data", "--storage-adv-addr=" + fluxAdvAddr, "--controllers=source",
			},
			want: func(o *Options) {
				o.Controllers, o.StoragePath, o.StorageAdvAddr = []string{"source"}, "/data", fluxAdvAddr
			},
		},
		{
			name: "kustomize-controller with seed 003's args/- patch",
			args: withArgs([]string{fluxEventsAddr}, "--feature-gates=StrictPostBuildSubstitutions=true", "--controllers=kustomize"),
			want: func(o *Options) {
				sends(o)
				o.Controllers, o.FeatureGates = []string{"kustomize"}, map[string]bool{"StrictPostBuildSubstitutions": true}
			},
			send: fluxEventsURL,
		},
		{
			// flux2's manifests/test patch (its e2e install).
			name: "kustomize-controller and helm-controller with ExternalArtifact",
			args: withArgs([]string{fluxEventsAddr}, "--feature-gates=ExternalArtifact=true"),
			want: func(o *Options) { sends(o); o.FeatureGates = map[string]bool{"ExternalArtifact": true} },
			send: fluxEventsURL, listen: ":9091",
		},
		{
			// Patches of Flux's docs (vertical scaling, Helm index cache (used),
			// OOM watch): accepted, kept, not used by weir yet.
			name: "helm-controller and source-controller tuning patches",
			args: withArgs([]string{fluxEventsAddr},
				"--concurrent=10", "--kube-api-qps=500", "--kube-api-burst=1000", "--graceful-shutdown-timeout=300s",
				"--oom-watch-memory-threshold=90", "--oom-watch-interval=1s", "--helm-cache-max-size=10", "--helm-cache-ttl=60m",
				"--helm-cache-purge-interval=5m", "--requeue-dependency=5s", "--leader-election-release-on-cancel=false",
				"--token-cache-max-size=0", "--ssh-kex-algos=curve25519-sha256"),
			want: func(o *Options) {
				sends(o)
				o.Concurrent, o.KubeAPIQPS, o.KubeAPIBurst, o.RequeueDependency = 10, 500, 1000, 5e9
				o.LeaderElectionReleaseOnCancel = false
				o.GracefulShutdownTimeout, o.FluxOnly.OOMWatchThreshold, o.FluxOnly.OOMWatchInterval = 300e9, 90, 1e9
				o.HelmCacheMaxSize, o.HelmCacheTTL, o.HelmCachePurgeInterval = 10, time.Hour, 5*time.Minute
				o.FluxOnly.TokenCacheMaxSize, o.FluxOnly.SSHKexAlgos = 0, []string{"curve25519-sha256"}
			},
			send: fluxEventsURL, listen: ":9091",
		},
		{
			// Flux's multi-tenancy lockdown, sharding and custom stage recipes.
			name: "kustomize-controller locked down and sharded",
			args: withArgs([]string{fluxEventsAddr},
				"--no-cross-namespace-refs=true", "--no-remote-bases=true", "--default-service-account=default",
				"--watch-label-selector=!sharding.fluxcd.io/key", "--custom-apply-stage-kinds=rbac.authorization.k8s.io/Role",
				"--concurrent=10", "--requeue-dependency=5s", "--controllers=kustomize"),
			want: func(o *Options) {
				sends(o)
				o.Controllers, o.NoCrossNamespaceRefs, o.NoRemoteBases, o.DefaultServiceAccount = []string{"kustomize"}, true, true, "default"
				o.WatchLabelSelector, o.CustomApplyStageKinds = "!sharding.fluxcd.io/key", []string{"rbac.authorization.k8s.io/Role"}
				o.Concurrent, o.RequeueDependency = 10, 5e9
			},
			send: fluxEventsURL,
		},
	}
}

// TestFluxInstallArgsMeanTheSame runs every argument Flux's install
// manifests give its controllers (and the patches users and seed 003 apply
// to them) through weir-controller's flags, and checks what they set and
// where events go.
func TestFluxInstallArgsMeanTheSame(t *testing.T) {
	for _, tt := range fluxArgsCases() {
		t.Run(tt.name, func(t *testing.T) {
			got := DefaultOptions()
			fs := pflag.NewFlagSet("weir-controller", pflag.ContinueOnError)
			got.AddFlags(fs)
			if err := fs.Parse(tt.args); err != nil {
				t.Fatalf("Flux's args do not parse: %v", err)
			}
			want := fluxInstallDefaults()
			tt.want(&want)
			if diff := cmp.Diff(want, got, cmpopts.IgnoreUnexported(Options{})); diff != "" {
				t.Errorf("meaning (-want +got):\n%s", diff)
			}
			selected, err := got.Selected()
			if err != nil {
				t.Fatalf("Selected: %v", err)
			}
			if contains(selected, "notification") {
				if addr, err := eventsListenAddr(&got, selected); err != nil || addr != tt.listen {
					t.Errorf("events listen address %q (%v), want %q", addr, err, tt.listen)
				}
			}
			if hook := eventsWebhook(&got, selected); hook != tt.send {
				t.Errorf("events sent to %q, want %q", hook, tt.send)
			}
		})
	}
}

// notSupported is the error a Flux controller starts with for a gate it
// does not have.
func notSupported(gate string) string {
	return "unable to load feature gates: feature-gate '" + gate + "' not supported"
}

// TestFeatureGatesAnsweredAsTheirOwner gives --feature-gates to subsets of
// controllers and expects each gate answered as the Flux controller that
// owns it answers: accepted when one of the selected controllers has it,
// else Flux's error, word for word.
func TestFeatureGatesAnsweredAsTheirOwner(t *testing.T) {
	single := []string{"source", "kustomize", "helm", "notification", "image-reflector", "image-automation"}
	tests := []struct {
		name     string
		selected []string
		gates    []string
		wantErr  string
	}{
		// Every gate of each Flux controller, on that controller alone.
		{name: "source-controller's", selected: []string{"source"},
			gates: []string{"CacheSecretsAndConfigMaps", "ObjectLevelWorkloadIdentity"}},
		{name: "kustomize-controller's", selected: []string{"kustomize"},
			gates: []string{"CacheSecretsAndConfigMaps", "DisableStatusPollerCache", "DisableFailFastBehavior",
				"StrictPostBuildSubstitutions", "GroupChangeLog", "AdditiveCELDependencyCheck", "ExternalArtifact",
				"CancelHealthCheckOnNewRevision", "DisableConfigWatchers", "DirectSourceFetch", "MigrateAPIVersion",
				"ObjectLevelWorkloadIdentity"}},
		{name: "helm-controller's", selected: []string{"helm"},
			gates: []string{"CacheSecretsAndConfigMaps", "DetectDrift", "CorrectDrift", "AllowDNSLookups", "OOMWatch",
				"AdoptLegacyReleases", "DisableChartDigestTracking", "AdditiveCELDependencyCheck", "ExternalArtifact",
				"DisableConfigWatchers", "DirectSourceFetch", "UseHelm3Defaults", "CancelHealthCheckOnNewRevision",
				"DefaultToRetryOnFailure", "ObjectLevelWorkloadIdentity"}},
		{name: "notification-controller's", selected: []string{"notification"},
			gates: []string{"CacheSecretsAndConfigMaps", "DisableConfigWatchers", "ObjectLevelWorkloadIdentity"}},
		{name: "image-reflector-controller's", selected: []string{"image-reflector"},
			gates: []string{"CacheSecretsAndConfigMaps", "FluxStorage", "ObjectLevelWorkloadIdentity"}},
		{name: "image-automation-controller's", selected: []string{"image-automation"},
			gates: []string{"GitForcePushBranch", "GitShallowClone", "GitAllBranchReferences", "GitSparseCheckout",
				"CacheSecretsAndConfigMaps", "ObjectLevelWorkloadIdentity"}},

		// FluxStorage is image-reflector-controller's (v1.2).
		{name: "FluxStorage in the single layout", selected: single, gates: []string{"FluxStorage"}},
		{name: "FluxStorage with the image controllers", selected: []string{"image-reflector", "image-automation"},
			gates: []string{"FluxStorage"}},
		{name: "FluxStorage on source-controller", selected: []string{"source"},
			gates: []string{"FluxStorage"}, wantErr: notSupported("FluxStorage")},
		{name: "FluxStorage on image-automation-controller", selected: []string{"image-automation"},
			gates: []string{"FluxStorage"}, wantErr: notSupported("FluxStorage")},
		{name: "FluxStorage without the image controllers", selected: []string{"source", "kustomize", "helm", "notification"},
			gates: []string{"FluxStorage"}, wantErr: notSupported("FluxStorage")},

		// The image controllers alone take the gates they share with the others.
		{name: "image-automation alone: its fluxcd/pkg auth gate", selected: []string{"image-automation"},
			gates: []string{"ObjectLevelWorkloadIdentity"}},
		{name: "image-reflector alone: its cache gate", selected: []string{"image-reflector"},
			gates: []string{"CacheSecretsAndConfigMaps"}},

		// A gate Flux removed is unknown like any other.
		{name: "OptimizedGitClones, removed in source-controller v1.0", selected: []string{"source"},
			gates: []string{"OptimizedGitClones"}, wantErr: notSupported("OptimizedGitClones")},
		{name: "OptimizedGitClones in the single layout", selected: single,
			gates: []string{"OptimizedGitClones"}, wantErr: notSupported("OptimizedGitClones")},

		// One controller's gate on another controller's Deployment.
		{name: "helm gate on kustomize", selected: []string{"kustomize"},
			gates: []string{"OOMWatch"}, wantErr: notSupported("OOMWatch")},
		{name: "kustomize gate on source", selected: []string{"source"},
			gates: []string{"ExternalArtifact"}, wantErr: notSupported("ExternalArtifact")},
		{name: "image-automation gate on kustomize", selected: []string{"kustomize"},
			gates: []string{"GitForcePushBranch"}, wantErr: notSupported("GitForcePushBranch")},
		{name: "kustomize gate on helm", selected: []string{"helm"},
			gates: []string{"StrictPostBuildSubstitutions"}, wantErr: notSupported("StrictPostBuildSubstitutions")},
		{name: "config watchers on image-automation", selected: []string{"image-automation"},
			gates: []string{"DisableConfigWatchers"}, wantErr: notSupported("DisableConfigWatchers")},
		{name: "one process, gates of two owners", selected: []string{"source", "kustomize", "notification"},
			gates: []string{"ExternalArtifact", "CacheSecretsAndConfigMaps"}},
		{name: "the UI alone takes no gate", selected: []string{"ui"},
			gates: []string{"CacheSecretsAndConfigMaps"}, wantErr: notSupported("CacheSecretsAndConfigMaps")},

		// Unknown gates: a misspelling, and the first of several by name.
		{name: "misspelt", selected: []string{"kustomize"},
			gates: []string{"StrictPostBuildSubstitution"}, wantErr: notSupported("StrictPostBuildSubstitution")},
		{name: "several unknown", selected: []string{"kustomize"},
			gates: []string{"Zeta", "Alpha", "ExternalArtifact"}, wantErr: notSupported("Alpha")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, value := range []bool{true, false} {
				gates := map[string]bool{}
				for _, g := range tt.gates {
					gates[g] = value
				}
				got := ""
				if err := checkFeatureGates(gates, tt.selected); err != nil {
					got = err.Error()
				}
				if got != tt.wantErr {
					t.Errorf("%v=%t on %v: error %q, want %q", tt.gates, value, tt.selected, got, tt.wantErr)
				}
			}
		})
	}
	o := DefaultOptions()
	o.Controllers, o.FeatureGates = []string{"kustomize"}, map[string]bool{"NoSuchGate": true}
	if _, err := o.Selected(); err == nil || err.Error() != notSupported("NoSuchGate") {
		t.Errorf("Selected with an unknown gate: %v, want %q", err, notSupported("NoSuchGate"))
	}
}

func TestParseGroupKinds(t *testing.T) {
	tests := []struct {
		in      []string
		want    []schema.GroupKind
		wantErr string
	}{
		{in: nil, want: []schema.GroupKind{}},
		{in: []string{"rbac.authorization.k8s.io/Role"}, want: []schema.GroupKind{{Group: "rbac.authorization.k8s.io", Kind: "Role"}}},
		{
			in:   []string{"rbac.authorization.k8s.io/Role", "some.group.io/SomeResource", " apps/Deployment "},
			want: []schema.GroupKind{{Group: "rbac.authorization.k8s.io", Kind: "Role"}, {Group: "some.group.io", Kind: "SomeResource"}, {Group: "apps", Kind: "Deployment"}},
		},
		{in: []string{"ConfigMap"}, want: []schema.GroupKind{{Kind: "ConfigMap"}}},
		{in: []string{"/ServiceAccount"}, want: []schema.GroupKind{{Kind: "ServiceAccount"}}},
		{in: []string{"Role.rbac.authorization.k8s.io"}, wantErr: "write rbac.authorization.k8s.io/Role"},
		{in: []string{"rbac.authorization.k8s.io/"}, wantErr: "is not group/Kind"},
		{in: []string{"a/b/C"}, wantErr: "is not group/Kind"},
		{in: []string{""}, wantErr: "is not group/Kind"},
	}
	for _, tt := range tests {
		got, err := parseGroupKinds(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%q: error %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tt.in, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%q (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestEventsAddrRoles(t *testing.T) {
	tests := []struct {
		name                 string
		selected             []string
		eventsAddr, listenAt string
		wantListen, wantSend string
		wantErr              bool
	}{
		{name: "alone, Flux's default", selected: []string{"notification"}, wantListen: ":9090"},
		{name: "alone, --events-addr listens", selected: []string{"notification"}, eventsAddr: ":9191", wantListen: ":9191"},
		{name: "alone, --events-listen-addr wins", selected: []string{"notification"}, eventsAddr: ":9191", listenAt: ":9292", wantListen: ":9292"},
		{name: "alone, a URL is refused", selected: []string{"notification"}, eventsAddr: fluxEventsURL, wantErr: true},
		{
			name: "single layout: sends to the URL, listens beside artifacts", selected: []string{"source", "kustomize", "notification"},
			eventsAddr: fluxEventsURL, listenAt: ":9091", wantListen: ":9091", wantSend: fluxEventsURL,
		},
		{name: "beside source, default", selected: []string{"source", "notification"}, eventsAddr: fluxEventsURL, wantListen: ":9091", wantSend: fluxEventsURL},
		{name: "beside kustomize, default", selected: []string{"kustomize", "notification"}, wantListen: ":9090"},
		{name: "kustomize alone sends", selected: []string{"kustomize"}, eventsAddr: fluxEventsURL, wantSend: fluxEventsURL},
	}
	for _, tt := range tests {
		o := DefaultOptions()
		o.EventsAddr, o.EventsListenAddr = tt.eventsAddr, tt.listenAt
		if send := eventsWebhook(&o, tt.selected); send != tt.wantSend {
			t.Errorf("%s: sends to %q, want %q", tt.name, send, tt.wantSend)
		}
		if !contains(tt.selected, "notification") {
			continue
		}
		listen, err := eventsListenAddr(&o, tt.selected)
		if (err != nil) != tt.wantErr || listen != tt.wantListen {
			t.Errorf("%s: listens on %q (%v), want %q (error %t)", tt.name, listen, err, tt.wantListen, tt.wantErr)
		}
	}
}

// TestFeatureGateValuesParseAsFlux: --feature-gates reads its values as
// Flux's controllers do (component-base's MapStringBool, strconv.ParseBool):
// 1, t and TRUE are true, repeated flags add up, and a pair without a value
// or with a word that is no bool is refused.
func TestFeatureGateValuesParseAsFlux(t *testing.T) {
	for _, tt := range []struct {
		name    string
		args    []string
		want    map[string]bool
		wantErr string
	}{
		{"true and false", []string{"--feature-gates=A=true,B=false"}, map[string]bool{"A": true, "B": false}, ""},
		{"ParseBool's words", []string{"--feature-gates=A=1,B=t,C=TRUE,D=0,E=F"},
			map[string]bool{"A": true, "B": true, "C": true, "D": false, "E": false}, ""},
		{"repeated flags add up", []string{"--feature-gates=A=true", "--feature-gates=B=true"}, map[string]bool{"A": true, "B": true}, ""},
		{"spaces and empty pairs", []string{"--feature-gates= A = true ,,"}, map[string]bool{"A": true}, ""},
		{"no value", []string{"--feature-gates=A"}, nil, "malformed pair, expect string=bool"},
		{"not a bool", []string{"--feature-gates=A=yes"}, nil, "invalid value of A: yes"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := DefaultOptions()
			fs := pflag.NewFlagSet("weir-controller", pflag.ContinueOnError)
			got.AddFlags(fs)
			err := fs.Parse(tt.args)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got.FeatureGates); diff != "" {
				t.Errorf("gates (-want +got):\n%s", diff)
			}
		})
	}
}
