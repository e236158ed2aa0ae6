package helmchart

import (
	"crypto/rand"
	"fmt"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/chart/common"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/helmserver"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
)

// TestVersionSelectors pulls charts from an authenticated repository with
// every kind of spec.version, including the shapes `flux create source
// chart --export` and `flux create hr --chart-version=">6.0.0 <7.0.0"`
// write (only the required fields, the API server's defaults for the
// rest).
func TestVersionSelectors(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	srv := helmserver.New(t, helmserver.Options{Username: "user", Password: "pass"})
	for _, v := range []string{"6.0.1", "6.2.0", "6.3.0-rc.1", "7.0.0"} {
		srv.AddChart(t, helmserver.NewChart("podinfo", v, v))
	}
	env.Create(t, basicAuthSecret(ns, "helm-auth", "pass"), newHelmRepo(ns, "podinfo", srv.URL(), "helm-auth"))

	tests := []struct{ name, version, want string }{
		{name: "exact", version: "6.0.1", want: "6.0.1"},
		{name: "range", version: ">=6.0.0 <6.3.0", want: "6.2.0"},
		{name: "star", version: "*", want: "7.0.0"},
		{name: "prerelease range", version: ">=6.3.0-0 <7.0.0", want: "6.3.0-rc.1"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hc := newChart(ns, fmt.Sprintf("sel-%d", i), sourcev1.HelmRepositoryKind, "podinfo", "podinfo", tt.version)
			env.Create(t, hc)
			waitVersion(t, env, hc, tt.want)
			checkPulled(t, env, hc, "podinfo", tt.want)
		})
	}

	t.Run("unchanged chart is not downloaded again", func(t *testing.T) {
		hc := &sourcev1.HelmChart{}
		if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "sel-0"}, hc); err != nil {
			t.Fatal(err)
		}
		before, digest := srv.Downloads("/podinfo-6.0.1.tgz"), hc.Status.Artifact.Digest
		if before != 1 {
			t.Fatalf("first pull downloaded the chart %d times, want 1", before)
		}
		env.RequestReconcile(t, hc)
		env.WaitForReady(t, hc, nil)
		if n := srv.Downloads("/podinfo-6.0.1.tgz"); n != before || hc.Status.Artifact.Digest != digest {
			t.Errorf("re-reconcile downloaded the chart %d more times, digest %s -> %s", n-before, digest, hc.Status.Artifact.Digest)
		}
	})
	t.Run("flux create source chart --export", func(t *testing.T) {
		hc := createYAML(t, env, ns, `
apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmChart
metadata:
  name: podinfo
spec:
  chart: podinfo
  interval: 1m0s
  reconcileStrategy: ChartVersion
  sourceRef:
    kind: HelmRepository
    name: podinfo
`)
		if hc.Spec.Version != "*" {
			t.Errorf("defaulted version %q, want *", hc.Spec.Version)
		}
		waitVersion(t, env, hc, "7.0.0")
	})
	t.Run("flux create hr chart template", func(t *testing.T) {
		hc := createYAML(t, env, ns, `
apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmChart
metadata:
  name: `+ns+`-podinfo
spec:
  chart: podinfo
  version: '>6.0.0 <7.0.0'
  interval: 1m0s
  sourceRef:
    kind: HelmRepository
    name: podinfo
`)
		waitVersion(t, env, hc, "6.2.0")
	})
	t.Run("missing version", func(t *testing.T) {
		hc := newChart(ns, "missing-version", sourcev1.HelmRepositoryKind, "podinfo", "podinfo", "9.x")
		env.Create(t, hc)
		ready := env.WaitForFailure(t, hc, "InvalidChartReference")
		want := "invalid chart reference: failed to get chart version for remote reference: no 'podinfo' chart with version matching '9.x' found"
		if ready.Message != want || !conditions.IsTrue(hc, meta.StalledCondition) || !conditions.IsTrue(hc, sourcev1.FetchFailedCondition) {
			t.Errorf("Ready = %q, conditions %v", ready.Message, hc.Status.Conditions)
		}
	})
	t.Run("missing chart", func(t *testing.T) {
		hc := newChart(ns, "missing-chart", sourcev1.HelmRepositoryKind, "podinfo", "nginx", "")
		env.Create(t, hc)
		ready := env.WaitForFailure(t, hc, "InvalidChartReference")
		if !strings.HasSuffix(ready.Message, "no chart name found") {
			t.Errorf("Ready = %q", ready.Message)
		}
	})
}

// checkPulled checks Flux's status for a chart pulled as is.
func checkPulled(t *testing.T, env *testenv.Env, hc *sourcev1.HelmChart, name, version string) {
	t.Helper()
	a := hc.Status.Artifact
	wantPath := fmt.Sprintf("helmchart/%s/%s/%s-%s.tgz", hc.Namespace, hc.Name, name, version)
	if a.Path != wantPath || hc.Status.URL != a.URL || hc.Status.ObservedChartName != name {
		t.Errorf("artifact %s (url %s), observed chart %q; want %s", a.Path, hc.Status.URL, hc.Status.ObservedChartName, wantPath)
	}
	msg := fmt.Sprintf("pulled '%s' chart with version '%s'", name, version)
	ready := conditions.Get(hc, meta.ReadyCondition)
	stored := conditions.Get(hc, sourcev1.ArtifactInStorageCondition)
	if ready.Message != msg || ready.Reason != sourcev1.ChartPullSucceededReason || stored == nil || stored.Message != msg {
		t.Errorf("Ready %s %q, ArtifactInStorage %v; want %s %q", ready.Reason, ready.Message, stored, sourcev1.ChartPullSucceededReason, msg)
	}
	var hr sourcev1.HelmRepository
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: hc.Namespace, Name: hc.Spec.SourceRef.Name}, &hr); err != nil {
		t.Fatal(err)
	}
	if hr.Status.Artifact == nil || hc.Status.ObservedSourceArtifactRevision != hr.Status.Artifact.Revision {
		t.Errorf("observedSourceArtifactRevision %q, repository at %v", hc.Status.ObservedSourceArtifactRevision, hr.Status.Artifact)
	}
	files := testenv.ArtifactFiles(t, testenv.DownloadArtifact(t, a))
	if !strings.Contains(files[name+"/Chart.yaml"], "version: "+version) {
		t.Errorf("served chart's Chart.yaml: %q", files[name+"/Chart.yaml"])
	}
	env.AssertEvent(t, hc, sourcev1.ChartPullSucceededReason, msg)
}

// createYAML creates the object a manifest describes in ns and returns it
// as the API server stored it.
func createYAML(t *testing.T, env *testenv.Env, ns, manifest string) *sourcev1.HelmChart {
	t.Helper()
	hc := &sourcev1.HelmChart{}
	if err := yaml.UnmarshalStrict([]byte(manifest), hc); err != nil {
		t.Fatal(err)
	}
	hc.Namespace = ns
	env.Create(t, hc)
	return hc
}

// TestChartLimitsAndHostileArchives serves charts that must not be
// stored: one over --helm-chart-max-size, one whose archive climbs out with
// "../", one with a link to /etc/passwd.
func TestChartLimitsAndHostileArchives(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	srv := helmserver.New(t, helmserver.Options{})
	big := helmserver.NewChart("big", "1.0.0", "1.0")
	noise := make([]byte, 2*testMaxChartSize)
	_, _ = rand.Read(noise)
	big.Files = append(big.Files, &common.File{Name: "files/noise.bin", Data: noise})
	srv.AddChart(t, big)
	srv.AddChart(t, helmserver.NewChart("good", "1.0.0", "1.0"))
	srv.WriteFile(t, "evil-1.0.0.tgz", testenv.TarGz(t,
		testenv.TarEntry{Name: "evil/Chart.yaml", Body: "apiVersion: v2\nname: evil\nversion: 1.0.0\n"},
		testenv.TarEntry{Name: "evil/../../../../tmp/pwned", Body: "x"}))
	srv.WriteFile(t, "linky-1.0.0.tgz", testenv.TarGz(t,
		testenv.TarEntry{Name: "linky/Chart.yaml", Body: "apiVersion: v2\nname: linky\nversion: 1.0.0\n"},
		testenv.TarEntry{Name: "linky/passwd.yaml", Link: "/etc/passwd"}))
	srv.WriteFile(t, "index.yaml", []byte(hostileIndex(srv.URL())))
	env.Create(t, newHelmRepo(ns, "repo", srv.URL(), ""))

	t.Run("over the size limit", func(t *testing.T) {
		hc := newChart(ns, "big", sourcev1.HelmRepositoryKind, "repo", "big", "")
		env.Create(t, hc)
		ready := env.WaitForFailure(t, hc, "ChartPullError")
		if !strings.Contains(ready.Message, fmt.Sprint(testMaxChartSize)) || hc.Status.Artifact != nil {
			t.Errorf("Ready %q, artifact %v", ready.Message, hc.Status.Artifact)
		}
	})
	t.Run("parent directory", func(t *testing.T) {
		hc := newChart(ns, "evil", sourcev1.HelmRepositoryKind, "repo", "evil", "")
		env.Create(t, hc)
		ready := env.WaitForFailure(t, hc, "ChartPullError")
		if !strings.Contains(ready.Message, "chart illegally references parent directory") || hc.Status.Artifact != nil {
			t.Errorf("Ready %q, artifact %v", ready.Message, hc.Status.Artifact)
		}
	})
	t.Run("link to /etc/passwd is never read", func(t *testing.T) {
		hc := newChart(ns, "linky", sourcev1.HelmRepositoryKind, "repo", "linky", "")
		hc.Spec.ValuesFiles = []string{"values.yaml", "passwd.yaml"}
		env.Create(t, hc)
		waitVersion(t, env, hc, "1.0.0+1")
		files := testenv.ArtifactFiles(t, testenv.DownloadArtifact(t, hc.Status.Artifact))
		for name, body := range files {
			if strings.Contains(body, "root:") {
				t.Errorf("%s holds /etc/passwd", name)
			}
		}
	})
}

func hostileIndex(url string) string {
	entry := func(name string) string {
		return fmt.Sprintf("  %s:\n  - apiVersion: v2\n    name: %s\n    version: 1.0.0\n    urls:\n    - %s/%s-1.0.0.tgz\n", name, name, url, name)
	}
	return "apiVersion: v1\nentries:\n" + entry("big") + entry("good") + entry("evil") + entry("linky")
}
