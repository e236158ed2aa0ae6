package helmrelease

import (
	"context"
	"errors"
	"fmt"
	"time"

	releasev1 "helm.sh/helm/v4/pkg/release/v1"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	"github.com/weir-gitops/weir/internal/apply/health"
	"github.com/weir-gitops/weir/internal/apply/ssa"
	"github.com/weir-gitops/weir/internal/helm/release"
	"github.com/weir-gitops/weir/internal/runtime/errs"
)

// invalidCELReason is Flux's reason for an expression that does not
// compile.
const invalidCELReason = "InvalidCELExpression"

// customHealthInterval is how often the objects healthCheckExprs judge are
// read.
const customHealthInterval = 2 * time.Second

// compileHealthExprs checks spec.healthCheckExprs before any action: an
// expression that does not compile can never work, so the HelmRelease is
// Stalled rather than installed without the checks it asks for.
func compileHealthExprs(obj *helmv2.HelmRelease) (*health.Checks, error) {
	if len(obj.Spec.HealthCheckExprs) == 0 {
		return nil, nil
	}
	checks, err := health.Compile(obj.Spec.HealthCheckExprs)
	if err != nil {
		return nil, &errs.Stalling{Err: fmt.Errorf("Reconciliation failed terminally due to configuration error: %w", err), Reason: invalidCELReason} //nolint:staticcheck // ST1005: Flux's message
	}
	return checks, nil
}

// customHealth applies spec.healthCheckExprs to the release an install or
// upgrade just wrote: the objects of its manifest whose kind an expression
// names are waited for until the expressions say Current, failing early
// when one says Failed, for what is left of the action's timeout. Helm v4
// takes custom judges for its own wait only as github.com/fluxcd/cli-utils
// status readers, a module weir does not import; judging right after
// Helm's wait (which has judged every object by kstatus) gives Flux's
// outcome: a release whose custom resources fail or time out is failed, in
// Helm's storage too, and goes to remediation like any failed action.
func (x *run) customHealth(ctx context.Context, rel *releasev1.Release, action release.Action, started time.Time, disableWait bool) error {
	checks, err := compileHealthExprs(x.obj)
	if err != nil || checks == nil || rel == nil || !x.helm.WaitsWithPoller(x.obj, disableWait) {
		return err
	}
	objs, err := release.ManifestObjects(rel, x.r.Client.IsObjectNamespaced)
	if err != nil {
		return err
	}
	var judged []ssa.ObjMetadata
	for _, o := range objs {
		if checks.For(o.GroupVersionKind().GroupKind()) != nil {
			judged = append(judged, ssa.ObjMetadataOf(o))
		}
	}
	if len(judged) == 0 {
		return nil
	}
	c, err := x.r.clusterClient(x.obj)
	if err != nil {
		return err
	}
	timeout := max(release.ActionTimeout(x.obj, action)-time.Since(started), time.Second)
	waitErr := ssa.NewManager(c, ssa.Options{}).WaitFor(ctx, judged, ssa.WaitOptions{
		Timeout: timeout, Interval: customHealthInterval, FailFast: true, Status: checks.Status,
	})
	if waitErr == nil {
		return nil
	}
	if err := x.helm.MarkFailed(rel, waitErr.Error()); err != nil {
		return errors.Join(waitErr, err)
	}
	return waitErr
}
