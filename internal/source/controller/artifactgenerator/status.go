package artifactgenerator

import (
	"fmt"

	"github.com/weir-gitops/weir/api/meta"
	sourceextensionsv1beta1 "github.com/weir-gitops/weir/api/sourceextensions/v1beta1"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
	"github.com/weir-gitops/weir/internal/runtime/errs"
	"github.com/weir-gitops/weir/internal/runtime/reconcile"
)

// conditionTypes are the conditions an ArtifactGenerator carries, as
// source-watcher writes them.
var conditionTypes = reconcile.Conditions{
	Owned:    []string{meta.ReadyCondition, meta.ReconcilingCondition, meta.StalledCondition},
	Negative: []string{meta.StalledCondition},
}

// applyStatus computes the status from what the phases observed (out) and
// how they ended (err). It reads nothing else and writes nothing else, so
// it is tested without an API server.
func applyStatus(obj *sourceextensionsv1beta1.ArtifactGenerator, out *outcome, err error) {
	if token, ok := meta.ReconcileAnnotationValue(obj.GetAnnotations()); ok {
		obj.Status.LastHandledReconcileAt = token
	}
	if err != nil {
		// What this run generated before it failed joins the inventory,
		// so a later run or the deletion finds it.
		if out != nil {
			obj.Status.Inventory = merge(obj.Status.Inventory, out.inventory)
		}
		conditions.MarkError(obj, errs.Reason(err, meta.ReconciliationFailedReason), failure(out, err))
		return
	}
	if out.upToDate {
		return
	}
	obj.Status.Inventory = out.inventory
	obj.Status.ObservedSourcesDigest = out.digest
	conditions.MarkReady(obj, meta.SucceededReason, "%s", succeeded(len(out.inventory)))
}

func succeeded(n int) string {
	return fmt.Sprintf("reconciliation succeeded, generated %d artifact(s)", n)
}

// failure is the run's error as source-watcher words it: the artifact
// whose build or apply failed first.
func failure(out *outcome, err error) error {
	if out == nil || out.failedArtifact == "" {
		return err
	}
	return fmt.Errorf("%s %s failed: %w", out.failedArtifact, out.failedStep, err)
}

// merge is old with each of refs added or updated by name.
func merge(old, refs []sourceextensionsv1beta1.ExternalArtifactReference) []sourceextensionsv1beta1.ExternalArtifactReference {
	out := append([]sourceextensionsv1beta1.ExternalArtifactReference(nil), old...)
	for _, ref := range refs {
		found := false
		for i := range out {
			if out[i].Namespace == ref.Namespace && out[i].Name == ref.Name {
				out[i], found = ref, true
			}
		}
		if !found {
			out = append(out, ref)
		}
	}
	return out
}
