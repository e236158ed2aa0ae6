package helmrelease

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/apply/healthwatch"
	"github.com/weir-gitops/weir/internal/apply/restconfig"
	"github.com/weir-gitops/weir/internal/helm/release"
	"github.com/weir-gitops/weir/internal/runtime/errs"
	"github.com/weir-gitops/weir/internal/runtime/events"
	"github.com/weir-gitops/weir/internal/runtime/metrics"
	"github.com/weir-gitops/weir/internal/runtime/reconcile"
	"github.com/weir-gitops/weir/internal/source/artifact"
)

// ControllerName is the event source and field manager, as in Flux.
const ControllerName = "helm-controller"

// valuesErrorReason is Flux's Ready reason when the values cannot be
// composed.
const valuesErrorReason = "ValuesError"

// Reconciler reconciles HelmRelease objects.
type Reconciler struct {
	// Client is the manager's cached client: HelmReleases and sources.
	Client client.Client
	// APIReader reads ConfigMaps and Secrets of valuesFrom uncached.
	APIReader client.Reader
	// Config is the controller's own rest.Config; Helm acts with it when
	// Clusters is nil.
	Config *rest.Config
	// Clusters resolves spec.serviceAccountName and spec.kubeConfig into
	// the rest.Config Helm acts with (clients.go).
	Clusters *restconfig.Resolver
	Events   *events.Recorder
	Metrics  *metrics.Recorder
	// Fetcher downloads artifacts; a default Fetcher when nil.
	Fetcher *artifact.Fetcher
	Options Options
	// Now is the clock; time.Now when nil.
	Now func() time.Time

	// Health, when set, parks install and upgrade waits: the release's
	// objects are judged through its watch cache and the worker is free
	// meanwhile (parked.go, WatchHealth). Nil waits in Helm's waiter.
	Health *healthwatch.Watcher

	// waits are the parked waits.
	waits parkedWaits
	// factories shares what Helm learns about a cluster between the
	// releases of one identity.
	factories release.Factories
}

// Options are the controller's flags and feature gates.
type Options struct {
	// RequeueDependency is --requeue-dependency: how soon a HelmRelease
	// waiting for its chart looks again, behind the watches.
	RequeueDependency time.Duration
	// NoCrossNamespaceRefs is --no-cross-namespace-refs.
	NoCrossNamespaceRefs bool
	// Jitter is --interval-jitter-percentage.
	Jitter float64
	// AllowExternalArtifact is the ExternalArtifact feature gate.
	AllowExternalArtifact bool
	// AdditiveCELDependencyCheck is the feature gate of that name: a
	// readyExpr adds to the built-in dependency check.
	AdditiveCELDependencyCheck bool
	// ConfigsSelector is --watch-configs-label-selector: a change to a
	// valuesFrom ConfigMap or Secret it matches queues the HelmRelease at
	// once (configwatch.go). Nil watches none.
	ConfigsSelector labels.Selector
	// UseHelm3Defaults, AllowDNSLookups, DefaultToRetryOnFailure and
	// DisableChartDigestTracking are the feature gates of those names.
	UseHelm3Defaults           bool
	AllowDNSLookups            bool
	DefaultToRetryOnFailure    bool
	DisableChartDigestTracking bool
}

// Reconcile runs the shared skeleton with this kind's phases.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	d := reconcile.Driver{Client: r.Client, Metrics: r.Metrics, Jitter: r.Options.Jitter, Now: r.Now}
	return reconcile.Run(ctx, d, req, &helmv2.HelmRelease{}, r.kind())
}

// record is one run of a HelmRelease. The release's own story (install,
// upgrade, test, rollback…) is the state machine's (run.drive), which
// records its events as it acts; the skeleton only needs to know whether
// the status could be read fresh.
type record struct {
	// refreshed is false when the fresh status could not be read: the run
	// then writes no status, the stale one would undo the last run's.
	refreshed bool
}

// kind is the HelmRelease as the skeleton runs it.
func (r *Reconciler) kind() reconcile.Kind[*helmv2.HelmRelease, *record] {
	return reconcile.Kind[*helmv2.HelmRelease, *record]{
		Name: helmv2.HelmReleaseKind,
		Conditions: reconcile.Conditions{Owned: []string{meta.ReadyCondition, meta.ReconcilingCondition,
			meta.StalledCondition, helmv2.ReleasedCondition, helmv2.TestSuccessCondition, helmv2.RemediatedCondition,
			helmv2.DriftedCondition}},
		Suspended: func(obj *helmv2.HelmRelease) bool { return obj.Spec.Suspend },
		Finalize:  r.finalize,
		Begin:     func(context.Context, *helmv2.HelmRelease) *record { return &record{} },
		Phases: []reconcile.Phase[*helmv2.HelmRelease, *record]{
			func(ctx context.Context, obj *helmv2.HelmRelease, out *record) error {
				if err := r.refresh(ctx, obj); err != nil {
					return err
				}
				out.refreshed = true
				if token, ok := meta.ReconcileAnnotationValue(obj.GetAnnotations()); ok {
					obj.Status.LastHandledReconcileAt = token
				}
				return nil
			},
			func(ctx context.Context, obj *helmv2.HelmRelease, _ *record) error { return r.reconcile(ctx, obj) },
		},
		Status: func(obj *helmv2.HelmRelease, out *record, err error) {
			if _, parked := errs.AsInProgress(err); parked {
				// A parked wait: the progress conditions stay. The
				// request was handled (the action ran; the progress patch
				// wrote its token), as before parking.
				return
			}
			if out.refreshed {
				finishStatus(obj, err)
			}
		},
	}
}

// refresh re-reads obj's status from the API server. The state machine's
// memory (failure counters, last attempted revision and values) lives in
// the status, and a reconcile queued while the previous one ran can start
// from a cache that has not seen that one's status yet: it would reset the
// counters and act again. Only the status is taken, so the skeleton's
// patch stays a diff of what this reconcile changed.
func (r *Reconciler) refresh(ctx context.Context, obj *helmv2.HelmRelease) error {
	if r.APIReader == nil {
		return nil
	}
	fresh := &helmv2.HelmRelease{}
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(obj), fresh); err != nil {
		return &errs.Generic{Err: fmt.Errorf("reading HelmRelease: %w", err), Reason: helmv2.ReconciliationFailedReason}
	}
	if fresh.UID == obj.UID {
		obj.Status = fresh.Status
	}
	return nil
}

// reconcile resolves the chart and values, then drives the release.
func (r *Reconciler) reconcile(ctx context.Context, obj *helmv2.HelmRelease) error {
	if err := r.checkDependencies(ctx, obj); err != nil {
		return err
	}
	chart, err := r.getChart(ctx, obj)
	if err != nil {
		return err
	}
	values, err := release.Values(ctx, r.APIReader, obj)
	if err != nil {
		return &errs.Generic{Err: err, Reason: valuesErrorReason}
	}
	if _, err := compileHealthExprs(obj); err != nil {
		return err
	}
	// After the chart and values are known good, so that a broken source
	// or a missing values Secret never uninstalls the running release.
	if err := r.moveTarget(ctx, obj, chart.chart.Name()); err != nil {
		return err
	}
	desired := release.Desired{
		ChartName:    chart.chart.Name(),
		ChartVersion: chart.chart.Metadata.Version,
		Revision:     chart.chart.Metadata.Version,
		OCIDigest:    chart.ociDigest,
		ConfigDigest: release.ValuesDigest(values),
	}
	release.ResetFailures(obj, desired)
	st := &obj.Status
	st.LastAttemptedGeneration = obj.Generation
	st.LastAttemptedRevision = desired.Revision
	st.LastAttemptedRevisionDigest = desired.OCIDigest
	st.LastAttemptedConfigDigest = desired.ConfigDigest
	st.LastAttemptedValuesChecksum = release.ValuesChecksum(values)
	st.StorageNamespace = obj.GetStorageNamespace()

	helm, err := r.helmClient(ctx, obj)
	if err != nil {
		return &errs.Generic{Err: fmt.Errorf("could not create Helm client: %w", err), Reason: helmv2.InitFailedReason}
	}
	run := &run{r: r, obj: obj, helm: helm, chart: chart, values: values, desired: desired}
	return run.drive(ctx)
}

// helmClient builds the Helm SDK client of obj's release.
func (r *Reconciler) helmClient(ctx context.Context, obj *helmv2.HelmRelease) (*release.Client, error) {
	cfg, err := r.restConfig(ctx, obj)
	if err != nil {
		return nil, err
	}
	return release.NewClient(cfg, release.Options{
		Name:             obj.GetReleaseName(),
		Namespace:        obj.GetReleaseNamespace(),
		StorageNamespace: obj.GetStorageNamespace(),
		MaxHistory:       obj.GetMaxHistory(),
		UseHelm3Defaults: r.Options.UseHelm3Defaults,
		AllowDNSLookups:  r.Options.AllowDNSLookups,
		Factories:        &r.factories,
	})
}
