package livediff_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v4/pkg/chart/common"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/controllers"
	"github.com/weir-gitops/weir/internal/devenv/testenv/helmapp"
	"github.com/weir-gitops/weir/internal/devenv/testenv/helmserver"
	"github.com/weir-gitops/weir/internal/ui/objectview"
	"github.com/weir-gitops/weir/internal/view/livediff"
)

// TestRenderHelmReleaseNewChart: the source and helm controllers install
// app 1.0.0 from a Helm repository; the HelmRelease is suspended; 1.1.0,
// whose ConfigMap gains a key, is published and its HelmChart fetches it.
// The render loads the HelmChart's new artifact (not the release's stored
// chart) and the diff shows the new key and object while the cluster
// still holds 1.0.0's objects; the UI's object page shows the same.
func TestRenderHelmReleaseNewChart(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	ctx := context.Background()
	srv := helmserver.New(t, helmserver.Options{})
	srv.AddChart(t, helmapp.Chart(t, "1.0.0"))
	controllers.Run(t, controllers.Options{Controllers: []string{"source", "helm"}})

	repo := &sourcev1.HelmRepository{
		ObjectMeta: metav1.ObjectMeta{Name: "charts", Namespace: ns},
		Spec:       sourcev1.HelmRepositorySpec{URL: srv.URL(), Interval: metav1.Duration{Duration: time.Hour}},
	}
	hr := &helmv2.HelmRelease{
		ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns},
		Spec: helmv2.HelmReleaseSpec{
			Interval: metav1.Duration{Duration: time.Hour},
			Chart: &helmv2.HelmChartTemplate{Spec: helmv2.HelmChartTemplateSpec{
				Chart: "app", Version: "*", Interval: &metav1.Duration{Duration: time.Hour},
				SourceRef: helmv2.CrossNamespaceObjectReference{Kind: sourcev1.HelmRepositoryKind, Name: "charts"},
			}},
			Install: &helmv2.Install{DisableWait: true},
			Upgrade: &helmv2.Upgrade{DisableWait: true},
			Values:  &helmv2.Values{Raw: []byte(`{"greeting":"hi"}`)},
		},
	}
	env.Create(t, repo, hr)
	env.WaitForReady(t, hr, func() (bool, string) {
		return hr.Status.LastAttemptedRevision == "1.0.0", "revision " + hr.Status.LastAttemptedRevision
	})
	env.Update(t, hr, func() { hr.Spec.Suspend = true })

	next := helmapp.Chart(t, "1.1.0")
	for _, f := range next.Templates {
		if f.Name == "templates/cm.yaml" {
			f.Data = append(f.Data, []byte("  tier: gold\n")...)
		}
	}
	next.Templates = append(next.Templates, &common.File{Name: "templates/new.yaml",
		Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-new\ndata: {}\n")})
	srv.AddChart(t, next)
	env.RequestReconcile(t, repo)
	env.WaitForReady(t, repo, nil)
	chart := &sourcev1.HelmChart{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: ns + "-app"}}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(chart), chart); err != nil {
		t.Fatal(err)
	}
	env.RequestReconcile(t, chart)
	env.WaitForReady(t, chart, func() (bool, string) {
		if a := chart.Status.Artifact; a != nil && a.Revision == "1.1.0" {
			return true, ""
		}
		return false, "the HelmChart's artifact is not 1.1.0 yet"
	})

	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(hr), hr); err != nil {
		t.Fatal(err)
	}
	got, err := livediff.RenderHelmRelease(ctx, env.Client, env.Config, hr, livediff.RenderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := "HelmChart " + ns + "/" + ns + "-app at 1.1.0"; got.ChartFrom != want || got.FromStorage {
		t.Errorf("chart from %q (from storage: %v), want %q", got.ChartFrom, got.FromStorage, want)
	}
	if got.Current == nil || got.Current.Chart.Metadata.Version != "1.0.0" {
		t.Fatalf("current release: %+v, want 1.0.0", got.Current)
	}
	res, err := got.Diff(ctx)
	if err != nil {
		t.Fatal(err)
	}
	changes := map[string]string{}
	for _, c := range res.Changes {
		changes[c.ID] = string(c.Action) + "\n" + c.Diff
	}
	if c := changes["ConfigMap/"+ns+"/app"]; !strings.HasPrefix(c, string(livediff.Changed)) || !strings.Contains(c, "+  tier: gold") {
		t.Errorf("ConfigMap/%s/app: %q, want changed with the new key; all: %v", ns, c, changes)
	}
	if c := changes["ConfigMap/"+ns+"/app-new"]; !strings.HasPrefix(c, string(livediff.Created)) {
		t.Errorf("ConfigMap/%s/app-new: %q, want created; all: %v", ns, c, changes)
	}
	// The UI's page takes the same path.
	page, err := objectview.Diff(ctx, env.Client, env.Config, objectview.Ref{Kind: "HelmRelease", Namespace: ns, Name: "app"})
	if err != nil || page.Error != "" || page.Revision != "app@1.1.0" || len(page.Changed) == 0 || len(page.Created) != 1 {
		t.Errorf("the object page's diff: %v, %+v; want app@1.1.0 with changes and ConfigMap %s/app-new created", err, page, ns)
	}
	live := &corev1.ConfigMap{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "app"}, live); err != nil || live.Data["tier"] != "" {
		t.Errorf("the live ConfigMap changed before the controller applied 1.1.0: %v %v", err, live.Data)
	}
}
