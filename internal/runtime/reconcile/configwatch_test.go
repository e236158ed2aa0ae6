package reconcile_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/weir-gitops/weir/internal/runtime/reconcile"
)

// TestConfigChanged: the labelled-config watch passes a matching object's
// creation, deletion and data change, including the change that removes
// the label, and nothing of unlabelled objects or metadata-only writes.
func TestConfigChanged(t *testing.T) {
	p := reconcile.ConfigChanged{Selector: labels.SelectorFromSet(labels.Set{"reconcile.fluxcd.io/watch": "Enabled"})}
	watched := map[string]string{"reconcile.fluxcd.io/watch": "Enabled"}
	secret := func(l map[string]string, value string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s", Labels: l}, Data: map[string][]byte{"values.yaml": []byte(value)}}
	}
	cm := func(l map[string]string, value string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", Labels: l}, Data: map[string]string{"values.yaml": value}}
	}
	tests := []struct {
		name       string
		old, newer any
		want       bool
	}{
		{"Secret data", secret(watched, "a"), secret(watched, "b"), true},
		{"Secret metadata only", secret(watched, "a"), func() *corev1.Secret {
			s := secret(watched, "a")
			s.Annotations = map[string]string{"x": "y"}
			return s
		}(), false},
		{"unlabelled Secret", secret(nil, "a"), secret(nil, "b"), false},
		{"label removed with the change", secret(watched, "a"), secret(nil, "b"), true},
		{"ConfigMap data", cm(watched, "a"), cm(watched, "b"), true},
		{"ConfigMap binaryData", cm(watched, "a"), func() *corev1.ConfigMap { c := cm(watched, "a"); c.BinaryData = map[string][]byte{"k": {1}}; return c }(), true},
		{"ConfigMap unchanged", cm(watched, "a"), cm(watched, "a"), false},
	}
	for _, tt := range tests {
		e := event.UpdateEvent{}
		switch o := tt.old.(type) {
		case *corev1.Secret:
			e.ObjectOld, e.ObjectNew = o, tt.newer.(*corev1.Secret)
		case *corev1.ConfigMap:
			e.ObjectOld, e.ObjectNew = o, tt.newer.(*corev1.ConfigMap)
		}
		if got := p.Update(e); got != tt.want {
			t.Errorf("%s: Update = %v, want %v", tt.name, got, tt.want)
		}
	}
	if !p.Create(event.CreateEvent{Object: secret(watched, "a")}) || p.Create(event.CreateEvent{Object: secret(nil, "a")}) ||
		!p.Delete(event.DeleteEvent{Object: cm(watched, "a")}) || p.Generic(event.GenericEvent{Object: cm(watched, "a")}) {
		t.Error("Create/Delete pass matching objects only; Generic passes nothing")
	}
	if got := reconcile.RefKey("Secret", "apps", "values"); got != "Secret/apps/values" {
		t.Errorf("RefKey = %q", got)
	}
}
