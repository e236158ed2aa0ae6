package parked

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/apply/health"
	"github.com/weir-gitops/weir/internal/apply/ssa"
)

var owner = types.NamespacedName{Namespace: "ns", Name: "owner"}

func configMap(name string) ssa.ObjMetadata {
	return ssa.ObjMetadata{GroupKind: schema.GroupKind{Kind: "ConfigMap"}, Namespace: "ns", Name: name}
}

// TestFind: a wait holds for the generation, revision and request it was
// parked for; asked for any other, it is dropped.
func TestFind(t *testing.T) {
	parkedFor := For{Generation: 2, Revision: "main@sha1:1", Token: "t"}
	tests := []struct {
		name string
		f    For
		held bool
	}{
		{"the same", parkedFor, true},
		{"a new generation", For{Generation: 3, Revision: "main@sha1:1", Token: "t"}, false},
		{"a new revision", For{Generation: 2, Revision: "main@sha1:2", Token: "t"}, false},
		{"a new request", For{Generation: 2, Revision: "main@sha1:1", Token: "u"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &Waits[string]{}
			p.Park(Spec[string]{Owner: owner, For: parkedFor, Objects: []ssa.ObjMetadata{configMap("a")}, Carry: "sha256:abc"})
			w := p.Find(owner, tt.f)
			if (w != nil) != tt.held {
				t.Fatalf("Find = %v, want held %v", w, tt.held)
			}
			if w != nil && w.Carry() != "sha256:abc" {
				t.Errorf("Carry = %q", w.Carry())
			}
			if again := p.Find(owner, parkedFor); (again != nil) != tt.held {
				t.Errorf("after Find, the wait is there = %v, want %v", again != nil, tt.held)
			}
		})
	}
}

// TestJudge: one look decides passed, failed early, timed out or in
// progress, and only a wait in progress stays parked.
func TestJudge(t *testing.T) {
	start := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	failing, err := health.Compile([]meta.HealthCheckExpressions{{APIVersion: "v1", Kind: "ConfigMap", Current: "false", Failed: "true"}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		objects  []ssa.ObjMetadata
		checks   *health.Checks
		failFast bool
		elapsed  time.Duration
		passed   bool
		err      string // prefix
		after    time.Duration
	}{
		{name: "all Current", objects: []ssa.ObjMetadata{configMap("present")}, elapsed: 3 * time.Second, passed: true},
		{name: "one missing: poll", objects: []ssa.ObjMetadata{configMap("present"), configMap("missing")},
			elapsed: time.Second, after: 5 * time.Second},
		{name: "one missing, near the deadline", objects: []ssa.ObjMetadata{configMap("missing")},
			elapsed: 58 * time.Second, after: 2 * time.Second},
		{name: "one missing at the deadline", objects: []ssa.ObjMetadata{configMap("missing")},
			elapsed: time.Minute, err: "timeout waiting for: [ConfigMap/ns/missing status: 'NotFound': object not found]"},
		{name: "failed, fail-fast", objects: []ssa.ObjMetadata{configMap("present")}, checks: failing, failFast: true,
			elapsed: time.Second, err: "failed early due to stalled resources: [ConfigMap/ns/present status: 'Failed'"},
		{name: "failed, no fail-fast: wait", objects: []ssa.ObjMetadata{configMap("present")}, checks: failing,
			elapsed: time.Second, after: 5 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now := start
			p := &Waits[struct{}]{PollInterval: 5 * time.Second, FailFast: tt.failFast, Now: func() time.Time { return now }}
			kube := fakeClient(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "present"}})
			w := p.Park(Spec[struct{}]{Owner: owner, Objects: tt.objects, Checks: tt.checks, Deadline: start.Add(time.Minute)})
			if !w.Start().Equal(start) {
				t.Errorf("Start = %s, want %s", w.Start(), start)
			}
			now = start.Add(tt.elapsed)
			v := p.Judge(context.Background(), ssa.NewManager(kube, ssa.Options{}), kube, w)
			if v.Passed != tt.passed || v.Passed && v.Took != tt.elapsed {
				t.Errorf("Passed %v in %s, want %v in %s", v.Passed, v.Took, tt.passed, tt.elapsed)
			}
			if got := errText(v.Err); !strings.HasPrefix(got, tt.err) || (tt.err == "") != (got == "") {
				t.Errorf("Err = %q, want %q…", got, tt.err)
			}
			if v.InProgress() && v.After != tt.after {
				t.Errorf("After = %s, want %s", v.After, tt.after)
			}
			if parkedStill := p.Find(owner, For{}) != nil; parkedStill != v.InProgress() {
				t.Errorf("parked after the look = %v, in progress %v", parkedStill, v.InProgress())
			}
		})
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func fakeClient(objects ...client.Object) client.Client {
	mapper := apimeta.NewDefaultRESTMapper([]schema.GroupVersion{corev1.SchemeGroupVersion})
	mapper.Add(corev1.SchemeGroupVersion.WithKind("ConfigMap"), apimeta.RESTScopeNamespace)
	return fake.NewClientBuilder().WithRESTMapper(mapper).WithObjects(objects...).Build()
}
