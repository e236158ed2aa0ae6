package helmchart

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/gitserver"
	"github.com/weir-gitops/weir/internal/devenv/testenv/helmserver"
	"github.com/weir-gitops/weir/internal/devenv/testenv/s3server"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
)

// appChart is a chart directory in Git with a file:// dependency and one
// from a repository at repoURL.
func appChart(repoURL string) map[string]string {
	return map[string]string{
		"charts/app/Chart.yaml": "apiVersion: v2\nname: app\nversion: 0.1.0\ndependencies:\n" +
			"- name: lib\n  version: \"~0.2\"\n  repository: file://../lib\n" +
			"- name: redis\n  version: \">=17.0.0 <18.0.0\"\n  repository: " + repoURL + "/\n",
		"charts/app/values.yaml":       "greeting: hello\nimage:\n  tag: v1\n  pullPolicy: IfNotPresent\n",
		"charts/app/templates/cm.yaml": "kind: ConfigMap\n",
		"charts/lib/Chart.yaml":        "apiVersion: v2\nname: lib\nversion: 0.2.3\ntype: library\n",
		"charts/lib/templates/_x.tpl":  "{{- define \"lib.x\" -}}x{{- end -}}\n",
		"envs/prod.yaml":               "image:\n  tag: v2\nreplicas: 3\n",
	}
}

// TestGitChartWithDependencies packages a chart from a GitRepository: a
// file:// dependency from the same repository, a dependency from an
// authenticated Helm repository matched to its HelmRepository (and
// credentials) by URL, and values files merged in order.
func TestGitChartWithDependencies(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	helm := helmserver.New(t, helmserver.Options{Username: "user", Password: "pass"})
	helm.AddChart(t, helmserver.NewChart("redis", "17.3.0", "7.0"))
	helm.AddChart(t, helmserver.NewChart("redis", "18.1.0", "7.2"))
	git := gitserver.New(t, gitserver.Options{})
	git.InitRepo(t, "app.git")
	git.Commit(t, "app.git", gitserver.Commit{Files: appChart(helm.URL())})
	env.Create(t, basicAuthSecret(ns, "helm-auth", "pass"), newHelmRepo(ns, "bitnami", helm.URL(), "helm-auth"),
		newGitRepo(ns, git.HTTPURL("app.git")))

	hc := newChart(ns, "app", sourcev1.GitRepositoryKind, "app", "./charts/app", "")
	hc.Spec.ValuesFiles = []string{"charts/app/values.yaml", "envs/prod.yaml"}
	env.Create(t, hc)
	waitVersion(t, env, hc, "0.1.0+1")

	msg := "packaged 'app' chart with version '0.1.0+1' and merged values files [charts/app/values.yaml envs/prod.yaml]"
	if ready := conditions.Get(hc, meta.ReadyCondition); ready.Message != msg || ready.Reason != sourcev1.ChartPackageSucceededReason {
		t.Errorf("Ready %s %q, want %q", ready.Reason, ready.Message, msg)
	}
	if d := cmp.Diff(hc.Spec.ValuesFiles, hc.Status.ObservedValuesFiles); d != "" {
		t.Errorf("observedValuesFiles (-want +got):\n%s", d)
	}
	files := testenv.ArtifactFiles(t, testenv.DownloadArtifact(t, hc.Status.Artifact))
	for _, f := range []string{"app/charts/lib/Chart.yaml", "app/charts/redis/Chart.yaml", "app/templates/cm.yaml"} {
		if _, ok := files[f]; !ok {
			t.Errorf("packaged chart lacks %s; has %v", f, keys(files))
		}
	}
	if !strings.Contains(files["app/charts/redis/Chart.yaml"], "version: 17.3.0") {
		t.Errorf("redis dependency: %q", files["app/charts/redis/Chart.yaml"])
	}
	var values map[string]any
	if err := yaml.Unmarshal([]byte(files["app/values.yaml"]), &values); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"greeting": "hello", "replicas": float64(3), "image": map[string]any{"tag": "v2", "pullPolicy": "IfNotPresent"}}
	if d := cmp.Diff(want, values); d != "" {
		t.Errorf("merged values (-want +got):\n%s", d)
	}
	env.AssertEvent(t, hc, sourcev1.ChartPackageSucceededReason, msg)
}

// TestValuesFilesMissing fails on a missing values file (stalled until the
// spec changes) and skips it with ignoreMissingValuesFiles.
func TestValuesFilesMissing(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	git := gitserver.New(t, gitserver.Options{})
	git.InitRepo(t, "app.git")
	git.Commit(t, "app.git", gitserver.Commit{Files: map[string]string{
		"chart/Chart.yaml": "apiVersion: v2\nname: app\nversion: 1.0.0\n", "chart/values.yaml": "a: 1\n", "prod.yaml": "a: 2\n",
	}})
	env.Create(t, newGitRepo(ns, git.HTTPURL("app.git")))
	hc := newChart(ns, "app", sourcev1.GitRepositoryKind, "app", "chart", "")
	hc.Spec.ValuesFiles = []string{"prod.yaml", "missing.yaml"}
	env.Create(t, hc)
	ready := env.WaitForFailure(t, hc, "ValuesFilesError")
	if !strings.Contains(ready.Message, "values files merge error: no values file found at path '/missing.yaml' (reference 'missing.yaml')") ||
		!conditions.IsTrue(hc, meta.StalledCondition) || !conditions.IsTrue(hc, sourcev1.BuildFailedCondition) {
		t.Errorf("Ready %q, conditions %v", ready.Message, hc.Status.Conditions)
	}

	env.Update(t, hc, func() { hc.Spec.IgnoreMissingValuesFiles = true })
	waitVersion(t, env, hc, "1.0.0+2")
	if d := cmp.Diff([]string{"prod.yaml"}, hc.Status.ObservedValuesFiles); d != "" {
		t.Errorf("observedValuesFiles (-want +got):\n%s", d)
	}
	if conditions.Get(hc, sourcev1.BuildFailedCondition) != nil {
		t.Errorf("BuildFailed left behind: %v", hc.Status.Conditions)
	}
	files := testenv.ArtifactFiles(t, testenv.DownloadArtifact(t, hc.Status.Artifact))
	if files["app/values.yaml"] != "a: 2\n" {
		t.Errorf("values.yaml = %q", files["app/values.yaml"])
	}
}

// TestReconcileStrategyRevision stamps the commit on the version and
// follows a new commit at once.
func TestReconcileStrategyRevision(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	git := gitserver.New(t, gitserver.Options{})
	git.InitRepo(t, "app.git")
	first := git.Commit(t, "app.git", gitserver.Commit{Files: map[string]string{"chart/Chart.yaml": "apiVersion: v2\nname: app\nversion: 1.0.0\n"}})
	repo := newGitRepo(ns, git.HTTPURL("app.git"))
	env.Create(t, repo)
	hc := newChart(ns, "app", sourcev1.GitRepositoryKind, "app", "chart", "")
	hc.Spec.ReconcileStrategy = sourcev1.ReconcileStrategyRevision
	env.Create(t, hc)
	waitVersion(t, env, hc, "1.0.0+"+first[:12])
	if hc.Status.ObservedSourceArtifactRevision != "main@sha1:"+first {
		t.Errorf("observedSourceArtifactRevision %q", hc.Status.ObservedSourceArtifactRevision)
	}

	second := git.Commit(t, "app.git", gitserver.Commit{Files: map[string]string{"chart/templates/cm.yaml": "kind: ConfigMap\n"}})
	env.RequestReconcile(t, repo)
	waitVersion(t, env, hc, "1.0.0+"+second[:12])
	if hc.Status.ObservedSourceArtifactRevision != "main@sha1:"+second {
		t.Errorf("observedSourceArtifactRevision %q", hc.Status.ObservedSourceArtifactRevision)
	}
	if p := hc.Status.Artifact.Path; p != "helmchart/"+ns+"/app/app-1.0.0+"+second[:12]+".tgz" {
		t.Errorf("artifact path %s", p)
	}
}

// TestWaitsForSource reports a missing source, then waits (Reconciling,
// not Stalled) for one without an artifact, and builds once it has one.
func TestWaitsForSource(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	hc := newChart(ns, "app", sourcev1.GitRepositoryKind, "app", "chart", "")
	env.Create(t, hc)
	ready := env.WaitForFailure(t, hc, sourceUnavailableReason)
	if !strings.HasPrefix(ready.Message, "failed to get source: ") {
		t.Errorf("Ready %q", ready.Message)
	}

	git := gitserver.New(t, gitserver.Options{})
	git.InitRepo(t, "app.git")
	git.Commit(t, "app.git", gitserver.Commit{Files: map[string]string{"chart/Chart.yaml": "apiVersion: v2\nname: app\nversion: 1.0.0\n"}})
	repo := newGitRepo(ns, git.HTTPURL("app.git"))
	repo.Spec.Suspend = true
	env.Create(t, repo)
	env.RequestReconcile(t, hc)
	ready = env.WaitForFailure(t, hc, noSourceArtifactReason)
	if ready.Message != "no artifact available for GitRepository source 'app'" ||
		!conditions.IsTrue(hc, meta.ReconcilingCondition) || conditions.IsTrue(hc, meta.StalledCondition) {
		t.Errorf("Ready %q, conditions %v", ready.Message, hc.Status.Conditions)
	}

	env.Update(t, repo, func() { repo.Spec.Suspend = false })
	waitVersion(t, env, hc, "1.0.0")
	if ready := conditions.Get(hc, meta.ReadyCondition); ready.Message != "packaged 'app' chart with version '1.0.0'" {
		t.Errorf("Ready %q", ready.Message)
	}
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestBucketChartRevision packages a chart from a Bucket with
// reconcileStrategy Revision: the version carries the first 12 hex digits
// of the Bucket's sha256 revision, and a changed object makes a new one.
func TestBucketChartRevision(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	s3 := s3server.New(t, s3server.Options{})
	s3.CreateBucket(t, "charts")
	s3.PutObject(t, "charts", "app/Chart.yaml", "apiVersion: v2\nname: app\nversion: 2.0.0\n")
	b := &sourcev1.Bucket{
		ObjectMeta: metav1.ObjectMeta{Name: "charts", Namespace: ns},
		Spec: sourcev1.BucketSpec{Provider: sourcev1.BucketProviderGeneric, BucketName: "charts", Endpoint: s3.Endpoint(),
			Insecure: true, Interval: metav1.Duration{Duration: time.Hour}},
	}
	env.Create(t, b)
	hc := newChart(ns, "app", sourcev1.BucketKind, "charts", "app", "")
	hc.Spec.ReconcileStrategy = sourcev1.ReconcileStrategyRevision
	env.Create(t, hc)
	env.WaitForReady(t, hc, nil)
	first := hc.Status.ObservedSourceArtifactRevision
	if !strings.HasPrefix(first, "sha256:") || hc.Status.Artifact.Revision != "2.0.0+"+first[7:19] {
		t.Fatalf("revision %s from bucket revision %s", hc.Status.Artifact.Revision, first)
	}

	s3.PutObject(t, "charts", "app/values.yaml", "a: 1\n")
	env.RequestReconcile(t, b)
	env.WaitForReady(t, hc, func() (bool, string) {
		return hc.Status.ObservedSourceArtifactRevision != first, "bucket revision not followed yet"
	})
	if rev := hc.Status.ObservedSourceArtifactRevision; hc.Status.Artifact.Revision != "2.0.0+"+rev[7:19] {
		t.Errorf("revision %s from bucket revision %s", hc.Status.Artifact.Revision, rev)
	}
}
