package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/internal/devenv/testenv"
)

func TestActionsLocal(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	fleet(t, env, ns)
	b := localLogin(t, start(t, "local", env.Config))
	var who struct{ User string }
	b.getJSON("/api/whoami", &who)

	apps := []map[string]string{{"kind": "Kustomization", "namespace": ns, "name": "apps"}}
	var res struct {
		Results []struct {
			OK    bool
			Error string
		}
	}
	if code := b.post("/api/actions", map[string]any{"action": "reconcile-source", "targets": apps}, &res); code != http.StatusOK {
		t.Fatalf("reconcile-source: %d %+v", code, res)
	}
	assertRecorded(t, env, ns, "ReconcileRequested", "Reconciliation requested by "+who.User+" in weir-ui")
	repo := object(t, `{"apiVersion":"source.toolkit.fluxcd.io/v1","kind":"GitRepository"}`)
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "repo"}, repo); err != nil {
		t.Fatal(err)
	}
	if repo.GetAnnotations()["reconcile.fluxcd.io/requestedAt"] == "" {
		t.Errorf("reconcile-source left the GitRepository unannotated")
	}

	if code := b.post("/api/actions", map[string]any{"action": "suspend", "reason": "change freeze", "targets": apps}, &res); code != http.StatusOK {
		t.Fatalf("suspend: %d %+v", code, res)
	}
	assertRecorded(t, env, ns, "Suspended", "Suspended by "+who.User+" in weir-ui: change freeze")
	var o struct {
		Suspended []struct{ Name, SuspendedBy, SuspendReason string }
	}
	b.getJSON("/api/overview?namespace="+ns, &o)
	if len(o.Suspended) != 1 || o.Suspended[0].SuspendedBy != "weir-ui/"+who.User || o.Suspended[0].SuspendReason != "change freeze" {
		t.Errorf("suspended = %+v", o.Suspended)
	}
	if code := b.post("/api/actions", map[string]any{"action": "reconcile", "targets": apps}, &res); code != http.StatusUnprocessableEntity ||
		!strings.Contains(res.Results[0].Error, "suspended") {
		t.Errorf("reconcile of a suspended object: %d %+v, want 422", code, res)
	}
	if code := b.post("/api/actions", map[string]any{"action": "resume", "targets": apps}, &res); code != http.StatusOK {
		t.Fatalf("resume: %d %+v", code, res)
	}
	assertRecorded(t, env, ns, "Resumed", "Resumed by "+who.User+" in weir-ui")
	u := assertFieldManager(t, env, ns, "apps", "weir-ui/"+who.User)
	var events []struct{ Reason, Source string }
	if code := b.getJSON("/api/objects/Kustomization/"+ns+"/apps/events", &events); code != http.StatusOK ||
		len(events) != 3 || events[0].Source != "weir-ui" {
		t.Errorf("events of apps: %d %+v, want the three actions", code, events)
	}
	var page struct {
		Summary     struct{ State string }
		Permissions map[string]struct{ Allowed bool }
	}
	if code := b.getJSON("/api/objects/Kustomization/"+ns+"/apps", &page); code != http.StatusOK ||
		page.Summary.State != "waiting" || !page.Permissions["reconcile"].Allowed { // DependencyNotReady
		t.Errorf("object page of apps: %d %+v", code, page)
	}
	if code := b.getJSON("/api/objects/Nothing/"+ns+"/apps", nil); code != http.StatusNotFound {
		t.Errorf("object of an unknown kind: %d, want 404", code)
	}
	if _, found, _ := unstructured.NestedBool(u.Object, "spec", "suspend"); found || u.GetAnnotations()["suspend.toolkit.fluxcd.io/reason"] != "" {
		t.Errorf("resume left spec.suspend or the reason: %v %v", u.Object["spec"], u.GetAnnotations())
	}
}

// sse reads server-sent events from a stream.
type sse struct {
	sc *bufio.Scanner
}

func (s *sse) next() (event, data string, ok bool) {
	for s.sc.Scan() {
		line := s.sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data = strings.TrimPrefix(line, "data: ")
		case line == "" && event != "":
			return event, data, true
		}
	}
	return "", "", false
}

func TestStreamDeliversStatusChange(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	fleet(t, env, ns)
	b := localLogin(t, start(t, "local", env.Config))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, b.base+"/api/stream?namespace="+ns, nil)
	resp, err := b.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || ct != "text/event-stream" {
		t.Fatalf("stream: %s %s", resp.Status, ct)
	}
	stream := &sse{sc: bufio.NewScanner(resp.Body)}
	// The informers list first; give them a moment to be watching.
	time.Sleep(time.Second)

	u := object(t, `{"apiVersion":"kustomize.toolkit.fluxcd.io/v1","kind":"Kustomization"}`)
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "infrastructure"}, u); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Format(time.RFC3339)
	_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{"type": "Ready", "status": "True", "reason": "ReconciliationSucceeded",
		"message": "Applied revision: main@sha1:0123abc", "lastTransitionTime": now}}, "status", "conditions")
	_ = unstructured.SetNestedField(u.Object, "main@sha1:0123abc", "status", "lastAppliedRevision")
	changed := time.Now()
	if err := env.Client.Status().Update(ctx, u); err != nil {
		t.Fatal(err)
	}
	for {
		event, data, ok := stream.next()
		if !ok {
			t.Fatal("stream ended before the change arrived")
		}
		var s struct{ Kind, Name, State, Was string }
		if event != "object" || json.Unmarshal([]byte(data), &s) != nil || s.Name != "infrastructure" || s.State != "ready" {
			continue
		}
		took := time.Since(changed)
		t.Logf("status change to event: object in %v", took)
		if took > time.Second {
			t.Errorf("the change took %v to arrive, want under a second", took)
		}
		if s.Was != "failing" {
			t.Errorf("the change says it was %q, want failing (the page moves its counts by it)", s.Was)
		}
		break
	}
	sourceMoves(ctx, t, env, ns, stream)
	if err := env.Client.Create(ctx, corev1Event{ns: ns}.build()); err != nil {
		t.Fatal(err)
	}
	for {
		event, data, ok := stream.next()
		if !ok {
			t.Fatal("stream ended before the Kubernetes Event arrived")
		}
		if event == "k8sevent" && strings.Contains(data, `"reason":"ProgressingWithRetry"`) {
			break
		}
	}
}

// sourceMoves writes a new artifact revision on the GitRepository: the
// stream sends the Kustomization that applied the old one, its Sync now
// saying the source is ahead.
func sourceMoves(ctx context.Context, t *testing.T, env *testenv.Env, ns string, stream *sse) {
	t.Helper()
	repo := object(t, `{"apiVersion":"source.toolkit.fluxcd.io/v1","kind":"GitRepository"}`)
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "repo"}, repo); err != nil {
		t.Fatal(err)
	}
	_ = unstructured.SetNestedField(repo.Object, "main@sha1:4567def", "status", "artifact", "revision")
	if err := env.Client.Status().Update(ctx, repo); err != nil {
		t.Fatal(err)
	}
	for {
		event, data, ok := stream.next()
		if !ok {
			t.Fatal("stream ended before the Kustomization's new Sync arrived")
		}
		var s struct{ Kind, Name, State, Was, Sync string }
		if event != "object" || json.Unmarshal([]byte(data), &s) != nil || s.Kind != "Kustomization" || s.Name != "infrastructure" {
			continue
		}
		if s.Sync != "source at main@sha1:4567def" || s.Was != "ready" || s.State != "ready" {
			t.Errorf("infrastructure after its source moved: %+v, want ready, was ready, source at main@sha1:4567def", s)
		}
		return
	}
}

type corev1Event struct{ ns string }

func (e corev1Event) build() *corev1.Event {
	now := metav1.Now()
	return &corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "infrastructure.1"},
		InvolvedObject: corev1.ObjectReference{APIVersion: "kustomize.toolkit.fluxcd.io/v1", Kind: "Kustomization", Namespace: e.ns, Name: "infrastructure"},
		Reason:         "ProgressingWithRetry", Message: "retrying", Type: corev1.EventTypeNormal, FirstTimestamp: now, LastTimestamp: now, Count: 1,
		Source: corev1.EventSource{Component: "kustomize-controller"}}
}
