package parked

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/internal/apply/ssa"
)

// oneObject is a reader that holds at most one object, and counts its reads.
type oneObject struct {
	obj   *unstructured.Unstructured // nil: not found
	reads int
}

func (o *oneObject) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	o.reads++
	if o.obj == nil {
		return apierrors.NewNotFound(schema.GroupResource{Resource: "deployments"}, key.Name)
	}
	obj.(*unstructured.Unstructured).Object = o.obj.DeepCopy().Object
	return nil
}

func (o *oneObject) List(context.Context, client.ObjectList, ...client.ListOption) error { return nil }

func deploymentAt(uid, resourceVersion string, generation int64, marker string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("apps/v1")
	u.SetKind("Deployment")
	u.SetNamespace("ns")
	u.SetName("app")
	u.SetUID(types.UID(uid))
	u.SetResourceVersion(resourceVersion)
	u.SetGeneration(generation)
	u.SetAnnotations(map[string]string{"from": marker})
	return u
}

// TestWrittenReader checks which copy a health check's look reads of an
// object its apply wrote: the apply's answer, the watch cache's copy, or
// the API server's, and that the objects it did not write are read
// through the cache.
func TestWrittenReader(t *testing.T) {
	id := ssa.ObjMetadata{GroupKind: schema.GroupKind{Group: "apps", Kind: "Deployment"}, Namespace: "ns", Name: "app"}
	answer := deploymentAt("u1", "10", 2, "answer")
	tests := []struct {
		name     string
		action   ssa.Action // "": not written by this apply
		answered bool       // the change set kept the answer
		settled  bool       // the watches follow the wait
		cached   *unstructured.Unstructured
		cel      bool // a CEL check reads the kind whole
		want     string
		kube     int // reads of the API server
	}{
		{name: "not written: the cache", cached: deploymentAt("u1", "9", 1, "cache"), want: "cache"},
		{name: "first look: the answer", action: ssa.Created, answered: true, want: "answer"},
		{name: "first look, configured: the answer", action: ssa.Configured, answered: true, want: "answer"},
		{name: "first look without an answer: the API server", action: ssa.Created, want: "kube", kube: 1},
		{name: "created, not in the cache yet: the answer", action: ssa.Created, answered: true, settled: true, want: "answer"},
		{name: "created, the old object in the cache: the answer", action: ssa.Created, answered: true, settled: true,
			cached: deploymentAt("u0", "5", 3, "cache"), want: "answer"},
		{name: "created, in the cache: the cache", action: ssa.Created, answered: true, settled: true,
			cached: deploymentAt("u1", "11", 2, "cache"), want: "cache"},
		{name: "configured, the write in the cache: the cache", action: ssa.Configured, answered: true, settled: true,
			cached: deploymentAt("u1", "10", 2, "cache"), want: "cache"},
		{name: "configured, a later generation in the cache: the cache", action: ssa.Configured, answered: true, settled: true,
			cached: deploymentAt("u1", "12", 3, "cache"), want: "cache"},
		{name: "configured, maybe before the write in the cache: the API server", action: ssa.Configured, answered: true,
			settled: true, cached: deploymentAt("u1", "8", 2, "cache"), want: "kube", kube: 1},
		{name: "configured, not in the cache: the API server", action: ssa.Configured, answered: true, settled: true,
			want: "kube", kube: 1},
		{name: "CEL kind: the API server", action: ssa.Created, answered: true, settled: true, cel: true,
			cached: deploymentAt("u1", "11", 2, "cache"), want: "kube", kube: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			written := map[ssa.ObjMetadata]ssa.Action{}
			if tt.action != "" {
				written[id] = tt.action
			}
			answers := func(ssa.ObjMetadata) *unstructured.Unstructured {
				if tt.answered {
					return answer
				}
				return nil
			}
			kube := &oneObject{obj: deploymentAt("u1", "13", 2, "kube")}
			r := &writtenReader{Reader: &oneObject{obj: tt.cached}, kube: kube, written: written, answers: answers,
				uncached: func(schema.GroupKind) bool { return tt.cel }, settled: tt.settled}
			got := &unstructured.Unstructured{}
			got.SetGroupVersionKind(answer.GroupVersionKind())
			if err := r.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "app"}, got); err != nil {
				t.Fatal(err)
			}
			if from := got.GetAnnotations()["from"]; from != tt.want {
				t.Errorf("read the %s's copy, want the %s's", from, tt.want)
			}
			if kube.reads != tt.kube {
				t.Errorf("%d reads of the API server, want %d", kube.reads, tt.kube)
			}
		})
	}
}
