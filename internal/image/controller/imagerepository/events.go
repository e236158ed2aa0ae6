package imagerepository

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	imagev1 "github.com/weir-gitops/weir/api/image/v1"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
)

// recordEvents emits Flux's events: see events.Recorder.ReadyTransition,
// and a Warning each scan that drops tags beyond the cap.
func (r *Reconciler) recordEvents(ctx context.Context, obj *imagev1.ImageRepository, before *metav1.Condition, out *outcome) {
	if r.Events == nil {
		return
	}
	r.Events.ReadyTransition(ctx, obj, before)
	if out.scan != nil && out.dropped > 0 {
		c := conditions.Get(obj, TagLimitCondition)
		r.Events.Warning(ctx, obj, TagLimitReason, nil, "%s", c.Message)
	}
}
