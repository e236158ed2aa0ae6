package kustomization

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/weir-gitops/weir/internal/apply/ssa"
)

// earlyApply starts the apply of a large build while it is still built
// (docs/design/0020-large-and-idle-fleets.md, decision 6): when kustomize
// builds it in runs and all its objects are of one apply stage, each
// run's objects are read and dry-run (ssa.EarlyPlans) as soon as they are
// built. Nothing is written before Apply has the whole stage validated.
type earlyApply struct {
	ctx context.Context
	mgr *ssa.Manager
	// options returns the options to apply with; called once, when the
	// plans start or else when Apply does (it takes the apply memo).
	options func() ssa.ApplyOptions
	opts    ssa.ApplyOptions
	plans   *ssa.EarlyPlans
}

// runs is kustomize.BuildOptions.Runs.
func (e *earlyApply) runs(kinds []schema.GroupKind) func([]*unstructured.Unstructured) {
	if e.plans != nil || len(kinds) == 0 {
		return nil
	}
	opts := e.applyOptions()
	if !ssa.OneStage(kinds, opts.CustomStageKinds) {
		return nil
	}
	e.plans = e.mgr.EarlyPlans(e.ctx, opts)
	e.opts.Early = e.plans
	return e.plans.Add
}

// applyOptions returns the options of both the early plans and Apply.
func (e *earlyApply) applyOptions() ssa.ApplyOptions {
	if e.options != nil {
		e.opts, e.options = e.options(), nil
	}
	return e.opts
}

// stop ends the early plans that Apply did not take (the build failed).
func (e *earlyApply) stop() {
	if e.plans != nil {
		e.plans.Stop()
	}
}
