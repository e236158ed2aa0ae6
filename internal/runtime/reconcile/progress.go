package reconcile

import (
	"context"
	"fmt"

	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
	"github.com/weir-gitops/weir/internal/runtime/patch"
)

type patcherKey struct{}

func withPatcher(ctx context.Context, h *patch.Helper) context.Context {
	return context.WithValue(ctx, patcherKey{}, h)
}

// Patch sends what the phases changed in obj so far (status, finalizers)
// to the API server, in the middle of a reconcile run by Run: the final
// patch then sends only what changed after it. Outside Run (a unit test
// calling a phase directly) it does nothing.
func Patch(ctx context.Context, obj Object) error {
	h, ok := ctx.Value(patcherKey{}).(*patch.Helper)
	if !ok {
		return nil
	}
	if err := h.Patch(ctx, obj); err != nil {
		return fmt.Errorf("updating the status: %w", err)
	}
	return nil
}

// PatchCopy is Patch for snapshot, a copy of the object written from
// another goroutine while the phase goes on with the object itself (a
// progress phase a timer writes late). It returns the resourceVersion the
// write left, empty when it sent nothing: the caller sets it on the
// object before the run patches it again (patch.Helper.PatchCopy).
func PatchCopy(ctx context.Context, snapshot Object) (string, error) {
	h, ok := ctx.Value(patcherKey{}).(*patch.Helper)
	if !ok {
		return "", nil
	}
	version, err := h.PatchCopy(ctx, snapshot)
	if err != nil {
		return "", fmt.Errorf("updating the status: %w", err)
	}
	return version, nil
}

// Progress records that a long phase begins, so that `kubectl get`, kstatus
// and the flux CLI's waits see the object as in progress while it runs:
// Reconciling=True with reason Progressing and the message, no Stalled,
// and the status is patched at once. Ready is left as it is; see
// ProgressUnknown. Flux's controllers do this before fetching, building,
// applying and health checking.
func Progress(ctx context.Context, obj Object, messageFormat string, args ...any) error {
	conditions.MarkTrue(obj, meta.ReconcilingCondition, meta.ProgressingReason, messageFormat, args...)
	conditions.Delete(obj, meta.StalledCondition)
	return Patch(ctx, obj)
}

// ProgressUnknown is Progress that also sets Ready=Unknown (reason
// Progressing) with the same message: the last result no longer stands.
func ProgressUnknown(ctx context.Context, obj Object, messageFormat string, args ...any) error {
	conditions.MarkReconciling(obj, meta.ProgressingReason, messageFormat, args...)
	return Patch(ctx, obj)
}
