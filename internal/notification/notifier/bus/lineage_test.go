package bus

import (
	"bytes"
	"context"
	"crypto/sha256"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/internal/notification/notifier"
	"github.com/weir-gitops/weir/internal/runtime/events"
)

// objects is a client.Reader over a fixed set of objects: lineage only
// reads, and its rules are about labels and references, not the API.
type objects map[string]*unstructured.Unstructured

func (o objects) add(apiVersion, kind, ns, name, uid string, labels map[string]string, fields map[string]any) {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	for k, v := range fields {
		u.Object[k] = v
	}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetNamespace(ns)
	u.SetName(name)
	u.SetUID(types.UID(uid))
	u.SetLabels(labels)
	o[kind+"/"+ns+"/"+name] = u
}

func (o objects) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	u := obj.(*unstructured.Unstructured)
	gvk := u.GroupVersionKind()
	found, ok := o[gvk.Kind+"/"+key.Namespace+"/"+key.Name]
	if !ok || found.GroupVersionKind() != gvk {
		return apierrors.NewNotFound(schema.GroupResource{Group: gvk.Group, Resource: gvk.Kind}, key.Name)
	}
	found.DeepCopyInto(u)
	return nil
}

func (o objects) List(context.Context, client.ObjectList, ...client.ListOption) error {
	panic("lineage does not list")
}

const (
	ksAPI  = "kustomize.toolkit.fluxcd.io/v1"
	srcAPI = "source.toolkit.fluxcd.io/v1"
	hrAPI  = "helm.toolkit.fluxcd.io/v2"
)

// fleet is flux-system/flux-system (the root, at main@sha1:root) applying
// apps/apps (at main@sha1:apps), which applies the GitRepository and the
// HelmRelease of apps/podinfo; the HelmRelease's chart comes from a
// HelmRepository. flux-system/orphan is applied by nothing.
func fleet() objects {
	o := objects{}
	byRoot := map[string]string{"kustomize.toolkit.fluxcd.io/name": "flux-system", "kustomize.toolkit.fluxcd.io/namespace": "flux-system"}
	byApps := map[string]string{"kustomize.toolkit.fluxcd.io/name": "apps", "kustomize.toolkit.fluxcd.io/namespace": "apps"}
	o.add(ksAPI, "Kustomization", "flux-system", "flux-system", "uid-root", nil, map[string]any{
		"spec":   map[string]any{"sourceRef": map[string]any{"kind": "GitRepository", "name": "flux-system"}},
		"status": map[string]any{"lastAppliedRevision": "main@sha1:root"}})
	o.add(srcAPI, "GitRepository", "flux-system", "flux-system", "uid-root-repo", byRoot, nil)
	o.add(ksAPI, "Kustomization", "apps", "apps", "uid-apps", byRoot, map[string]any{
		"status": map[string]any{"lastAppliedRevision": "main@sha1:apps"}})
	o.add(srcAPI, "GitRepository", "apps", "podinfo", "uid-podinfo-repo", byApps, nil)
	o.add(hrAPI, "HelmRelease", "apps", "podinfo", "uid-podinfo-hr", byApps, map[string]any{
		"spec": map[string]any{"chart": map[string]any{}, "sourceRef": map[string]any{"kind": "HelmRepository", "name": "podinfo"}}})
	o.add(srcAPI, "HelmChart", "apps", "podinfo", "uid-podinfo-chart", nil, nil)
	o.add(srcAPI, "GitRepository", "flux-system", "orphan", "uid-orphan", nil, nil)
	return o
}

func objectEvent(apiVersion, kind, ns, name, uid, revision string) events.Event {
	return events.Event{
		InvolvedObject: corev1.ObjectReference{APIVersion: apiVersion, Kind: kind, Namespace: ns, Name: name, UID: types.UID(uid)},
		Metadata:       map[string]string{"revision": revision},
	}
}

func TestLineage(t *testing.T) {
	tests := []struct {
		name     string
		reader   client.Reader
		e        events.Event
		traceRev string
		parent   *node
	}{
		{name: "a source applied by a Kustomization hangs under it, in the root's trace", reader: fleet(),
			e:        objectEvent(srcAPI, "GitRepository", "apps", "podinfo", "uid-podinfo-repo", "main@sha1:src"),
			traceRev: "main@sha1:root", parent: &node{uid: "uid-apps", revision: "main@sha1:apps"}},
		{name: "an object at the root's revision hangs under the root", reader: fleet(),
			e:        objectEvent(ksAPI, "Kustomization", "apps", "apps", "uid-apps", "main@sha1:root"),
			traceRev: "main@sha1:root", parent: &node{uid: "uid-root", revision: "main@sha1:root"}},
		{name: "an object at another revision hangs under its source, a HelmRepository's chart", reader: fleet(),
			e:        objectEvent(hrAPI, "HelmRelease", "apps", "podinfo", "uid-podinfo-hr", "6.5.0"),
			traceRev: "main@sha1:root", parent: &node{uid: "uid-podinfo-chart", revision: "6.5.0"}},
		{name: "the root hangs under its source", reader: fleet(),
			e:        objectEvent(ksAPI, "Kustomization", "flux-system", "flux-system", "uid-root", "main@sha1:root"),
			traceRev: "main@sha1:root", parent: &node{uid: "uid-root-repo", revision: "main@sha1:root"}},
		{name: "a source nothing applied is a root", reader: fleet(),
			e:        objectEvent(srcAPI, "GitRepository", "flux-system", "orphan", "uid-orphan", "main@sha1:o"),
			traceRev: "main@sha1:o"},
		{name: "an object that cannot be read is a root", reader: fleet(),
			e:        objectEvent(hrAPI, "HelmRelease", "apps", "gone", "uid-gone", "1.0.0"),
			traceRev: "1.0.0"},
		{name: "without a reader every span is a root",
			e:        objectEvent(srcAPI, "GitRepository", "apps", "podinfo", "uid-podinfo-repo", "main@sha1:src"),
			traceRev: "main@sha1:src"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rev, parent := lineage(context.Background(), tt.reader, tt.e)
			if rev != tt.traceRev {
				t.Errorf("trace revision = %q, want %q", rev, tt.traceRev)
			}
			if diff := cmp.Diff(tt.parent, parent, cmp.AllowUnexported(node{})); diff != "" {
				t.Errorf("parent (-want +got):\n%s", diff)
			}
		})
	}
}

// TestOTelSpanHasItsParent checks the exported span carries the parent
// lineage found, in the root's trace.
func TestOTelSpanHasItsParent(t *testing.T) {
	c := startCollector(t)
	n, err := New(notifier.Options{Type: "otel", Address: c.srv.URL + "/v1/traces", Alert: testAlert, Reader: fleet()})
	if err != nil {
		t.Fatal(err)
	}
	e := objectEvent(srcAPI, "GitRepository", "apps", "podinfo", "uid-podinfo-repo", "main@sha1:src")
	if err := n.Post(context.Background(), e); err != nil {
		t.Fatal(err)
	}
	_, bodies := c.requests()
	if len(bodies) != 1 {
		t.Fatalf("collector got %d exports", len(bodies))
	}
	s := bodies[0].ResourceSpans[0].ScopeSpans[0].Spans[0]
	sum := func(s string) []byte { h := sha256.Sum256([]byte(s)); return h[:] }
	if !bytes.Equal(s.TraceId, sum(testAlert.UID + ":main@sha1:root")[:16]) {
		t.Errorf("trace ID %x is not the root revision's", s.TraceId)
	}
	if !bytes.Equal(s.SpanId, sum("uid-podinfo-repo:main@sha1:src")[:8]) {
		t.Errorf("span ID %x is not the object's", s.SpanId)
	}
	if !bytes.Equal(s.ParentSpanId, sum("uid-apps:main@sha1:apps")[:8]) {
		t.Errorf("parent span ID %x is not the apps Kustomization's", s.ParentSpanId)
	}
}
