package artifactgenerator

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	sourceextensionsv1beta1 "github.com/weir-gitops/weir/api/sourceextensions/v1beta1"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/gitserver"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
	"github.com/weir-gitops/weir/internal/source/artifact"
	"github.com/weir-gitops/weir/internal/source/controller/gitrepository"
	"github.com/weir-gitops/weir/internal/source/generate"
	"github.com/weir-gitops/weir/internal/source/git"
)

var (
	// storage is the artifact store both reconcilers share, as in weir's
	// single layout.
	storage *artifact.Storage
	scratch string
)

func TestMain(m *testing.M) {
	testenv.Main(m, testenv.APIServerOnly, func(o *testenv.Options) { o.Setup = startControllers })
}

// startControllers runs the GitRepository and ArtifactGenerator reconcilers
// in one manager, with --no-cross-namespace-refs and a small artifact
// bound for the hostile-source tests.
func startControllers(ctx context.Context, env *testenv.Env) (err error) {
	if scratch, err = os.MkdirTemp("", "weir-ag-scratch-"); err != nil {
		return err
	}
	go func() { <-ctx.Done(); os.RemoveAll(scratch) }()
	if storage, err = testenv.StartArtifactStorage(ctx); err != nil {
		return err
	}
	return testenv.StartManager(ctx, env, func(mgr ctrl.Manager) error {
		repos := &gitrepository.Reconciler{Deps: testenv.SourceDeps(mgr, storage), Git: git.NewClient()}
		if err := repos.SetupWithManager(mgr, testenv.FastQueue); err != nil {
			return err
		}
		r := &Reconciler{
			Deps:                 testenv.SourceDeps(mgr, storage),
			Fetcher:              &artifact.Fetcher{Retries: 1},
			Build:                generate.Options{MaxSize: 1 << 20},
			NoCrossNamespaceRefs: true,
			RequeueDependency:    time.Second,
			TempDir:              scratch,
		}
		return r.SetupWithManager(mgr, testenv.FastQueue)
	})
}

// monorepo is a repository shaped like Flux's example: infrastructure and
// apps with a base and one directory per environment.
var monorepo = map[string]string{
	"infrastructure/controllers/kustomization.yaml": "resources: [cm.yaml]\n",
	"infrastructure/controllers/cm.yaml":            configMap("controllers"),
	"apps/base/podinfo/kustomization.yaml":          "resources: [cm.yaml]\n",
	"apps/base/podinfo/cm.yaml":                     configMap("podinfo"),
	"apps/staging/kustomization.yaml":               "resources: [../base/podinfo]\n",
	"apps/production/kustomization.yaml":            "resources: [../base/podinfo]\n",
	"README.md":                                     "# fleet\n",
}

func configMap(name string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\ndata:\n  a: \"1\"\n"
}

// fixture is a Git server with the monorepo, a namespace, and its
// GitRepository once Ready.
type fixture struct {
	env  *testenv.Env
	ns   string
	srv  *gitserver.Server
	repo *sourcev1.GitRepository
	sha  string
}

func newFixture(t *testing.T, files map[string]string) *fixture {
	t.Helper()
	env := testenv.Get(t)
	f := &fixture{env: env, ns: env.Namespace(t), srv: gitserver.New(t, gitserver.Options{})}
	f.srv.InitRepo(t, "fleet.git")
	f.sha = f.srv.Commit(t, "fleet.git", gitserver.Commit{Files: files, Message: "first"})
	f.repo = &sourcev1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Name: "flux-system", Namespace: f.ns},
		Spec: sourcev1.GitRepositorySpec{
			URL: f.srv.HTTPURL("fleet.git"), Interval: metav1.Duration{Duration: time.Hour},
			Reference: &sourcev1.GitRepositoryRef{Branch: "main"},
		},
	}
	env.Create(t, f.repo)
	f.waitRepo(t)
	return f
}

// push commits c and waits for the GitRepository to store it.
func (f *fixture) push(t *testing.T, c gitserver.Commit) {
	t.Helper()
	f.sha = f.srv.Commit(t, "fleet.git", c)
	f.env.RequestReconcile(t, f.repo)
	f.waitRepo(t)
}

func (f *fixture) waitRepo(t *testing.T) {
	t.Helper()
	f.env.WaitForReady(t, f.repo, func() (bool, string) {
		return f.repo.Status.Artifact.Revision == "main@sha1:"+f.sha, "revision not stored yet"
	})
}

// generator is Flux's example's ArtifactGenerator: infrastructure, and the
// apps' base with one environment.
func (f *fixture) generator(env string) *sourceextensionsv1beta1.ArtifactGenerator {
	return &sourceextensionsv1beta1.ArtifactGenerator{
		ObjectMeta: metav1.ObjectMeta{Name: "fleet", Namespace: f.ns},
		Spec: sourceextensionsv1beta1.ArtifactGeneratorSpec{
			Sources: []sourceextensionsv1beta1.SourceReference{{Alias: "fleet", Kind: sourcev1.GitRepositoryKind, Name: "flux-system"}},
			OutputArtifacts: []sourceextensionsv1beta1.OutputArtifact{
				{Name: "infrastructure", Copy: []sourceextensionsv1beta1.CopyOperation{
					{From: "@fleet/infrastructure/**", To: "@artifact/"},
				}},
				{Name: "apps", Revision: "@fleet", OriginRevision: "@fleet", Copy: []sourceextensionsv1beta1.CopyOperation{
					{From: "@fleet/apps/base/**", To: "@artifact/base/"},
					{From: "@fleet/apps/" + env + "/**", To: "@artifact/" + env + "/"},
				}},
			},
		},
	}
}

// waitGenerated waits until ag is Ready at its generation with two
// artifacts and returns the ExternalArtifacts by name.
func (f *fixture) waitGenerated(t *testing.T, ag *sourceextensionsv1beta1.ArtifactGenerator, more func(map[string]*sourcev1.ExternalArtifact) (bool, string)) map[string]*sourcev1.ExternalArtifact {
	t.Helper()
	var eas map[string]*sourcev1.ExternalArtifact
	f.env.WaitForReady(t, ag, func() (bool, string) {
		if len(ag.Status.Inventory) != 2 {
			return false, "inventory not complete yet"
		}
		var list sourcev1.ExternalArtifactList
		if err := f.env.Client.List(context.Background(), &list, client.InNamespace(f.ns)); err != nil {
			return false, err.Error()
		}
		eas = map[string]*sourcev1.ExternalArtifact{}
		for i := range list.Items {
			eas[list.Items[i].Name] = &list.Items[i]
		}
		if more != nil {
			return more(eas)
		}
		return true, ""
	})
	return eas
}

func files(t *testing.T, ea *sourcev1.ExternalArtifact) map[string]string {
	t.Helper()
	return testenv.ArtifactFiles(t, testenv.DownloadArtifact(t, ea.Status.Artifact))
}

// TestGeneratesExternalArtifacts runs Flux's example's generator on a Git
// monorepo: two ExternalArtifacts with the copied files, Flux's labels,
// sourceRef, revisions and conditions; then a commit under apps/ moves
// only the apps artifact, and the infrastructure ExternalArtifact is not
// even written.
func TestGeneratesExternalArtifacts(t *testing.T) {
	f := newFixture(t, monorepo)
	ag := f.generator("staging")
	f.env.Create(t, ag)
	eas := f.waitGenerated(t, ag, nil)

	if got := conditions.Get(ag, meta.ReadyCondition); got.Reason != meta.SucceededReason || got.Message != "reconciliation succeeded, generated 2 artifact(s)" {
		t.Errorf("Ready = %s %q", got.Reason, got.Message)
	}
	if !strings.HasPrefix(ag.Status.ObservedSourcesDigest, "sha256:") {
		t.Errorf("observedSourcesDigest = %q", ag.Status.ObservedSourcesDigest)
	}
	infra, apps := eas["infrastructure"], eas["apps"]
	if infra == nil || apps == nil {
		t.Fatalf("ExternalArtifacts: %v", eas)
	}
	wantRef := &meta.NamespacedObjectKindReference{APIVersion: "source.extensions.fluxcd.io/v1beta1", Kind: "ArtifactGenerator", Name: "fleet", Namespace: f.ns}
	for _, ea := range []*sourcev1.ExternalArtifact{infra, apps} {
		if d := cmp.Diff(wantRef, ea.Spec.SourceRef); d != "" {
			t.Errorf("%s sourceRef (-want +got):\n%s", ea.Name, d)
		}
		if ea.Labels[sourceextensionsv1beta1.GeneratorLabel] != string(ag.UID) || ea.Labels["app.kubernetes.io/managed-by"] != "source-watcher" {
			t.Errorf("%s labels = %v", ea.Name, ea.Labels)
		}
		ready := conditions.Get(ea, meta.ReadyCondition)
		if ready == nil || ready.Status != metav1.ConditionTrue || ready.Reason != meta.SucceededReason || ready.Message != "Artifact is ready" {
			t.Errorf("%s Ready = %+v", ea.Name, ready)
		}
		a := ea.Status.Artifact
		if want := "externalartifact/" + f.ns + "/" + ea.Name + "/" + strings.TrimPrefix(a.Digest, "sha256:") + ".tar.gz"; a.Path != want {
			t.Errorf("%s path = %s, want %s", ea.Name, a.Path, want)
		}
	}
	if a := infra.Status.Artifact; a.Revision != "latest@"+a.Digest || a.Metadata != nil {
		t.Errorf("infrastructure revision %s, metadata %v", a.Revision, a.Metadata)
	}
	if a := apps.Status.Artifact; a.Revision != "main@sha1:"+f.sha || a.Metadata["org.opencontainers.image.revision"] != "main@sha1:"+f.sha {
		t.Errorf("apps revision %s metadata %v, want the source's", a.Revision, a.Metadata)
	}
	wantInfra := map[string]string{
		"controllers/kustomization.yaml": monorepo["infrastructure/controllers/kustomization.yaml"],
		"controllers/cm.yaml":            monorepo["infrastructure/controllers/cm.yaml"],
	}
	if d := cmp.Diff(wantInfra, files(t, infra)); d != "" {
		t.Errorf("infrastructure files (-want +got):\n%s", d)
	}
	wantApps := map[string]string{
		"base/podinfo/kustomization.yaml": monorepo["apps/base/podinfo/kustomization.yaml"],
		"base/podinfo/cm.yaml":            monorepo["apps/base/podinfo/cm.yaml"],
		"staging/kustomization.yaml":      monorepo["apps/staging/kustomization.yaml"],
	}
	if d := cmp.Diff(wantApps, files(t, apps)); d != "" {
		t.Errorf("apps files (-want +got):\n%s", d)
	}
	f.env.AssertEvent(t, ag, "Ready", "reconciliation succeeded, generated 2 artifact(s)")

	// A commit under apps/ only: the apps artifact moves, infrastructure
	// keeps its file, digest and revision, and its object is not written.
	f.push(t, gitserver.Commit{Files: map[string]string{"apps/staging/values.yaml": "replicas: 2\n"}})
	eas = f.waitGenerated(t, ag, func(eas map[string]*sourcev1.ExternalArtifact) (bool, string) {
		return eas["apps"].Status.Artifact.Revision == "main@sha1:"+f.sha, "apps not regenerated yet"
	})
	if eas["infrastructure"].ResourceVersion != infra.ResourceVersion {
		t.Errorf("infrastructure was written again: resourceVersion %s -> %s", infra.ResourceVersion, eas["infrastructure"].ResourceVersion)
	}
	if got, want := eas["infrastructure"].Status.Artifact.Digest, infra.Status.Artifact.Digest; got != want {
		t.Errorf("infrastructure digest %s -> %s", want, got)
	}
	if _, ok := files(t, eas["apps"])["staging/values.yaml"]; !ok {
		t.Error("the new apps file is not in the artifact")
	}
}

// TestPathPatternAddsAndRemovesApps generates one artifact per app
// directory, named from the capture, and deletes the ExternalArtifact and
// files of an app whose directory goes away.
func TestPathPatternAddsAndRemovesApps(t *testing.T) {
	f := newFixture(t, map[string]string{
		"apps/Frontend/cm.yaml": configMap("frontend"),
		"apps/backend/cm.yaml":  configMap("backend"),
	})
	ag := &sourceextensionsv1beta1.ArtifactGenerator{
		ObjectMeta: metav1.ObjectMeta{Name: "apps", Namespace: f.ns},
		Spec: sourceextensionsv1beta1.ArtifactGeneratorSpec{
			Sources:     []sourceextensionsv1beta1.SourceReference{{Alias: "repo", Kind: sourcev1.GitRepositoryKind, Name: "flux-system"}},
			PathPattern: "@repo/apps/{app}",
			CommonMetadata: &sourceextensionsv1beta1.CommonMetadata{
				Labels: map[string]string{"team": "web"}, Annotations: map[string]string{"owner": "web@example.com"},
			},
			OutputArtifacts: []sourceextensionsv1beta1.OutputArtifact{{
				Name: "app-{app}", Copy: []sourceextensionsv1beta1.CopyOperation{{From: "@repo/apps/{app}/**", To: "@artifact/"}},
			}},
		},
	}
	f.env.Create(t, ag)
	eas := f.waitGenerated(t, ag, nil)
	fe := eas["app-frontend"]
	if fe == nil || eas["app-backend"] == nil {
		t.Fatalf("ExternalArtifacts: %v", keys(eas))
	}
	if fe.Labels["app"] != "frontend" || fe.Labels["team"] != "web" || fe.Annotations["owner"] != "web@example.com" {
		t.Errorf("app-frontend metadata: labels %v annotations %v", fe.Labels, fe.Annotations)
	}
	if d := cmp.Diff(map[string]string{"cm.yaml": configMap("frontend")}, files(t, fe)); d != "" {
		t.Errorf("app-frontend files (-want +got):\n%s", d)
	}

	f.push(t, gitserver.Commit{Files: map[string]string{"apps/cart/cm.yaml": configMap("cart")}, Delete: []string{"apps/backend/cm.yaml"}})
	f.waitGenerated(t, ag, func(eas map[string]*sourcev1.ExternalArtifact) (bool, string) {
		_, added := eas["app-cart"]
		_, left := eas["app-backend"]
		return added && !left, "ExternalArtifacts: " + strings.Join(keys(eas), ",")
	})
	dir := filepath.Join(storage.BasePath(), "externalartifact", f.ns, "app-backend")
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the removed app's files are still stored: %v", err)
	}
}

func keys(m map[string]*sourcev1.ExternalArtifact) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestDriftAndDeletion puts back a generated ExternalArtifact deleted by
// hand, and deletes every generated object and file with the generator.
func TestDriftAndDeletion(t *testing.T) {
	f := newFixture(t, monorepo)
	ag := f.generator("production")
	f.env.Create(t, ag)
	eas := f.waitGenerated(t, ag, nil)
	if err := f.env.Client.Delete(context.Background(), eas["infrastructure"]); err != nil {
		t.Fatal(err)
	}
	f.waitGenerated(t, ag, func(now map[string]*sourcev1.ExternalArtifact) (bool, string) {
		ea, ok := now["infrastructure"]
		return ok && ea.UID != eas["infrastructure"].UID && ea.Status.Artifact != nil, "not put back yet"
	})

	if err := f.env.Client.Delete(context.Background(), ag); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, testenv.DefaultTimeout, func(ctx context.Context) (bool, string) {
		var list sourcev1.ExternalArtifactList
		if err := f.env.Client.List(ctx, &list, client.InNamespace(f.ns)); err != nil {
			return false, err.Error()
		}
		err := f.env.Client.Get(ctx, client.ObjectKeyFromObject(ag), ag)
		return len(list.Items) == 0 && err != nil, "generated objects or the generator still there"
	})
	if _, err := os.Stat(filepath.Join(storage.BasePath(), "externalartifact", f.ns)); err == nil {
		entries, _ := os.ReadDir(filepath.Join(storage.BasePath(), "externalartifact", f.ns))
		if len(entries) > 0 {
			t.Errorf("files left in storage: %v", entries)
		}
	}
}

// TestRefusals: a source in another namespace (--no-cross-namespace-refs),
// a copy that climbs out of the artifact, a tarball bomb under Extract and
// a source that does not exist each end with Flux's reason and a message
// that names the cause, and nothing is generated.
func TestRefusals(t *testing.T) {
	bomb := testenv.TarGz(t, testenv.TarEntry{Name: "big.yaml", Body: strings.Repeat("a", 2<<20)})
	f := newFixture(t, map[string]string{"charts/bomb.tgz": string(bomb), "apps/cm.yaml": configMap("a")})
	src := []sourceextensionsv1beta1.SourceReference{{Alias: "repo", Kind: sourcev1.GitRepositoryKind, Name: "flux-system"}}
	for _, tt := range []struct {
		name    string
		sources []sourceextensionsv1beta1.SourceReference
		copy    sourceextensionsv1beta1.CopyOperation
		reason  string
		stalled bool
		message string
	}{
		{"cross-namespace", []sourceextensionsv1beta1.SourceReference{{Alias: "repo", Kind: "GitRepository", Name: "flux-system", Namespace: "elsewhere"}},
			sourceextensionsv1beta1.CopyOperation{From: "@repo/apps/**", To: "@artifact/"},
			"AccessDenied", true, "cross-namespace reference to source GitRepository/elsewhere/flux-system is not allowed"},
		{"escape", src, sourceextensionsv1beta1.CopyOperation{From: "@repo/apps/cm.yaml", To: "@artifact/../../cm.yaml"},
			"BuildFailed", true, "destination path must not contain '..'"},
		{"tarball bomb", src, sourceextensionsv1beta1.CopyOperation{From: "@repo/charts/bomb.tgz", To: "@artifact/", Strategy: "Extract"},
			"BuildFailed", true, "unpacks to more than 1048576 bytes"},
		{"missing source", []sourceextensionsv1beta1.SourceReference{{Alias: "repo", Kind: "GitRepository", Name: "nowhere"}},
			sourceextensionsv1beta1.CopyOperation{From: "@repo/apps/**", To: "@artifact/"},
			"SourceFetchFailed", false, "get sources failed: unable to get source 'GitRepository/" + f.ns + "/nowhere'"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ag := &sourceextensionsv1beta1.ArtifactGenerator{
				ObjectMeta: metav1.ObjectMeta{Name: strings.ReplaceAll(tt.name, " ", "-"), Namespace: f.ns},
				Spec: sourceextensionsv1beta1.ArtifactGeneratorSpec{Sources: tt.sources, OutputArtifacts: []sourceextensionsv1beta1.OutputArtifact{
					{Name: "out-" + strings.ReplaceAll(tt.name, " ", "-"), Copy: []sourceextensionsv1beta1.CopyOperation{tt.copy}},
				}},
			}
			f.env.Create(t, ag)
			ready := f.env.WaitForFailure(t, ag, tt.reason)
			if !strings.Contains(ready.Message, tt.message) {
				t.Errorf("message %q does not contain %q", ready.Message, tt.message)
			}
			if got := conditions.IsTrue(ag, meta.StalledCondition); got != tt.stalled {
				t.Errorf("Stalled = %v, want %v", got, tt.stalled)
			}
			var ea sourcev1.ExternalArtifact
			if err := f.env.Client.Get(context.Background(), client.ObjectKey{Namespace: f.ns, Name: ag.Spec.OutputArtifacts[0].Name}, &ea); err == nil {
				t.Errorf("an ExternalArtifact was generated: %v", ea.Status.Artifact)
			}
			f.env.AssertEvent(t, ag, tt.reason, ready.Message)
		})
	}
}
