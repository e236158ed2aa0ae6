package imageupdateautomation

import (
	"context"
	"fmt"
	"strings"

	ctrl "sigs.k8s.io/controller-runtime"

	imagev1 "github.com/weir-gitops/weir/api/image/v1"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
)

// recordEvents tells people what changed, as Flux does: a push (its
// summary and the commit message), a recovery, or a failure. A run that
// changed nothing is only logged.
func (r *Reconciler) recordEvents(ctx context.Context, obj *imagev1.ImageUpdateAutomation, out *outcome, err error) {
	ready := conditions.Get(obj, meta.ReadyCondition)
	switch {
	case err != nil && ready != nil:
		r.warning(ctx, obj, ready.Reason, ready.Message)
	case out != nil && out.push != nil:
		r.normal(ctx, obj, map[string]string{revisionMetadataKey: out.push.revision}, pushSummary(out.push))
	case !out.wasReady:
		r.normal(ctx, obj, nil, readyMessage)
	case out != nil && out.skipped:
		ctrl.LoggerFrom(ctx).V(1).Info("no change since last reconciliation")
	default:
		ctrl.LoggerFrom(ctx).V(1).Info(readyMessage)
	}
}

func (r *Reconciler) normal(ctx context.Context, obj *imagev1.ImageUpdateAutomation, metadata map[string]string, msg string) {
	ctrl.LoggerFrom(ctx).Info(firstLine(msg))
	if r.Events != nil {
		r.Events.Normal(ctx, obj, meta.SucceededReason, metadata, "%s", msg)
	}
}

func (r *Reconciler) warning(ctx context.Context, obj *imagev1.ImageUpdateAutomation, reason, msg string) {
	if r.Events != nil {
		r.Events.Warning(ctx, obj, reason, nil, "%s", msg)
	}
}

// pushSummary is Flux's event message for a push: "pushed commit '<short
// sha>' to branch '<branch>'", the refspec when one was pushed too, then
// the commit message on the following lines.
func pushSummary(p *pushed) string {
	var b strings.Builder
	fmt.Fprintf(&b, "pushed commit '%s' to branch '%s'", short(p.commit), p.branch)
	if p.refspec != "" {
		fmt.Fprintf(&b, " and refspecs '%s'", p.refspec)
	}
	if p.message != "" {
		b.WriteString("\n" + p.message)
	}
	return b.String()
}

func short(hash string) string {
	if len(hash) > 7 {
		return hash[:7]
	}
	return hash
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// revisionMetadataKey is Flux's event metadata key for a revision.
const revisionMetadataKey = "revision"
