package events

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
)

// ReadyTransition records the event Flux's image-reflector-controller
// records after a reconcile, judged from the Ready condition before
// (before, nil when there was none) and now: Normal with the Ready message
// when the object became ready, or stayed ready with another message (new
// tags, a new latest image); Warning with it while not ready; nothing when
// a ready object is unchanged. It reports whether an event was recorded.
func (r *Recorder) ReadyTransition(ctx context.Context, obj interface {
	client.Object
	conditions.Object
}, before *metav1.Condition) bool {
	now := conditions.Get(obj, meta.ReadyCondition)
	if r == nil || now == nil {
		return false
	}
	wasReady := before != nil && before.Status == metav1.ConditionTrue
	switch {
	case now.Status != metav1.ConditionTrue:
		r.Warning(ctx, obj, now.Reason, nil, "%s", now.Message)
	case !wasReady || before.Message != now.Message:
		r.Normal(ctx, obj, now.Reason, nil, "%s", now.Message)
	default:
		return false
	}
	return true
}
