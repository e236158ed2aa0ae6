package reconcile

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
	"github.com/weir-gitops/weir/internal/runtime/errs"
)

// record is a kind's record of one run in these tests.
type record struct {
	wasReady bool
	steps    []string
}

// TestRunOwnsTheLifecycle runs a kind through Run and asserts what the
// skeleton, not the kind, is responsible for: the phases in order and
// stopped by Stop or an error, one deadline over them, the status from the
// record, negative conditions cleared only after a success, events after
// the status, and the queue's reaction.
func TestRunOwnsTheLifecycle(t *testing.T) {
	boom := &errs.Generic{Err: errors.New("boom"), Reason: "FetchFailed"}
	tests := []struct {
		name      string
		phases    []string // "ok", "stop" or "fail"
		wantSteps []string
		wantErr   bool
		// wantNegative is whether the FetchFailed condition survives.
		wantNegative bool
	}{
		{"every phase runs and the negative condition goes", []string{"ok", "ok"}, []string{"0", "1"}, false, false},
		{"Stop ends early as a success", []string{"ok", "stop", "ok"}, []string{"0", "1"}, false, false},
		{"an error ends the run and keeps the negative condition", []string{"ok", "fail", "ok"}, []string{"0", "1"}, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, key := fakeKustomization(t)
			var order []string
			var out *record
			var phases []Phase[*kustomizev1.Kustomization, *record]
			for i, p := range tt.phases {
				phases = append(phases, func(ctx context.Context, _ *kustomizev1.Kustomization, r *record) error {
					if _, ok := ctx.Deadline(); !ok {
						t.Error("phase runs without the run's deadline")
					}
					r.steps = append(r.steps, string(rune('0'+i)))
					switch p {
					case "stop":
						return Stop
					case "fail":
						return boom
					}
					return nil
				})
			}
			res, err := Run(context.Background(), Driver{Client: c}, ctrl.Request{NamespacedName: key}, &kustomizev1.Kustomization{},
				Kind[*kustomizev1.Kustomization, *record]{
					Name:       kustomizev1.KustomizationKind,
					Conditions: Conditions{Owned: []string{meta.ReadyCondition, "FetchFailed"}, Negative: []string{"FetchFailed"}},
					Begin: func(_ context.Context, obj *kustomizev1.Kustomization) *record {
						out = &record{wasReady: conditions.IsReady(obj)}
						return out
					},
					Timeout: func(*kustomizev1.Kustomization) time.Duration { return time.Minute },
					Phases:  phases,
					Status: func(obj *kustomizev1.Kustomization, _ *record, err error) {
						order = append(order, "status")
						if err != nil {
							conditions.MarkTrue(obj, "FetchFailed", "FetchFailed", "%s", err)
							conditions.MarkError(obj, "FetchFailed", err)
							return
						}
						conditions.MarkReady(obj, meta.SucceededReason, "done")
					},
					Events: func(_ context.Context, obj *kustomizev1.Kustomization, _ *record, _ error) {
						order = append(order, "events")
						if got := conditions.Get(obj, "FetchFailed") != nil; got != tt.wantNegative {
							t.Errorf("events see FetchFailed = %v, want %v", got, tt.wantNegative)
						}
					},
				})
			if (err != nil) != tt.wantErr {
				t.Fatalf("Run error = %v, want error %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.wantSteps, out.steps); diff != "" {
				t.Errorf("phases run (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"status", "events"}, order); diff != "" {
				t.Errorf("ending (-want +got):\n%s", diff)
			}
			if !tt.wantErr && res.RequeueAfter != time.Hour {
				t.Errorf("RequeueAfter = %s, want the interval", res.RequeueAfter)
			}
			var stored kustomizev1.Kustomization
			if err := c.Get(context.Background(), key, &stored); err != nil {
				t.Fatal(err)
			}
			if got := conditions.Get(&stored, "FetchFailed") != nil; got != tt.wantNegative {
				t.Errorf("stored FetchFailed = %v, want %v", got, tt.wantNegative)
			}
			if !out.wasReady {
				t.Error("Begin did not see the object as it was before the run")
			}
		})
	}
}

// fakeKustomization stores a Ready Kustomization with a stale FetchFailed
// condition, interval one hour.
func fakeKustomization(t *testing.T) (client.WithWatch, types.NamespacedName) {
	t.Helper()
	s := runtime.NewScheme()
	if err := kustomizev1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	obj := &kustomizev1.Kustomization{
		ObjectMeta: metav1.ObjectMeta{Name: "apps", Namespace: "ns", Generation: 1},
		Spec:       kustomizev1.KustomizationSpec{Interval: metav1.Duration{Duration: time.Hour}},
	}
	conditions.MarkReady(obj, meta.SucceededReason, "before")
	conditions.MarkTrue(obj, "FetchFailed", "FetchFailed", "an old failure")
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(obj).WithStatusSubresource(obj).Build()
	return c, types.NamespacedName{Namespace: "ns", Name: "apps"}
}

// lagging is a cache that has not seen the last run's writes yet: every
// Get answers with the object as it was before.
type lagging struct {
	client.Client
	before *kustomizev1.Kustomization
}

func (l lagging) Get(_ context.Context, _ client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	l.before.DeepCopyInto(obj.(*kustomizev1.Kustomization))
	return nil
}

// TestRunStartsFromWhatTheLastRunLeft: a run queued while the previous one
// was still writing starts, through a lagging cache, from the object as it
// was mid-run. With Written and an uncached Reader, Run reads the object
// again when the cached version is not the one the last run left.
func TestRunStartsFromWhatTheLastRunLeft(t *testing.T) {
	for _, tt := range []struct {
		name    string
		written bool
		want    string
	}{
		{"Written reads past the lagging cache", true, "done"},
		{"without it the run starts from the lagging copy", false, "before"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, key := fakeKustomization(t)
			before := &kustomizev1.Kustomization{}
			if err := c.Get(context.Background(), key, before); err != nil {
				t.Fatal(err)
			}
			// The finalizer is there already: adding it would patch and
			// so refresh the object before Begin.
			before.Finalizers = []string{meta.Finalizer}
			var w *Written
			if tt.written {
				w = &Written{}
			}
			var seen string
			kind := Kind[*kustomizev1.Kustomization, *record]{
				Name:       kustomizev1.KustomizationKind,
				Conditions: Conditions{Owned: []string{meta.ReadyCondition}},
				Begin: func(_ context.Context, obj *kustomizev1.Kustomization) *record {
					seen = conditions.Get(obj, meta.ReadyCondition).Message
					return &record{}
				},
				Status: func(obj *kustomizev1.Kustomization, _ *record, _ error) {
					conditions.MarkReady(obj, meta.SucceededReason, "done")
				},
			}
			req := ctrl.Request{NamespacedName: key}
			if _, err := Run(context.Background(), Driver{Client: c, Written: w, Reader: c}, req, &kustomizev1.Kustomization{}, kind); err != nil {
				t.Fatal(err)
			}
			if _, err := Run(context.Background(), Driver{Client: lagging{Client: c, before: before}, Written: w, Reader: c}, req,
				&kustomizev1.Kustomization{}, kind); err != nil {
				t.Fatal(err)
			}
			if seen != tt.want {
				t.Errorf("second run began from Ready %q, want %q", seen, tt.want)
			}
		})
	}
}

// counting counts the reads that pass through it.
type counting struct {
	client.Reader
	gets int
}

func (c *counting) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	c.gets++
	return c.Reader.Get(ctx, key, obj, opts...)
}

// TestWrittenReadsOnlyWhatLags: the uncached read is spent only on a
// cached copy older than the last run left; the same version, or a newer
// one (someone else wrote after the run), is used as it is.
func TestWrittenReadsOnlyWhatLags(t *testing.T) {
	key := types.NamespacedName{Namespace: "ns", Name: "apps"}
	for _, tt := range []struct {
		left, cached string
		want         int
	}{
		{"20", "20", 0}, {"20", "21", 0}, {"20", "100", 0}, {"20", "19", 1}, {"20", "9", 1}, {"20", "opaque", 1},
	} {
		c, _ := fakeKustomization(t)
		r := &counting{Reader: c}
		w := &Written{}
		w.left(key, &kustomizev1.Kustomization{ObjectMeta: metav1.ObjectMeta{ResourceVersion: tt.left}})
		obj := &kustomizev1.Kustomization{ObjectMeta: metav1.ObjectMeta{ResourceVersion: tt.cached}}
		if err := w.fresh(context.Background(), r, key, obj); err != nil {
			t.Fatal(err)
		}
		if r.gets != tt.want {
			t.Errorf("left %s, cached %s: %d uncached reads, want %d", tt.left, tt.cached, r.gets, tt.want)
		}
	}
}
