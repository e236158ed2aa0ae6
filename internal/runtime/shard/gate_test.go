package shard

import (
	"context"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/event"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// TestGateKnowsTheObjectsThatExist: the gate's known objects follow the
// watch's create and delete events, so a fleet with churn does not grow
// the map, and a request that reaches the gate after the delete event
// (the event's own, or a requeue) does not bring the object back.
func TestGateKnowsTheObjectsThatExist(t *testing.T) {
	for _, tc := range []struct {
		name  string
		steps string // c: create, d: delete, r: reconcile request; each of object "a" unless upper case ("B")
		want  int
	}{
		{name: "created objects are known", steps: "cC", want: 2},
		{name: "a request for an object never seen adds nothing", steps: "r", want: 0},
		{name: "a deleted object is dropped", steps: "cd", want: 0},
		{name: "a request after the delete does not bring it back", steps: "crdr", want: 0},
		{name: "only the deleted one is dropped", steps: "cCdR", want: 1},
		{name: "an object created again is known again", steps: "cdc", want: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := NewMember(Config{Client: fake.NewClientset(), Namespace: "weir-system", Group: "weir-all",
				Identity: "a", LeaseDuration: 3 * time.Second, RenewDeadline: 2 * time.Second, Log: logr.Discard()})
			if err != nil {
				t.Fatal(err)
			}
			next := crreconcile.Func(func(context.Context, crreconcile.Request) (ctrl.Result, error) { return ctrl.Result{}, nil })
			r, _, track := m.Gate("ConfigMap", &corev1.ConfigMap{}, next)
			g := r.(*Gate)
			ctx := context.Background()
			for _, s := range tc.steps {
				name := "a"
				if s >= 'A' && s <= 'Z' {
					name, s = "b", s+'a'-'A'
				}
				obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
				switch s {
				case 'c':
					track.Create(ctx, event.CreateEvent{Object: obj}, nil)
				case 'd':
					track.Delete(ctx, event.DeleteEvent{Object: obj}, nil)
				case 'r':
					if _, err := g.Reconcile(ctx, crreconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: name}}); err != nil {
						t.Fatal(err)
					}
				}
			}
			if got := g.knownCount(); got != tc.want {
				t.Errorf("after %q the gate knows %d objects, want %d", tc.steps, got, tc.want)
			}
		})
	}
}
