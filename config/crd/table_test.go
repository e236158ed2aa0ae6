package crd_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
)

// TestStatusSubresourceAndPrinterColumns checks what `kubectl get` and the
// flux CLI rely on: status defaults to observedGeneration -1, status is only
// written through the status subresource, and the table API prints Flux's
// columns with the Ready condition's status and message.
func TestStatusSubresourceAndPrinterColumns(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	ctx := context.Background()

	repo := &sourcev1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Name: "podinfo", Namespace: ns},
		Spec: sourcev1.GitRepositorySpec{
			URL:      "https://127.0.0.1/stefanprodan/podinfo",
			Interval: metav1.Duration{Duration: 60_000_000_000},
		},
	}
	if err := env.Client.Create(ctx, repo); err != nil {
		t.Fatal(err)
	}
	if repo.Status.ObservedGeneration != -1 {
		t.Errorf("status.observedGeneration = %d, want the CRD default -1", repo.Status.ObservedGeneration)
	}

	ready := metav1.Condition{
		Type: meta.ReadyCondition, Status: metav1.ConditionTrue, Reason: meta.SucceededReason,
		Message:            "stored artifact for revision 'main@sha1:0123456789abcdef0123456789abcdef01234567'",
		LastTransitionTime: metav1.Now(), ObservedGeneration: repo.Generation,
	}
	// A write to the main resource must not change status.
	repo.Status.Conditions = []metav1.Condition{ready}
	if err := env.Client.Update(ctx, repo); err != nil {
		t.Fatal(err)
	}
	if len(repo.Status.Conditions) != 0 {
		t.Errorf("status changed through the main resource: %v", repo.Status.Conditions)
	}
	repo.Status.Conditions = []metav1.Condition{ready}
	if err := env.Client.Status().Update(ctx, repo); err != nil {
		t.Fatalf("updating status subresource: %v", err)
	}

	table := getTable(t, env.Config, fmt.Sprintf("/apis/source.toolkit.fluxcd.io/v1/namespaces/%s/gitrepositories", ns))
	assertColumns(t, table, []string{"Name", "URL", "Age", "Ready", "Status"})
	assertRow(t, table, map[string]any{"Name": "podinfo", "URL": repo.Spec.URL, "Ready": "True", "Status": ready.Message})

	ks := &kustomizev1.Kustomization{
		ObjectMeta: metav1.ObjectMeta{Name: "apps", Namespace: ns},
		Spec: kustomizev1.KustomizationSpec{
			Interval:  metav1.Duration{Duration: 600_000_000_000},
			Prune:     true,
			SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: "GitRepository", Name: "podinfo"},
		},
	}
	if err := env.Client.Create(ctx, ks); err != nil {
		t.Fatal(err)
	}
	ks.Status.Conditions = []metav1.Condition{{
		Type: meta.ReadyCondition, Status: metav1.ConditionFalse, Reason: meta.BuildFailedReason,
		Message: "kustomize build failed", LastTransitionTime: metav1.Now(),
	}}
	if err := env.Client.Status().Update(ctx, ks); err != nil {
		t.Fatal(err)
	}
	table = getTable(t, env.Config, fmt.Sprintf("/apis/kustomize.toolkit.fluxcd.io/v1/namespaces/%s/kustomizations", ns))
	assertColumns(t, table, []string{"Name", "Age", "Ready", "Status"})
	assertRow(t, table, map[string]any{"Name": "apps", "Ready": "False", "Status": "kustomize build failed"})
}

func getTable(t *testing.T, cfg *rest.Config, path string) *metav1.Table {
	t.Helper()
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodGet, cfg.Host+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	resp, err := httpClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s: %s", path, resp.Status, body)
	}
	var table metav1.Table
	if err := json.Unmarshal(body, &table); err != nil {
		t.Fatal(err)
	}
	return &table
}

func assertColumns(t *testing.T, table *metav1.Table, want []string) {
	t.Helper()
	var got []string
	for _, c := range table.ColumnDefinitions {
		got = append(got, c.Name)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("printer columns (-want +got):\n%s", diff)
	}
}

func assertRow(t *testing.T, table *metav1.Table, want map[string]any) {
	t.Helper()
	if len(table.Rows) != 1 {
		t.Fatalf("got %d rows, want 1", len(table.Rows))
	}
	for i, c := range table.ColumnDefinitions {
		if w, ok := want[c.Name]; ok && table.Rows[0].Cells[i] != w {
			t.Errorf("column %s = %v, want %v", c.Name, table.Rows[0].Cells[i], w)
		}
	}
}
