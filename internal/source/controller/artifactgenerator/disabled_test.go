package artifactgenerator

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sourceextensionsv1beta1 "github.com/weir-gitops/weir/api/sourceextensions/v1beta1"
	"github.com/weir-gitops/weir/internal/devenv/testenv/gitserver"
	"github.com/weir-gitops/weir/internal/runtime/events"
	"github.com/weir-gitops/weir/internal/scheme"
	"github.com/weir-gitops/weir/internal/source"
)

// TestDisabledRecordsOneEvent: a paused generator records source-watcher's
// Warning event, generates nothing, and records no second event when a
// commit to its source wakes it up; resumed, it generates.
func TestDisabledRecordsOneEvent(t *testing.T) {
	f := newFixture(t, monorepo)
	ag := f.generator("staging")
	ag.Annotations = map[string]string{sourceextensionsv1beta1.ReconcileAnnotation: sourceextensionsv1beta1.DisabledValue}
	f.env.Create(t, ag)
	f.env.AssertEvent(t, ag, sourceextensionsv1beta1.ReconciliationDisabledReason, msgDisabled)

	f.push(t, gitserver.Commit{Files: map[string]string{"apps/staging/values.yaml": "replicas: 2\n"}})
	f.env.Update(t, ag, func() { delete(ag.Annotations, sourceextensionsv1beta1.ReconcileAnnotation) })
	f.waitGenerated(t, ag, nil)
	// The commit's reconcile of the paused version ran before the resumed
	// one (one key is reconciled at a time): it recorded nothing.
	var list corev1.EventList
	if err := f.env.Client.List(context.Background(), &list, client.InNamespace(f.ns)); err != nil {
		t.Fatal(err)
	}
	var count int32
	for _, ev := range list.Items {
		if ev.InvolvedObject.Name == ag.Name && ev.Reason == sourceextensionsv1beta1.ReconciliationDisabledReason {
			count += max(ev.Count, 1)
		}
	}
	if count != 1 {
		t.Errorf("%d ReconciliationDisabled events, want 1", count)
	}
}

// TestDisabledEventOncePerVersion: the event is recorded again only for
// a new version of the object, and again after a resume and a new pause.
func TestDisabledEventOncePerVersion(t *testing.T) {
	fake := record.NewFakeRecorder(10)
	r := &Reconciler{Deps: source.Deps{Events: events.NewRecorder(fake, scheme.Must(), "source-watcher", "", "")}}
	paused := &sourceextensionsv1beta1.ArtifactGenerator{ObjectMeta: metav1.ObjectMeta{
		Name: "fleet", Namespace: "flux-system", ResourceVersion: "1",
		Annotations: map[string]string{sourceextensionsv1beta1.ReconcileAnnotation: "Disabled"},
	}}
	resumed := paused.DeepCopy()
	resumed.Annotations, resumed.ResourceVersion = nil, "3"
	repaused := paused.DeepCopy()
	repaused.ResourceVersion = "4"
	edited := paused.DeepCopy()
	edited.ResourceVersion = "2"
	for _, tt := range []struct {
		obj        *sourceextensionsv1beta1.ArtifactGenerator
		want       bool
		wantEvents int
	}{
		{paused, true, 1},
		{paused, true, 0}, // a source's new artifact
		{edited, true, 1},
		{resumed, false, 0},
		{repaused, true, 1},
	} {
		if got := r.disabled(context.Background(), tt.obj); got != tt.want {
			t.Errorf("resourceVersion %s: disabled = %v, want %v", tt.obj.ResourceVersion, got, tt.want)
		}
		if got := len(fake.Events); got != tt.wantEvents {
			t.Fatalf("resourceVersion %s: %d events, want %d", tt.obj.ResourceVersion, got, tt.wantEvents)
		}
		for range tt.wantEvents {
			if ev, want := <-fake.Events, "Warning ReconciliationDisabled Reconciliation is disabled"; ev != want {
				t.Errorf("event %q, want %q", ev, want)
			}
		}
	}
}
