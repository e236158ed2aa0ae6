package imageupdateautomation

import (
	"context"
	"errors"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	imagev1 "github.com/weir-gitops/weir/api/image/v1"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/auth"
	"github.com/weir-gitops/weir/internal/auth/azure"
	"github.com/weir-gitops/weir/internal/auth/githubapp"
	"github.com/weir-gitops/weir/internal/image/setters"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
	"github.com/weir-gitops/weir/internal/runtime/errs"
	"github.com/weir-gitops/weir/internal/runtime/events"
	"github.com/weir-gitops/weir/internal/runtime/metrics"
	"github.com/weir-gitops/weir/internal/runtime/reconcile"
	"github.com/weir-gitops/weir/internal/source/git"
)

// ControllerName is Flux's image-automation-controller: the event source
// and the field manager of the GitRepository annotation.
const ControllerName = meta.ImageAutomationManager

// Reconciler reconciles ImageUpdateAutomations.
type Reconciler struct {
	Client client.Client
	// APIReader reads Secrets uncached; Client when nil.
	APIReader client.Reader
	// Events may be nil: no events are recorded then.
	Events *events.Recorder
	// Metrics may be nil.
	Metrics *metrics.Recorder
	// Git resolves the branch tip for the no-op check; git.NewClient()
	// when nil.
	Git git.Client
	// GitHubApps keeps the installation tokens of GitRepositories with
	// provider github; githubapp.Default when nil.
	GitHubApps *githubapp.Cache
	// Auth decides whose cloud identity provider azure uses (the
	// ObjectLevelWorkloadIdentity gate, --default-service-account) and
	// caches its tokens; Azure gets them (azure.Default when nil).
	Auth  *auth.Settings
	Azure *azure.Provider
	// NoCrossNamespaceRefs is --no-cross-namespace-refs.
	NoCrossNamespaceRefs bool
	// ForcePushBranch is the GitForcePushBranch gate: a push branch other
	// than the checkout branch is rebuilt from the checkout branch and
	// force-pushed. Off, updates go on top of the push branch.
	ForcePushBranch bool
	// Jitter is --interval-jitter-percentage.
	Jitter float64
	// Now is the clock; time.Now when nil.
	Now func() time.Time

	// beforePush, in tests, runs after the commit and before each push
	// attempt (0, then 1 for the retry): the seam to lose a push race.
	beforePush func(obj *imagev1.ImageUpdateAutomation, attempt int)
}

// Reconcile runs the shared skeleton (internal/runtime/reconcile) with this
// kind's phases.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	d := reconcile.Driver{Client: r.Client, Metrics: r.Metrics, Jitter: r.Jitter, Now: r.Now}
	return reconcile.Run(ctx, d, req, &imagev1.ImageUpdateAutomation{}, r.kind())
}

// kind is the ImageUpdateAutomation as the skeleton runs it.
func (r *Reconciler) kind() reconcile.Kind[*imagev1.ImageUpdateAutomation, *outcome] {
	return reconcile.Kind[*imagev1.ImageUpdateAutomation, *outcome]{
		Name:       imagev1.ImageUpdateAutomationKind,
		Conditions: reconcile.Conditions{Owned: []string{meta.ReadyCondition, meta.ReconcilingCondition, meta.StalledCondition}},
		Suspended:  func(obj *imagev1.ImageUpdateAutomation) bool { return obj.Spec.Suspend },
		Finalize:   finalize,
		Begin: func(_ context.Context, obj *imagev1.ImageUpdateAutomation) *outcome {
			return &outcome{runTime: r.now(), wasReady: conditions.IsReady(obj)}
		},
		Phases: []reconcile.Phase[*imagev1.ImageUpdateAutomation, *outcome]{r.reconcile},
		Status: applyStatus,
		Events: r.recordEvents,
	}
}

// outcome is what the phases observed; applyStatus turns it into status.
type outcome struct {
	// runTime is when the run began.
	runTime time.Time
	// wasReady is whether the object was Ready before the run.
	wasReady bool
	// policies are the images of the policies the run took into account.
	policies imagev1.ObservedPolicies
	// sourceRevision is the checked-out revision, <branch>@sha1:<hex>.
	sourceRevision string
	// skipped is true when nothing changed since the last run (policies
	// and branch tip), so nothing was cloned.
	skipped bool
	// push is set when a commit was pushed.
	push *pushed
}

// pushed describes a pushed commit.
type pushed struct {
	commit   string
	branch   string
	refspec  string
	message  string
	at       time.Time
	revision string
}

func (r *Reconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// reconcile runs the phases in order and stops at the first error.
func (r *Reconciler) reconcile(ctx context.Context, obj *imagev1.ImageUpdateAutomation, out *outcome) error {
	obj.Status.LastAutomationRunTime = &metav1.Time{Time: out.runTime}
	if err := begin(ctx, obj); err != nil {
		return err
	}
	policies, err := r.policies(ctx, obj)
	if err != nil {
		return err
	}
	out.policies = observe(policies)
	src, err := r.source(ctx, obj)
	if err != nil {
		return err
	}
	if r.upToDate(ctx, obj, src, out) {
		out.skipped = true
		out.sourceRevision = obj.Status.ObservedSourceRevision
		return nil
	}
	return r.update(ctx, obj, src, setters.ValuesFor(policies), out)
}

// begin marks the run as under way when there is news to show: a new
// generation (Ready Unknown) or a reconcile request not handled yet. The
// status is patched at once; a periodic run leaves conditions alone.
func begin(ctx context.Context, obj *imagev1.ImageUpdateAutomation) error {
	token, requested := meta.ReconcileAnnotationValue(obj.GetAnnotations())
	switch {
	case obj.Generation != obj.Status.ObservedGeneration:
		return reconcile.ProgressUnknown(ctx, obj, "processing object: new generation %d -> %d", obj.Status.ObservedGeneration, obj.Generation)
	case requested && token != obj.Status.LastHandledReconcileAt:
		return reconcile.Progress(ctx, obj, "reconciliation in progress")
	}
	return nil
}

// upToDate reports whether a full run can be skipped: the policies' images
// are those the last run saw, no other branch or refspec is pushed to, and
// the checkout branch still points at the commit the last run saw (one
// ref advertisement, no objects downloaded).
func (r *Reconciler) upToDate(ctx context.Context, obj *imagev1.ImageUpdateAutomation, src *gitSource, out *outcome) bool {
	if !conditions.IsReady(obj) || src.switchBranch() || src.refspec != "" || obj.Status.ObservedSourceRevision == "" {
		return false
	}
	if !samePolicies(obj.Status.ObservedPolicies, out.policies) {
		return false
	}
	gitClient := r.Git
	if gitClient == nil {
		gitClient = git.NewClient()
	}
	ctx, cancel := context.WithTimeout(ctx, src.timeout)
	defer cancel()
	rev, err := gitClient.Remote(ctx, src.url, src.auth).Resolve(git.Reference{Branch: src.checkoutBranch})
	if err != nil {
		ctrl.LoggerFrom(ctx).V(1).Info("cannot resolve the checkout branch; running in full", "error", err.Error())
		return false
	}
	return rev == obj.Status.ObservedSourceRevision
}

// finalize releases the finalizer: an automation owns nothing outside
// itself (what it pushed stays in Git).
func finalize(_ context.Context, obj *imagev1.ImageUpdateAutomation) error {
	controllerutil.RemoveFinalizer(obj, meta.Finalizer)
	return nil
}

// stalled wraps a configuration error that no retry can fix.
func stalled(reason, format string, args ...any) error {
	return &errs.Stalling{Err: fmt.Errorf(format, args...), Reason: reason}
}

// failed wraps a failure worth retrying with backoff.
func failed(reason string, err error) error {
	var s *errs.Stalling
	if errors.As(err, &s) {
		return err
	}
	return &errs.Generic{Err: err, Reason: reason}
}
