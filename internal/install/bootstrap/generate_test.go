package bootstrap

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/weir-gitops/weir/internal/install/manifests"
	"github.com/weir-gitops/weir/internal/version"
)

// syncOptions are validated options for the sync manifest tests.
func syncOptions(t *testing.T, o Options) Options {
	t.Helper()
	if err := o.validate(); err != nil {
		t.Fatal(err)
	}
	return o
}

func TestSyncManifest(t *testing.T) {
	tests := []struct {
		name       string
		opts       Options
		withSecret bool
		golden     string
		wantPath   string
	}{
		{
			name: "ssh with a path",
			opts: Options{
				URL: "ssh://git@github.com/acme/fleet.git", Branch: "main", Path: "clusters/dev",
				Components: manifests.Options{Namespace: "flux-system"},
			},
			withSecret: true,
			golden:     "gotk-sync-ssh-path.yaml",
			wantPath:   "./clusters/dev",
		},
		{
			name: "repository root with custom settings",
			opts: Options{
				URL: "https://git.example.com/acme/fleet.git", Branch: "release", TokenAuth: true, Password: "x",
				Interval: 5 * time.Minute, SecretName: "git-credentials",
				Components: manifests.Options{Namespace: "gitops"},
			},
			withSecret: true,
			golden:     "gotk-sync-root.yaml",
			wantPath:   "./",
		},
		{
			name: "submodules and sparse checkout",
			opts: Options{
				URL: "ssh://git@github.com/acme/fleet.git", Branch: "main", Path: "clusters/dev",
				RecurseSubmodules: true, SparseCheckout: []string{"clusters", "infrastructure"},
				Components: manifests.Options{Namespace: "flux-system"},
			},
			withSecret: true,
			golden:     "gotk-sync-sparse.yaml",
			wantPath:   "./clusters/dev",
		},
		{
			name: "without secret",
			opts: Options{
				URL: "ssh://git@github.com/acme/fleet.git", Branch: "main", Path: "clusters/dev",
				Components: manifests.Options{Namespace: "flux-system"},
			},
			golden:   "gotk-sync-no-secret.yaml",
			wantPath: "./clusters/dev",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := syncOptions(t, tt.opts)
			got, err := syncManifest(&o, tt.withSecret)
			if err != nil {
				t.Fatal(err)
			}
			assertGolden(t, tt.golden, got)
			if !strings.HasPrefix(string(got), syncHeader) {
				t.Errorf("gotk-sync.yaml does not start with %q", syncHeader)
			}

			objs, err := manifests.Decode(got)
			if err != nil {
				t.Fatalf("decoding gotk-sync.yaml: %v", err)
			}
			if len(objs) != 2 {
				t.Fatalf("gotk-sync.yaml holds %d objects, want 2", len(objs))
			}
			repo, ks := objs[0], objs[1]
			ns := o.Components.Namespace
			checkIdentity(t, repo, "source.toolkit.fluxcd.io/v1", "GitRepository", ns)
			checkIdentity(t, ks, "kustomize.toolkit.fluxcd.io/v1", "Kustomization", ns)

			wantRepoSpec := map[string]any{
				"url":      o.URL,
				"interval": o.Interval.String(),
				"ref":      map[string]any{"branch": o.Branch},
			}
			if tt.withSecret {
				wantRepoSpec["secretRef"] = map[string]any{"name": o.SecretName}
			}
			if o.RecurseSubmodules {
				wantRepoSpec["recurseSubmodules"] = true
			}
			for _, d := range o.SparseCheckout {
				sparse, _ := wantRepoSpec["sparseCheckout"].([]any)
				wantRepoSpec["sparseCheckout"] = append(sparse, d)
			}
			if diff := cmp.Diff(wantRepoSpec, repo.Object["spec"]); diff != "" {
				t.Errorf("GitRepository spec (-want +got):\n%s", diff)
			}
			wantKsSpec := map[string]any{
				"interval":  "10m0s",
				"path":      tt.wantPath,
				"prune":     true,
				"sourceRef": map[string]any{"kind": "GitRepository", "name": "flux-system"},
			}
			if diff := cmp.Diff(wantKsSpec, ks.Object["spec"]); diff != "" {
				t.Errorf("Kustomization spec (-want +got):\n%s", diff)
			}
			for _, u := range objs {
				if _, ok := u.Object["status"]; ok {
					t.Errorf("%s carries a status", u.GetKind())
				}
				if _, ok, _ := unstructured.NestedFieldNoCopy(u.Object, "metadata", "creationTimestamp"); ok {
					t.Errorf("%s carries metadata.creationTimestamp", u.GetKind())
				}
			}
		})
	}
}

// checkIdentity checks an object's apiVersion, kind, name and namespace.
func checkIdentity(t *testing.T, u *unstructured.Unstructured, apiVersion, kind, ns string) {
	t.Helper()
	got := [4]string{u.GetAPIVersion(), u.GetKind(), u.GetName(), u.GetNamespace()}
	want := [4]string{apiVersion, kind, SyncName, ns}
	if got != want {
		t.Errorf("object is %v, want %v", got, want)
	}
}

func TestKustomizationManifest(t *testing.T) {
	const head = "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n"
	tests := []struct {
		name  string
		files []string
		want  string
	}{
		{
			name:  "bootstrap's files sorted",
			files: []string{SyncFile, ComponentsFile},
			want:  head + "- gotk-components.yaml\n- gotk-sync.yaml\n",
		},
		{
			name:  "kustomization.yaml excluded",
			files: []string{KustomizationFile, SyncFile, ComponentsFile},
			want:  head + "- gotk-components.yaml\n- gotk-sync.yaml\n",
		},
		{
			name:  "non-YAML files excluded, .yml kept",
			files: []string{"README.md", "patch.yml", ComponentsFile, "notes.yaml.bak", ".yaml", "values.json"},
			want:  head + "- gotk-components.yaml\n- patch.yml\n",
		},
		{
			name: "no files",
			want: head,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(kustomizationManifest(tt.files))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("kustomization.yaml (-want +got):\n%s", diff)
			}
		})
	}
}

func TestComponentsManifest(t *testing.T) {
	o := manifests.DefaultOptions("v1.2.3")
	got, err := componentsManifest(o)
	if err != nil {
		t.Fatal(err)
	}
	selected, _, err := o.Selected()
	if err != nil {
		t.Fatal(err)
	}
	header := manifests.Header(version.Version, selected)
	if !strings.HasPrefix(string(got), header) {
		t.Errorf("gotk-components.yaml does not start with the header %q:\n%s", header, firstLines(got, 5))
	}
	objs, err := manifests.Decode(got)
	if err != nil {
		t.Fatalf("decoding gotk-components.yaml: %v", err)
	}
	have := map[string]bool{}
	for _, u := range objs {
		have[u.GetKind()+" "+u.GetNamespace()+"/"+u.GetName()] = true
	}
	for _, want := range []string{
		"Namespace /flux-system",
		"CustomResourceDefinition /gitrepositories.source.toolkit.fluxcd.io",
		"CustomResourceDefinition /kustomizations.kustomize.toolkit.fluxcd.io",
		"Deployment flux-system/source-controller",
		"Deployment flux-system/kustomize-controller",
	} {
		if !have[want] {
			t.Errorf("gotk-components.yaml lacks %s", want)
		}
	}
}

func TestComponentsManifestErrors(t *testing.T) {
	tests := []struct {
		name string
		opts func(*manifests.Options)
		err  string
	}{
		{
			name: "unknown component",
			opts: func(o *manifests.Options) { o.Components = append(o.Components, "tea-controller") },
			err:  `unknown component "tea-controller"`,
		},
		{
			name: "no component",
			opts: func(o *manifests.Options) { o.Components = nil },
			err:  "no component weir can run was selected",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := manifests.DefaultOptions("v1.2.3")
			tt.opts(&o)
			_, err := componentsManifest(o)
			wantErr(t, err, tt.err)
		})
	}
}

func firstLines(data []byte, n int) string {
	lines := strings.SplitN(string(data), "\n", n+1)
	return strings.Join(lines[:min(n, len(lines))], "\n")
}
