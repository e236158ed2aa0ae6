package events

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"

	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/scheme"
)

func TestEventsReachKubernetesAndTheWebhook(t *testing.T) {
	received := make(chan Event, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		var e Event
		if err := json.NewDecoder(r.Body).Decode(&e); err != nil {
			t.Errorf("decoding: %v", err)
		}
		received <- e
	}))
	defer srv.Close()

	kube := record.NewFakeRecorder(1)
	kube.IncludeObject = true
	rec := NewRecorder(kube, scheme.Must(), "source-controller", "pod-1", srv.URL)
	repo := &sourcev1.GitRepository{ObjectMeta: metav1.ObjectMeta{
		Name: "podinfo", Namespace: "apps",
		Annotations: map[string]string{"event.toolkit.fluxcd.io/team": "web", "other": "x"},
	}}
	rec.Normal(context.Background(), repo, "NewArtifact", map[string]string{"revision": "main@sha1:abc"},
		"stored artifact for commit '%s'", "Initial commit")

	k := <-kube.Events
	if !strings.HasPrefix(k, "Normal NewArtifact stored artifact for commit 'Initial commit'") ||
		!strings.Contains(k, "source.toolkit.fluxcd.io/revision:main@sha1:abc") {
		t.Errorf("kubernetes event = %q", k)
	}
	e := <-received
	if e.InvolvedObject.Kind != "GitRepository" || e.InvolvedObject.APIVersion != "source.toolkit.fluxcd.io/v1" ||
		e.Severity != SeverityInfo || e.Reason != "NewArtifact" || e.ReportingController != "source-controller" {
		t.Errorf("forwarded event = %+v", e)
	}
	// Keyed as Flux's recorder keys them, which Flux's notification
	// controller requires: the controller's under the object's group, the
	// object's own annotations as they are.
	if e.Metadata["source.toolkit.fluxcd.io/revision"] != "main@sha1:abc" || e.Metadata["event.toolkit.fluxcd.io/team"] != "web" || len(e.Metadata) != 2 {
		t.Errorf("metadata = %v", e.Metadata)
	}
}

// TestForwardWritesNoKubernetesEvent: Forward reaches the webhook only.
func TestForwardWritesNoKubernetesEvent(t *testing.T) {
	received := make(chan Event, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		var e Event
		if err := json.NewDecoder(r.Body).Decode(&e); err != nil {
			t.Errorf("decoding: %v", err)
		}
		received <- e
	}))
	defer srv.Close()
	kube := record.NewFakeRecorder(1)
	rec := NewRecorder(kube, scheme.Must(), "kustomize-controller", "pod-1", srv.URL)
	repo := &sourcev1.GitRepository{ObjectMeta: metav1.ObjectMeta{Name: "podinfo", Namespace: "apps"}}
	rec.Forward(context.Background(), repo, "ReconciliationSucceeded", map[string]string{"commit_status": "update"},
		"Reconciliation finished in %s", "2ms")
	if e := <-received; e.Message != "Reconciliation finished in 2ms" || e.Severity != SeverityInfo || e.Metadata["source.toolkit.fluxcd.io/commit_status"] != "update" {
		t.Errorf("forwarded event = %+v", e)
	}
	select {
	case k := <-kube.Events:
		t.Errorf("Kubernetes event %q written", k)
	default:
	}
}
