package dependency_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/apply/dependency"
	"github.com/weir-gitops/weir/internal/runtime/errs"
	"github.com/weir-gitops/weir/internal/scheme"
)

// kind is a HelmRelease Kind as the helm controller declares it, with a
// revision so the watch predicate's extra field is exercised.
var kind = dependency.Kind[*helmv2.HelmRelease]{
	New:                func() *helmv2.HelmRelease { return &helmv2.HelmRelease{} },
	NewList:            func() client.ObjectList { return &helmv2.HelmReleaseList{} },
	ObservedGeneration: func(hr *helmv2.HelmRelease) int64 { return hr.Status.ObservedGeneration },
	NotFound: func(key types.NamespacedName, err error) error {
		return fmt.Errorf("unable to get '%s' dependency: %w", key, err)
	},
	Revision: func(hr *helmv2.HelmRelease) string { return hr.Status.LastAttemptedRevision },
}

func release(name string, ready metav1.ConditionStatus, generation, observed int64, deps ...meta.DependencyReference) *helmv2.HelmRelease {
	hr := &helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Generation: generation}}
	hr.Spec.DependsOn = deps
	hr.Status.ObservedGeneration = observed
	if ready != "" {
		hr.Status.Conditions = []metav1.Condition{{Type: meta.ReadyCondition, Status: ready, Reason: "R"}}
	}
	return hr
}

func TestCheck(t *testing.T) {
	s, err := scheme.New()
	if err != nil {
		t.Fatal(err)
	}
	ready := release("ready", metav1.ConditionTrue, 2, 2)
	stale := release("stale", metav1.ConditionTrue, 3, 2)
	failed := release("failed", metav1.ConditionFalse, 1, 1)
	cycleA := release("a", "", 1, 0, meta.DependencyReference{Name: "b"})
	cycleB := release("b", "", 1, 0, meta.DependencyReference{Name: "a"})
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(ready, stale, failed, cycleA, cycleB).Build()
	ref := func(name, expr string) meta.DependencyReference {
		return meta.DependencyReference{Name: name, ReadyExpr: expr}
	}
	tests := []struct {
		name     string
		refs     []meta.DependencyReference
		additive bool
		extra    func(*helmv2.HelmRelease) error
		want     string // "" for ready
		stalls   bool
		cycle    bool
	}{
		{name: "ready", refs: []meta.DependencyReference{ref("ready", "")}},
		{name: "other namespace defaulted", refs: []meta.DependencyReference{{Name: "ready", Namespace: "ns"}}},
		{name: "missing", refs: []meta.DependencyReference{ref("gone", "")}, want: "unable to get 'ns/gone' dependency: "},
		{name: "generation not observed", refs: []meta.DependencyReference{ref("stale", "")}, want: "dependency 'ns/stale' is not ready"},
		{name: "not ready, first failing entry wins", refs: []meta.DependencyReference{ref("ready", ""), ref("failed", "")}, want: "dependency 'ns/failed' is not ready"},
		{name: "readyExpr replaces the built-in check", refs: []meta.DependencyReference{ref("failed", "dep.metadata.name == 'failed'")}},
		{name: "readyExpr false", refs: []meta.DependencyReference{ref("ready", "dep.metadata.name == 'other'")}, want: "dependency 'ns/ready' is not ready according to readyExpr eval"},
		{name: "readyExpr additive", refs: []meta.DependencyReference{ref("failed", "dep.metadata.name == 'failed'")}, additive: true, want: "dependency 'ns/failed' is not ready"},
		{name: "readyExpr sees self", refs: []meta.DependencyReference{ref("ready", "self.metadata.name == 'dependent'")}},
		{name: "readyExpr does not compile", refs: []meta.DependencyReference{ref("ready", "dep.spec.suspend")}, want: "dependency 'ns/ready': ", stalls: true},
		{name: "readyExpr fails to evaluate", refs: []meta.DependencyReference{ref("ready", "dep.spec.nothing == true")}, want: "dependency 'ns/ready': "},
		{name: "kind's extra check", refs: []meta.DependencyReference{ref("ready", "")}, extra: func(*helmv2.HelmRelease) error { return errors.New("revision is not up to date") }, want: "revision is not up to date"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checker := dependency.Checker[*helmv2.HelmRelease]{Kind: kind, Reader: c, Cache: c, Additive: tt.additive, RequeueAfter: 42}
			err := checker.Check(context.Background(), release("dependent", "", 1, 0, tt.refs...), tt.extra)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("err = %v, want ready", err)
				}
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q…", err, tt.want)
			}
			if tt.stalls {
				if !errs.IsStalling(err) || errs.Reason(err, "") != meta.InvalidCELExpressionReason {
					t.Errorf("err = %#v, want Stalling InvalidCELExpression", err)
				}
				return
			}
			w, ok := errs.AsWaiting(err)
			if !ok || w.Reason != meta.DependencyNotReadyReason || w.RequeueAfter != 42 {
				t.Errorf("err = %#v, want Waiting DependencyNotReady after --requeue-dependency", err)
			}
		})
	}

	t.Run("cycle", func(t *testing.T) {
		checker := dependency.Checker[*helmv2.HelmRelease]{Kind: kind, Reader: c, Cache: c}
		err := checker.Check(context.Background(), cycleA, nil)
		if !errors.Is(err, dependency.ErrCycle) || err.Error() != "dependency cycle: ns/a -> ns/b -> ns/a" {
			t.Errorf("err = %v, want the cycle named", err)
		}
		// Depending on a cycle is waiting, not being part of it.
		outside := release("outside", "", 1, 0, meta.DependencyReference{Name: "a"})
		if err := checker.Check(context.Background(), outside, nil); errors.Is(err, dependency.ErrCycle) || err == nil {
			t.Errorf("outside the cycle: %v", err)
		}
	})
}

func TestIndexKeys(t *testing.T) {
	hr := release("x", "", 1, 0, meta.DependencyReference{Name: "a"}, meta.DependencyReference{Name: "b", Namespace: "other"})
	got := dependency.IndexKeys(hr)
	if strings.Join(got, ",") != "ns/a,other/b" {
		t.Errorf("keys = %v", got)
	}
	if dependency.IndexKeys(&metav1.PartialObjectMetadata{}) != nil {
		t.Error("keys of an object without dependsOn")
	}
}
